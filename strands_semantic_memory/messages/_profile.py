"""Personal context: what a user says about themselves, found in their own words, and requests that need it.

Pure functions, no model. ``self_statements`` finds the sentences of a user's message in which the user states
something about themselves (``"I have an iPhone 13 Pro"``, ``"my daughter is allergic to nuts"``, ``"we moved to
Lyon last year"``, ``"i'm veggie these days"``), each returned verbatim, a substring of the message; a short reply to
the assistant's question about the user (``"What phone do you use?"`` -> ``"A Pixel 8."``) is a statement too, read
with that question. ``personal_request`` tells whether a request depends on the user (``"suggest accessories for my
phone"``, ``"what should I cook this weekend?"``, ``"plan a trip for us"``), so the hook brings their statements
even when the request resembles nothing archived; a request about the world (``"what is the capital of France"``)
has no such signal.

The statements are never invented or rewritten: the archive embeds each one beside its message's text (as extra
chunks of that message, see ``engine``), so forgetting the message forgets them, and the model is shown the user's
own sentence with the date it was said.
"""

from __future__ import annotations

import itertools
import re

from strands_semantic_memory.messages._terms import STOPWORDS, tokenize

__all__ = ["PROFILE_VERSION", "personal_request", "self_statements", "statement_parts"]

PROFILE_VERSION = 1
"""Changes whenever ``self_statements`` does (an archive's statement vectors are made by one version)."""

MAX_STATEMENTS = 16
"""At most this many statements of one message (a long message lists its first ones)."""

_SENTENCE = re.compile(r"[^.!?;\n]+(?:[.!?;]+|\n|$)")
_FIRST = r"(?:i|i'm|im|i've|ive|i'd|i'll|we|we're|we've|my|our|me|us|mine|ours)"
_SUBJECT = re.compile(rf"(?<![\w'])(?:{_FIRST})(?![\w'])", re.IGNORECASE)
_STATE = re.compile(
    r"(?<![\w'])(?:i|we)\s+(?:really\s+|also\s+|just\s+|now\s+|still\s+|usually\s+|always\s+|never\s+|often\s+|"
    r"recently\s+|finally\s+|actually\s+|do(?:n'?t)?\s+|can(?:'?t|not)?\s+|have\s+(?:been\s+|to\s+)?|am\s+|was\s+|"
    r"used\s+to\s+)*"
    r"(?:am|was|have|had|own|use|got|get|bought|buy|live|lived|moved|work|worked|study|studied|grow|grew|like|liked|"
    r"love|loved|enjoy|prefer|hate|dislike|avoid|eat|ate|drink|cook|play|run|ride|drive|speak|teach|travel|visit|"
    r"plan|planned|want|need|wear|keep|collect|follow|allergic|switched|started|stopped|quit|joined|adopted|"
    r"married|mean|went|go|take|took|read|watch|listen|make|built|build|paint|write|sing|garden|volunteer|"
    r"rent|bake|hike|swim|knit|fish|camp|ski|surf)\w*"
    r"|(?<![\w'])(?:i'm|im|i've|ive|i'd|we're|we've)(?![\w'])"
    r"|(?<![\w'])(?:my|our)\s+\w+",  # what the user has: "my iPhone 13 Pro keeps restarting", "our dog"
    re.IGNORECASE,
)
_ABOUT_YOU = re.compile(r"(?<![\w'])(?:you|your|yours|yourself)(?![\w'])", re.IGNORECASE)
_PERSONAL = re.compile(
    r"(?<![\w'])(?:my|our|mine|ours|for\s+(?:me|us)|(?:should|shall|would|must)\s+(?:i|we)|"
    r"(?:i|we)(?:\s+|(?='))(?:need|want|'d\s+like|would\s+like|should|could|can|have\s+to|am\s+planning|"
    r"'m\s+planning))(?![\w'])",
    re.IGNORECASE,
)
_REQUEST = re.compile(
    r"(?<![\w'])(?:suggest|recommend|plan|planning|ideas?|help\s+me|should\s+i|should\s+we|can\s+i|could\s+i|"
    r"for\s+me|for\s+us|for\s+my|for\s+our|what\s+(?:can|could|would|should)\s+(?:i|we)|i\s+(?:need|want|'d\s+like)|"
    r"give\s+me|find\s+me|pick|choose|gift|buy|cook|make|wear|read|watch|visit|try|get\s+me|advice|tips?|"
    r"options?|which|best)(?![\w'])",
    re.IGNORECASE,
)
_WORDS = re.compile(r"\w+")
_CONTENT_MIN = 2
"""A statement says something: at least this many terms beyond stopwords (``"I'm not sure"`` has one)."""


def self_statements(text: str, after: str | None = None) -> list[str]:
    """The sentences of a user's message that state something about the user, verbatim, in order.

    Args:
        text: The user's message (its searchable text).
        after: The assistant's message just before it, if known: a short reply to its question about the user is a
            statement as a whole.

    Returns:
        Substrings of ``text``, at most ``MAX_STATEMENTS``; empty when the message states nothing about the user.
    """
    found: list[str] = []
    for match in _SENTENCE.finditer(text):
        sentence = match.group(0).strip()
        if sentence.endswith("?"):
            continue  # a question states nothing ("What is my locker code?")
        if len(tokenize(sentence)) >= _CONTENT_MIN and _STATE.search(sentence):
            found.append(sentence)
            if len(found) == MAX_STATEMENTS:
                break
    if not found and after is not None:
        reply = text.strip()
        question = after.strip()
        asked = question.endswith("?") or "?" in question[-200:]
        if reply and asked and _ABOUT_YOU.search(question[-200:]) and len(_WORDS.findall(reply)) <= 25:
            found.append(reply)
    return found


_POSSESSION = re.compile(r"(?<![\w'])(my|our)\s+((?:[\w'-]+\s*){1,3})", re.IGNORECASE)
_CLAUSE = re.compile(r"\s*(?:,\s*(?:and|but|so)\s+|;\s*|\s+(?:and|but|so|because|while)\s+|,\s*)", re.IGNORECASE)


def statement_parts(sentence: str) -> list[str]:
    """What a statement is embedded as: the sentence and, when it joins several things, each clause on its own.

    Measured with the bundled model: "suggest accessories for my phone" is 0.15 from "I have an iPhone 13 Pro and
    it keeps dropping wifi." and 0.36 from its first clause alone.
    """
    clauses = [c.strip(" .!?") for c in _CLAUSE.split(sentence) if tokenize(c)]
    parts = [sentence, *clauses] if len(clauses) > 1 else [sentence]
    for found in _POSSESSION.finditer(sentence):  # what the user has, alone: "my iPhone 13 Pro"
        words = found.group(2).split()
        kept = list(itertools.takewhile(lambda w: w.lower().strip(".,!?;:") not in STOPWORDS, words))
        if kept:
            parts.append(f"{found.group(1)} {' '.join(kept)}".strip(" .,!?;:"))
    return list(dict.fromkeys(parts))


def personal_request(query: str) -> bool:
    """Whether a request depends on who asks: it speaks of what is the user's (``my``, ``for me``, ``should I``).

    A bare "help me" or "give me a list of ideas" is a request anyone could make, and gets nothing of the profile.
    """
    return bool(_PERSONAL.search(query))
