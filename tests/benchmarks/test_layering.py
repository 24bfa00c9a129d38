"""The benchmarks' folders, read from their import graph: each imports only from the folders below it.

Lowest first: ``data``, ``results``, ``measure``, ``report``, ``sections``, ``run``. The report renders a run's data
without measuring anything, and a measurement never formats a report; ``sections`` joins the two. A command's
``__main__`` module stands above every folder (``python -m benchmarks.report`` renders with the table of sections).
"""

import ast
from pathlib import Path

import benchmarks

ROOT = Path(benchmarks.__file__).parent
ORDER = ("data", "results", "measure", "report", "sections", "run")


def _part(module: str) -> str | None:
    """The folder or top-level module of ``benchmarks`` a dotted name belongs to (None: the package itself)."""
    parts = module.split(".")
    return parts[1] if parts[0] == "benchmarks" and len(parts) > 1 else None


def _imports(path: Path) -> list[tuple[str, int]]:
    """Every ``benchmarks`` module ``path`` imports, anywhere in it, resolved from relative imports."""
    module = ".".join(path.relative_to(ROOT.parent).with_suffix("").parts)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package
            for _ in range(max(0, node.level - 1)):
                base = base.rpartition(".")[0]
            name = (f"{base}.{node.module}" if node.module else base) if node.level else node.module or ""
            found.append((name, node.lineno))
    return [(name, line) for name, line in found if name.startswith("benchmarks")]


def test_no_folder_imports_one_above_it():
    upward = []
    for path in sorted(ROOT.rglob("*.py")):
        own = _part(".".join(path.relative_to(ROOT.parent).with_suffix("").parts))
        if own is None or path.name == "__main__.py":
            continue
        for name, line in _imports(path):
            target = _part(name)
            if target is not None and target != own and ORDER.index(target) > ORDER.index(own):
                upward.append(f"{path.relative_to(ROOT.parent)}:{line} imports {name}")
    assert not upward, "imports that go up:\n" + "\n".join(upward)


def test_every_folder_has_a_place():
    parts = {p.name if p.is_dir() else p.stem for p in ROOT.iterdir() if not p.name.startswith(("_", "."))}
    assert parts == set(ORDER)
