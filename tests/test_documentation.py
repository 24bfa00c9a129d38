"""The documentation stays true to the tree: every test it cites exists.

The code examples themselves run as tests through pytest-markdown-docs (``--markdown-docs`` in the pytest options).
"""

from __future__ import annotations

import re
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]
CITED_TEST = re.compile(r"(tests/[\w/]+\.py)::(\w+)")


def test_every_test_the_documentation_cites_exists() -> None:
    pages = [REPOSITORY / "README.md", *sorted((REPOSITORY / "docs").rglob("*.md"))]
    cited = {(page.name, *match) for page in pages for match in CITED_TEST.findall(page.read_text(encoding="utf-8"))}
    assert len(cited) >= 20  # the guarantees page cites the test behind each guarantee
    missing = [
        f"{page}: {path}::{name}"
        for page, path, name in sorted(cited)
        if not (REPOSITORY / path).is_file()
        or not re.search(rf"^(?:async )?def {name}\(", (REPOSITORY / path).read_text(encoding="utf-8"), re.MULTILINE)
    ]
    assert not missing, "tests cited by the documentation but not found:\n" + "\n".join(missing)
