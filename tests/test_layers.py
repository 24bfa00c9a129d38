"""The house's layering: each part imports only parts below it, at module level and inside functions alike."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "strands_semantic_memory"

LAYERS: dict[str, int] = {
    "errors": 0,
    "_telemetry": 0,
    "messages": 1,
    "embeddings": 2,
    "budget": 2,
    "archives": 3,
    "retrieval": 4,
    "engine": 5,
    "formatting": 5,
    "storage": 6,
    "tools": 6,
    "conversation_manager": 6,
    "hook": 7,
    "memory_store": 8,
    "context_editing": 8,
    "testing": 9,
    "cli": 9,
    "__main__": 10,
    "__init__": 10,
}
"""Bottom to top. A part may import a part of a lower number only (the root's ``__version__`` excepted)."""


def part_of(path: Path) -> str:
    return path.relative_to(PACKAGE).with_suffix("").parts[0]


def imported_parts(path: Path) -> set[tuple[str, int]]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == PACKAGE.name:
            parts = node.module.split(".")
            names = [alias.name for alias in node.names] if len(parts) == 1 else [parts[1]]
            found |= {(name, node.lineno) for name in names if name != "__version__"}
        elif isinstance(node, ast.Import):
            found |= {(a.name.split(".")[1], node.lineno) for a in node.names if a.name.startswith(PACKAGE.name + ".")}
    return found


def test_every_part_has_a_layer() -> None:
    parts = {part_of(path) for path in PACKAGE.rglob("*.py")}
    assert parts == set(LAYERS), (
        f"parts without a layer: {parts - set(LAYERS)}; layers without a part: {set(LAYERS) - parts}"
    )


def test_no_import_climbs_a_layer() -> None:
    climbs = []
    for path in sorted(PACKAGE.rglob("*.py")):
        part = part_of(path)
        for target, line in imported_parts(path):
            if target != part and LAYERS.get(target, 99) >= LAYERS[part]:
                climbs.append(f"{path.relative_to(PACKAGE.parent)}:{line} ({part}) imports {target}")
    assert not climbs, "\n".join(climbs)


def test_the_check_finds_a_climb(tmp_path: Path) -> None:
    module = tmp_path / "probe.py"
    module.write_text("def f():\n    from strands_semantic_memory.hook import SemanticMemoryHook\n", encoding="utf-8")
    assert ("hook", 2) in imported_parts(module)
