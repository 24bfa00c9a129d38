"""The README, the site's front page and the guides agree on what is archived by default: every message, as it is added.

Archiving only what leaves the context is the conversation manager's ``archive_when="leaving"``; a page may describe
that option (a sentence that names ``"leaving"``), never present it as what the library does.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[1]
README = REPOSITORY / "README.md"
FRONT_PAGE = REPOSITORY / "docs" / "index.md"
PAGES = [
    README,
    FRONT_PAGE,
    *sorted((REPOSITORY / "docs" / "guides").glob("*.md")),
    *sorted((REPOSITORY / "docs" / "concepts").glob("*.md")),
    REPOSITORY / "docs" / "troubleshooting.md",
]

# Archiving described as happening when a message leaves the context: "archives every message that leaves the
# context", "the manager archives only messages that leave the context", "the archive holds every message that left
# the agent's active context", "messages leaving the context window", ... (an archive that would hold only what
# left the context, in a comparison, is not archiving described)
LEAVING_AS_DEFAULT = re.compile(
    r"\b(?:archives|archived|archiving|archive holds)\b[^.;:]{0,60}?"
    r"\b(?:that|what|which|when it|when they)\s+(?:leaves?|left)\s+"
    r"(?:the\s+)?(?:agent's\s+)?(?:active\s+)?(?:context|window)"
    r"|\b(?:messages?|what)\s+leaving\s+the\s+(?:active\s+)?(?:context|window)"
    r"|\barchived verbatim, before the summary",
    re.IGNORECASE,
)
# A sentence that names the option describes it.
NAMES_THE_OPTION = re.compile(r"""["']leaving["']""")
SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n\s*\n|^```", re.MULTILINE)
MERMAID = re.compile(r"^```mermaid\n(.*?)^```", re.MULTILINE | re.DOTALL)


def _sentence(text: str, start: int, end: int) -> str:
    """The sentence (or paragraph, or fence) around ``text[start:end]``."""
    before = [m.end() for m in SENTENCE_END.finditer(text, 0, start)]
    after = SENTENCE_END.search(text, end)
    return text[before[-1] if before else 0 : after.start() if after else len(text)]


def _flat(text: str) -> str:
    return " ".join(text.split())


def _leaving_as_default(text: str) -> list[tuple[int, str]]:
    """Each line and sentence of ``text`` that describes archiving on leaving without naming the option."""
    found = []
    for match in LEAVING_AS_DEFAULT.finditer(text):
        sentence = _sentence(text, match.start(), match.end())
        if not NAMES_THE_OPTION.search(sentence):
            found.append((text.count("\n", 0, match.start()) + 1, _flat(sentence)))
    return found


def test_the_pages_exist() -> None:
    missing = [str(page.relative_to(REPOSITORY)) for page in PAGES if not page.is_file()]
    assert not missing, f"pages this test reads are missing: {missing}"
    assert len(PAGES) > 10  # the guides and the concepts were found


def test_the_check_catches_the_old_wording_and_lets_the_option_be_described() -> None:
    old = (
        "This library archives every message\nthat leaves the context **verbatim**, and indexes it.\n\n"
        "```mermaid\n"
        '    agent -- "messages leaving the context window" --> manager\n'
        '    manager -- "archived verbatim, before the summary" --> archive\n'
        "```\n"
        "It is read-only by default, because the manager already archives what leaves the context; and so on.\n"
        "A read-only store needs no such check: the manager archives only\nmessages that leave the context.\n"
        "The archive holds every message that left the agent's active context, exactly as it was.\n"
    )
    assert [line for line, _ in _leaving_as_default(old)] == [1, 5, 6, 8, 9, 11]
    described = (
        'archive_when="added",  # archive every message as it is added; "leaving": only what leaves the context\n'
        "Every message is archived byte for byte before it leaves the context.\n"
        '`archive_when="leaving"` archives a message only\nwhen it leaves the window.\n'
        "The hits a search of an archive holding only what left the context would find.\n"
    )
    assert _leaving_as_default(described) == []


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(REPOSITORY)))
def test_no_page_says_messages_are_archived_only_when_they_leave_the_context(page: Path) -> None:
    wrong = [
        f"{page.relative_to(REPOSITORY)}:{line}: {sentence}"
        for line, sentence in _leaving_as_default(page.read_text(encoding="utf-8"))
    ]
    assert not wrong, (
        'archiving when a message leaves the context is archive_when="leaving", not the default (every message is '
        "archived as it is added); name the option or describe the default:\n" + "\n".join(wrong)
    )


@pytest.mark.parametrize("page", [README, FRONT_PAGE], ids=["README.md", "docs/index.md"])
def test_the_readme_and_the_front_page_say_every_message_is_archived_as_it_is_added(page: Path) -> None:
    text = _flat(page.read_text(encoding="utf-8"))
    assert "as it is added" in text, f"{page.relative_to(REPOSITORY)} does not say messages are archived as added"


def test_the_front_page_has_the_readmes_diagram() -> None:
    readme = MERMAID.findall(README.read_text(encoding="utf-8"))
    front = MERMAID.findall(FRONT_PAGE.read_text(encoding="utf-8"))
    assert readme, "README.md has no mermaid diagram"
    assert front == readme[:1], "docs/index.md's diagram differs from README.md's first one"


TEST_REFERENCE = re.compile(r"`(tests/[\w/]+\.py)::(\w+)`")


def test_every_test_the_pages_name_exists() -> None:
    """A page that says "checked by tests/x.py::test_y" names a test that is there (README, every docs page)."""
    pages = [README, *sorted((REPOSITORY / "docs").rglob("*.md"))]
    missing = []
    for page in pages:
        for path, name in TEST_REFERENCE.findall(page.read_text(encoding="utf-8")):
            source = REPOSITORY / path
            if not source.exists() or not re.search(rf"^(?:async )?def {name}\(", source.read_text(), re.MULTILINE):
                missing.append(f"{page.relative_to(REPOSITORY)}: {path}::{name}")
    assert not missing, "\n".join(missing)
