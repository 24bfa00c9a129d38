"""The package's layers, read from its own import graph: no import goes up a layer, and no module imports itself.

Every module of the package is parsed with ``ast`` and every import it makes is taken, wherever it stands: at the
top, inside a function (a lazy import) or under ``if TYPE_CHECKING:``. An import names the most specific module it
reaches (``from pkg import _mod`` is an import of ``pkg._mod``); the parent packages Python initializes on the way
are not counted, as every submodule would otherwise import its own package.

The layers, lowest first (an import may go to its own layer or a lower one):

1. ``errors``, ``_validation``, ``messages``, ``_telemetry``: the exceptions, argument checks, the message codec;
2. ``embeddings``: text to vectors (with ``CheckedEmbedder``, the engine's checked, caching embedder);
3. ``archives``: where a memory keeps its messages, and the base score the archives share with the ranking;
4. ``retrieval``: one query in, ranked hits and passages out;
5. ``engine``: ``SemanticMemory``;
6. ``formatting`` and ``budget``: what the model reads, and how the model's window is shared;
7. the Strands adapters, in a fixed order in which each may import only those before it: ``tools``,
   ``context_editing`` (the editor's tools), ``storage``, ``memory_store`` (its tools), ``hook`` (a storage's
   turn scope), ``conversation_manager`` (the hook it pairs with), ``testing``;
8. the root ``__init__``; 9. ``cli`` and ``__main__`` (``python -m strands_semantic_memory`` runs the command line).

Run this file alone to check a change: ``python -m pytest tests/test_layering.py``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

import strands_semantic_memory

PACKAGE = "strands_semantic_memory"
ROOT = Path(strands_semantic_memory.__file__).parent

LAYERS: dict[str, int] = {
    "errors": 1,
    "_validation": 1,
    "messages": 1,
    "_telemetry": 1,
    "embeddings": 2,
    "archives": 3,
    "retrieval": 4,
    "engine": 5,
    "formatting": 6,
    "budget": 6,
    "tools": 7,
    "context_editing": 7,
    "storage": 7,
    "memory_store": 7,
    "hook": 7,
    "conversation_manager": 7,
    "testing": 7,
    "": 8,  # the root __init__
    "cli": 9,
    "__main__": 9,  # python -m strands_semantic_memory: the command line
}
"""The layer of each top-level module or subpackage of the package."""

ADAPTERS = ("tools", "context_editing", "storage", "memory_store", "hook", "conversation_manager", "testing")
"""Layer 7 in its fixed order: an adapter may import only the adapters before it."""


def module_files() -> dict[str, Path]:
    """Every module of the package by its dotted name (a package by its ``__init__.py``)."""
    modules = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


MODULES = module_files()


def _imported_names(module: str, tree: ast.AST) -> Iterator[tuple[str, int]]:
    """``(dotted name, line)`` of every module of the package that ``tree`` imports, wherever the import stands."""
    is_package = MODULES[module].name == "__init__.py"
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module if is_package else module.rpartition(".")[0]
                for _ in range(node.level - 1):
                    base = base.rpartition(".")[0]
                source = f"{base}.{node.module}" if node.module else base
            else:
                source = node.module or ""
            for alias in node.names:
                yield (f"{source}.{alias.name}" if f"{source}.{alias.name}" in MODULES else source), node.lineno


def _resolve(name: str) -> str | None:
    """The package's module that an import of ``name`` reaches (its longest prefix that is a module), if any."""
    if name != PACKAGE and not name.startswith(PACKAGE + "."):
        return None
    while name not in MODULES:
        name = name.rpartition(".")[0]
    return name


def import_graph() -> dict[str, dict[str, int]]:
    """Module -> {imported module of the package: line of the first such import}."""
    graph: dict[str, dict[str, int]] = {}
    for module, path in MODULES.items():
        edges: dict[str, int] = {}
        for name, line in _imported_names(module, ast.parse(path.read_text(encoding="utf-8"), str(path))):
            target = _resolve(name)
            if target is not None and target != module:
                edges.setdefault(target, line)
        graph[module] = edges
    return graph


def folder(module: str) -> str:
    """The top-level module or subpackage ``module`` belongs to ("" for the root ``__init__``)."""
    return module.split(".")[1] if "." in module else ""


def rank(module: str) -> tuple[int, int]:
    """Where ``module`` stands: its layer, then its place among the adapters."""
    name = folder(module)
    return LAYERS[name], ADAPTERS.index(name) if name in ADAPTERS else 0


def upward_imports(graph: dict[str, dict[str, int]]) -> list[str]:
    """Every import from a module to one of a higher layer (or a later adapter), as ``file:line -> module``."""
    found = []
    for module, edges in graph.items():
        for target, line in edges.items():
            if folder(target) != folder(module) and rank(target) > rank(module):
                where = f"{MODULES[module].relative_to(ROOT.parent)}:{line}"
                found.append(f"{where} imports {target} (layer {rank(target)} above {rank(module)})")
    return sorted(found)


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(graph[start]))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            advanced = False
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = counter
                    counter += 1
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(graph[successor])))
                    advanced = True
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    return components


def test_every_folder_has_a_layer():
    unknown = sorted({folder(m) for m in MODULES} - set(LAYERS))
    assert not unknown, f"give these a layer in LAYERS (and a place in ADAPTERS for a Strands adapter): {unknown}"


def test_no_import_goes_up_a_layer():
    upward = upward_imports(import_graph())
    assert not upward, "imports that go up a layer:\n" + "\n".join(upward)


def test_no_module_imports_itself_through_others():
    found = cycles(import_graph())
    assert not found, "import cycles:\n" + "\n".join(" -> ".join(c) for c in found)


def test_the_graph_sees_lazy_and_type_checking_imports():
    """The reading itself: a function-level import and one under TYPE_CHECKING both count."""
    graph = import_graph()
    assert "strands_semantic_memory.archives.sqlite" in graph["strands_semantic_memory.archives"], "lazy, in a function"
    type_checking = "strands_semantic_memory.context_editing"
    assert type_checking in graph["strands_semantic_memory"], "under TYPE_CHECKING at the root"
    assert (
        "strands_semantic_memory.archives.postgres._reads"
        in graph["strands_semantic_memory.archives.postgres._archive"]
    )
    assert (
        "strands_semantic_memory.archives.postgres" not in graph["strands_semantic_memory.archives.postgres._archive"]
    )


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from strands_semantic_memory.engine import SemanticMemory", "engine"),
        ("def f():\n    from strands_semantic_memory import hook", "hook"),
        ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..budget import ContextBudget", "budget"),
    ],
)
def test_an_upward_import_anywhere_in_a_module_is_found(source, expected):
    module = "strands_semantic_memory.retrieval._passages"
    names = [_resolve(name) for name, _ in _imported_names(module, ast.parse(source))]
    assert any(n is not None and folder(n) == expected and rank(n) > rank(module) for n in names)
