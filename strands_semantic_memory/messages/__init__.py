"""Messages as the archive keeps them: the exact byte codec, the text that is searched, and its terms.

Modules: ``_codec`` (a Strands message to exact bytes and back; record keys and sizes), ``_text`` (the text a
message is embedded and shown as; chunks of long text), ``_terms`` (the BM25 terms every archive indexes), ``_time``
(times as seconds since the epoch: when a message was said, the bounds of a search).
"""

from strands_semantic_memory.messages._codec import decode_message, encode_message
from strands_semantic_memory.messages._terms import TOKENIZER_VERSION, count_terms, tokenize
from strands_semantic_memory.messages._text import render_message

__all__ = ["TOKENIZER_VERSION", "count_terms", "decode_message", "encode_message", "render_message", "tokenize"]
