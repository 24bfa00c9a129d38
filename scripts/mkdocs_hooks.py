"""MkDocs hooks: fences marked for pytest-markdown-docs render as plain Python; diagrams need the local mermaid.

The examples in ``docs/`` are tests (``pytest --markdown-docs``), and a fence may carry the plugin's options after
the language (```` ```python notest ````, ``continuation``, ``fixture:<name>``, ``retry:<n>``). GitHub ignores
words after the language; MkDocs' SuperFences does not recognise such a fence at all, so the options are removed
from the page before it is rendered. Nothing else on the page changes.

A page with a mermaid diagram loads the copy of mermaid that ``scripts/vendor_mermaid.py`` puts into
``docs/assets/vendor/mermaid/`` (``overrides/main.html``); without it the diagram would need Material's CDN, so the
build stops and says how to fetch it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError

_FENCE = re.compile(r"^(?P<head>[ \t]*(?:`{3,}|~{3,})(?:python3|python|py))(?P<options>[ \t]+[^\n`]*)$", re.MULTILINE)
_TEST_OPTION = re.compile(r"^(?:notest|continuation|fixture:\S+|retry:\d+|runner:\S+)$")
_MERMAID = Path("assets", "vendor", "mermaid", "mermaid.min.js")


def _strip(match: re.Match[str]) -> str:
    kept = [word for word in match.group("options").split() if not _TEST_OPTION.match(word)]
    return " ".join([match.group("head"), *kept])


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    """Remove pytest-markdown-docs' options from the Python fences of a page."""
    return _FENCE.sub(_strip, markdown)


def on_post_page(output: str, *, page: Any, config: Any) -> str:
    """Stop the build when a page has a diagram and the local mermaid is missing."""
    if 'class="mermaid"' in output and not (Path(config["docs_dir"]) / _MERMAID).is_file():
        raise PluginError(
            f"{page.file.src_uri} has a mermaid diagram and docs/{_MERMAID.as_posix()} is missing: "
            "run python scripts/vendor_mermaid.py (bash scripts/docs.sh does)"
        )
    return output
