"""The package's imports follow the pipeline: a stage imports only the stages before it, the exact and LSH
halves never import each other, no stage imports the wiring, the commands or the engines, packages form no
cycle, and no private name is taken across packages. Every import counts, a lazy one inside a function too.
The layers are written out here once; docs/design.md describes the same tree."""
from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "allpairs"

#: Top-level packages (and modules) of allpairs, lowest first. A package may import its own layer's other
#: members only where the entry says so (none do), and any lower layer.
LAYERS = [
    ("errors",),                         # the few exceptions
    ("_plural", "_exports", "_children"),  # counts in words; names imported on first use; which children outlive a run
    ("_kernels",),                       # how kernels are built and run; CSR helpers
    ("output",),                         # every file written: atomic replace, escapers, table writers
    ("corpus",),                         # (1) documents
    ("shingles",),                       # (2) texts -> shingle keys
    ("order",),                          # (3) the global order, identical sets grouped
    ("measures",),                       # threshold algebra
    ("verify",),                         # (5) merge with early exit, shared by 4a, 4b and the index
    ("exact", "lsh"),                    # (4a) prefix filter, (4b) MinHash + bands: never each other
    ("pairs",),                          # (6) the result type, clusters, ranked results
    ("pipeline",),                       # the wiring: join() and its stages in order
    ("report", "index", "compat"),       # built on the wiring: compare, the saved index, SetSimilaritySearch
    ("engines",),                        # the same kernels in Spark tasks
    ("cli",),                            # one module per command
    ("__init__", "__main__", "spark"),   # the public faces
]
RANK = {name: k for k, layer in enumerate(LAYERS) for name in layer}


def _module_name(path: Path) -> str:
    parts = ("allpairs",) + path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1]) if parts[-1] == "__init__" else ".".join(parts)


def _submodule(package: str, name: str) -> str | None:
    """``package.name`` when that is a module or package of allpairs (``from .. import shingles``), else None."""
    where = PACKAGE.joinpath(*package.split(".")[1:], name)
    return f"{package}.{name}" if where.with_suffix(".py").exists() or (where / "__init__.py").exists() else None


def _imports() -> list[tuple[str, str, str | None, int]]:
    """(importing module, imported module, imported name or None, line) for every allpairs import."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                if target == "allpairs" or target.startswith("allpairs."):
                    found += [(module, _submodule(target, alias.name) or target, alias.name, node.lineno)
                              for alias in node.names]
            elif isinstance(node, ast.Import):
                found += [(module, alias.name, None, node.lineno) for alias in node.names
                          if alias.name == "allpairs" or alias.name.startswith("allpairs.")]
    return found


def _top(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


IMPORTS = _imports()


def test_every_part_of_the_package_has_a_layer():
    tops = {_top(_module_name(p)) for p in PACKAGE.rglob("*.py")}
    assert tops <= set(RANK), f"give these a layer in LAYERS: {sorted(tops - set(RANK))}"


def test_no_stage_imports_a_later_stage_or_a_peer():
    wrong = [f"{a}:{line} imports {b}" for a, b, name, line in IMPORTS
             if _top(a) != _top(b) and RANK[_top(b)] >= RANK[_top(a)]
             and not (_top(b) == "__init__" and name is not None and name.startswith("__"))]
    assert not wrong, "imports against the pipeline:\n" + "\n".join(wrong)


def test_the_packages_form_no_cycle():
    graph = defaultdict(set)
    for a, b, _, _ in IMPORTS:
        if _top(a) != _top(b) and _top(b) != "__init__":
            graph[_top(a)].add(_top(b))
    state: dict[str, int] = {}

    def visit(node, path):
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                pytest.fail("a cycle of imports: " + " -> ".join(path + [node, nxt]))
            if nxt not in state:
                visit(nxt, path + [node])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [])


def test_no_private_name_is_taken_across_packages():
    wrong = [f"{a}:{line} takes {b}.{name}" for a, b, name, line in IMPORTS
             if name and name.startswith("_") and not name.startswith("__") and _top(a) != _top(b)]
    assert not wrong, "private names taken across packages:\n" + "\n".join(wrong)


def test_the_library_never_imports_the_command_line_toolkit():
    # typer and rich belong to cli/ (and __main__); the library takes a progress callback instead.
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        if _top(module) in ("cli", "__main__"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
            wrong += [f"{module}:{node.lineno} imports {n}" for n in names if n.split(".")[0] in ("typer", "rich", "click")]
    assert not wrong, "\n".join(wrong)


#: A module small enough to hold in one's head: a few hundred lines, one reason to change.
MAX_LINES = 600

#: Modules allowed above MAX_LINES, each with its reason (none today).
LONGER: dict[str, str] = {}


def test_no_module_is_longer_than_a_reader_can_hold():
    long = {_module_name(p): n for p in sorted(PACKAGE.rglob("*.py"))
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    wrong = [f"{m}: {n:,} lines" for m, n in long.items() if m not in LONGER]
    assert not wrong, f"modules over {MAX_LINES} lines; split them along their seams:\n" + "\n".join(wrong)
    assert not set(LONGER) - set(long), "LONGER names a module that is short now: drop it"


def test_the_layer_check_sees_a_violation():
    # The check itself: an import of the wiring from a stage, and a private name across packages, are caught.
    a, b = "allpairs.order", "allpairs.pipeline.run"
    assert RANK[_top(b)] >= RANK[_top(a)]
    assert any(_top(m) == "pipeline" for _, m, _, _ in IMPORTS), "the parser found no import of the wiring at all"


def test_every_module_of_the_package_imports_and_has_every_name_it_imports():
    # A merge left the Spark engine importing cell_text from a module that no longer re-exported it:
    # only the Spark tests would have seen it, and only by failing at collection.
    import importlib
    import importlib.util

    skipped = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        if parts[-1] == "__main__":
            continue
        if "spark" in parts and importlib.util.find_spec("pyspark") is None:
            skipped.append(name)
            continue
        importlib.import_module(name)
    assert len(skipped) < 20, skipped
