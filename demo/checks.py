"""The demo's checks, pure functions. Each says what it compared and whose job that was.

The library's checks compare exactly (the archive and the hook keep the user's words as written) and decide the exit
status. The model's (its summary, its answer) compare letters and digits only, ignoring case and punctuation, as a
model may write "ref 56969-n92." for REF-56969-N92; they are reported, never a failure of the demo.
"""

import random
import re
import string
from dataclasses import dataclass


def reference_number(seed: int | None) -> str:
    """A reference like ``REF-56969-N92``, the same for the same seed."""
    rng = random.Random(seed)
    return f"REF-{rng.randint(10000, 99999)}-{rng.choice(string.ascii_uppercase)}{rng.randint(10, 99)}"


def mentions(text: str, reference: str) -> bool:
    """Whether ``text`` holds ``reference`` whole, ignoring case and any punctuation or spaces between its parts
    ("ref 56969 n92." holds REF-56969-N92; "REF-56969-N9" and "REF-56969-N923" do not)."""
    parts = r"[\W_]*".join(re.findall(r"[0-9A-Za-z]+", reference))
    return re.search(rf"(?<![0-9A-Za-z]){parts}(?![0-9A-Za-z])", text, re.IGNORECASE) is not None


@dataclass(frozen=True)
class Check:
    name: str
    who: str  # "the library" or "the model"
    passed: bool
    says: str

    def line(self) -> str:
        return f"RESULT {f'{self.name} ({self.who}):':<25} {'ok' if self.passed else 'NO'}, {self.says}"


def archived(count: int, expected: int, found: list[int], reference: str) -> Check:
    """Session 1 in the archive file: every message, the planted one word for word."""
    where = f"{reference} is in message {found[0]}" if found else f"no message contains {reference}"
    says = f"the archive file holds {count} of session 1's {expected} messages; {where}"
    return Check("archive", "the library", count == expected and bool(found), says)


def summarized(summaries: list[str], in_context: bool, reference: str) -> Check:
    """Session 1's summaries, and whether the planted number was still in its context at the end."""
    if not summaries:
        return Check("summary", "the model", False, "none was made: the history never outgrew its share (--turns)")
    kept = [s for s in summaries if mentions(s, reference)]
    said = f"{len(kept)} of {len(summaries)} summaries mention {reference}; "
    return Check("summary", "the model", True, said + f"it is {'still' if in_context else 'no longer'} in the context")


def retrieved(injected: str, reference: str) -> Check:
    """Session 2: the context the hook added to the question holds the planted number, exactly."""
    found = bool(injected) and reference in injected
    says = f"{reference} is {'' if found else 'not '}in the context the hook added to session 2's question"
    return Check("retrieval", "the library", found, says if injected else "the hook added nothing to the question")


def answered(reply: str, reference: str) -> Check:
    """The model's reply in session 2 mentions the planted number."""
    found = mentions(reply, reference)
    says = f"the reply {'mentions' if found else 'does not mention'} {reference} (case and punctuation ignored)"
    return Check("answer", "the model", found, says)


def exit_status(checks: list[Check]) -> int:
    """0 when every check of the library held, else 1 (the model's checks are reported only)."""
    return 0 if all(c.passed for c in checks if c.who == "the library") else 1
