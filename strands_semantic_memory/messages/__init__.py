"""Messages as the archive keeps them: the exact byte codec, the text that is searched, its terms, sessions, times.

- ``_codec``: exact JSON bytes, the idempotency key, the digest a forgotten message leaves;
- ``_text``: the searchable text of a message and its chunks;
- ``_terms``: the lexical terms (stopwords, stems, compounds);
- ``_session``: user and session ids, and who recalls what;
- ``_time``: times as callers give them.
"""

from strands_semantic_memory.messages._codec import decode_message, encode_message
from strands_semantic_memory.messages._terms import tokenize
from strands_semantic_memory.messages._text import chunk_text, render_message

__all__ = ["chunk_text", "decode_message", "encode_message", "render_message", "tokenize"]
