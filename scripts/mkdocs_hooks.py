"""MkDocs hook: fences marked for pytest-markdown-docs render as plain Python.

The examples in ``docs/`` are tests (``pytest --markdown-docs``), and a fence may carry the plugin's options after
the language (```` ```python notest ````, ``continuation``, ``fixture:<name>``, ``retry:<n>``). GitHub ignores
words after the language; MkDocs' SuperFences does not recognise such a fence at all, so the options are removed
from the page before it is rendered. Nothing else on the page changes.
"""

from __future__ import annotations

import re
from typing import Any

_FENCE = re.compile(r"^(?P<head>[ \t]*(?:`{3,}|~{3,})(?:python3|python|py))(?P<options>[ \t]+[^\n`]*)$", re.MULTILINE)
_TEST_OPTION = re.compile(r"^(?:notest|continuation|fixture:\S+|retry:\d+|runner:\S+)$")


def _strip(match: re.Match[str]) -> str:
    kept = [word for word in match.group("options").split() if not _TEST_OPTION.match(word)]
    return " ".join([match.group("head"), *kept])


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    """Remove pytest-markdown-docs' options from the Python fences of a page."""
    return _FENCE.sub(_strip, markdown)
