"""The package's shape holds: no import circles among tokreg's modules, nothing imports a layer
above its own (DESIGN.md's diagram, as data below), each wing imports only the wings it names and
training/ and encoding/ nothing from store/, every query built under tokreg/store/, no branching
on an algorithm's name outside tokreg/algorithms/, and a function-local import only where a
comment says why (a heavy or optional dependency deferred)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "tokreg"


def _modules() -> dict[str, Path]:
    out = {}
    for p in PACKAGE.rglob("*.py"):
        parts = p.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = p
    out["tokreg._core"] = PACKAGE / "_core.pyi"
    return out


MODULES = _modules()


def _targets(module: str, node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name in MODULES]
    base = module.split(".")
    if node.level:
        if MODULES[module].name != "__init__.py":
            base = base[:-1]
        base = base[: len(base) - (node.level - 1)]
        prefix = ".".join(base + ([node.module] if node.module else []))
    else:
        prefix = node.module or ""
    found = []
    for a in node.names:
        if f"{prefix}.{a.name}" in MODULES:
            found.append(f"{prefix}.{a.name}")
        elif prefix in MODULES:
            found.append(prefix)
    return found


def _imports(every: bool = False) -> tuple[dict[str, set[str]], list[tuple[str, int]]]:
    """(module -> tokreg modules it imports at load time, or with `every` also inside functions and
    for the type checker; [(module, line) of function-local imports])."""
    edges: dict[str, set[str]] = {m: set() for m in MODULES}
    local: list[tuple[str, int]] = []
    for module, path in MODULES.items():
        if path.suffix != ".py":
            continue

        def visit(node: ast.AST, in_function: bool, module: str = module) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.Import, ast.ImportFrom)):
                    if in_function:
                        local.append((module, child.lineno))
                    if every or not in_function:
                        edges[module].update(t for t in _targets(module, child) if t.startswith("tokreg"))
                elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    visit(child, True)
                elif isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                    if every:  # imports for the type checker only
                        visit(child, in_function)
                else:
                    visit(child, in_function)

        visit(ast.parse(path.read_text(encoding="utf-8")), False)
    return edges, local


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or v in edges[v]:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            connect(v)
    return found


def test_no_import_circles() -> None:
    edges, _ = _imports()
    assert _cycles(edges) == []


def test_the_checker_sees_a_circle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [["a", "b", "c"]]


# DESIGN.md's layers, top to bottom: a module imports its own layer or the layers below, never
# one above. "tokreg" is tokreg/__init__.py, the public API. The shared modules at the bottom are
# the plain values and rules every layer uses; a module in no layer is a new one at the top of
# tokreg/, which should find a wing (or a layer) first.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("faces", ("tokreg", "tokreg.__main__", "tokreg.console", "tokreg.cli", "tokreg.serve")),
    ("front doors", ("tokreg.registry", "tokreg.loading")),
    ("wings", ("tokreg.training", "tokreg.encoding", "tokreg.versions", "tokreg.evaluation", "tokreg.datasets")),
    ("algorithms", ("tokreg.algorithms",)),
    ("formats", ("tokreg.formats",)),
    ("store", ("tokreg.store",)),
    (
        "shared",
        (
            "tokreg.errors",
            "tokreg.data",
            "tokreg.stored",
            "tokreg.content",
            "tokreg.files",
            "tokreg.patterns",
            "tokreg.package_version",
            "tokreg.lazy",
        ),
    ),
    ("core", ("tokreg._core",)),
]

# wing -> the other wings it may import (each wing's __init__.py says the same). A wing missing
# here must first say what it may import.
WINGS: dict[str, set[str]] = {
    "training": {"encoding"},
    "encoding": set(),
    "versions": {"encoding", "training", "evaluation", "datasets"},
    "evaluation": {"encoding", "training"},
    "datasets": {"encoding", "training"},
}

# The wings that know no database: they are handed values read from the store.
NO_STORE = ("training", "encoding")


def _layer(module: str) -> int | None:
    """The index in LAYERS of `module`'s layer (None: in no layer)."""
    for n, (_, members) in enumerate(LAYERS):
        for m in members:
            if module == m or (m != "tokreg" and module.startswith(m + ".")):
                return n
    return None


def _layer_name(module: str) -> str | None:
    n = _layer(module)
    return LAYERS[n][0] if n is not None else None


def _wing(module: str) -> str | None:
    """ "training" for tokreg.training.train_run; None outside the wings."""
    return module.split(".")[1] if _layer_name(module) == "wings" else None


def _violations(edges: dict[str, set[str]]) -> list[str]:
    """Every import that breaks the layers or the wing rules, as "importer -> imported: why"."""
    found = []
    for module in sorted(edges):
        here, wing = _layer(module), _wing(module)
        if here is None:
            found.append(f"{module}: in no layer of LAYERS")
            continue
        if wing is not None and wing not in WINGS:
            found.append(f"{module}: wing {wing} has no entry in WINGS")
        for target in sorted(edges[module]):
            there, other = _layer(target), _wing(target)
            if there is not None and there < here:
                found.append(f"{module} -> {target}: up, from {LAYERS[here][0]} to {LAYERS[there][0]}")
            if wing in NO_STORE and _layer_name(target) == "store":
                found.append(f"{module} -> {target}: {wing}/ knows no database")
            if wing is not None and other is not None and other != wing and other not in WINGS.get(wing, set()):
                found.append(f"{module} -> {target}: {wing}/ may not import {other}/")
    return found


def test_nothing_imports_up_and_the_wings_keep_their_rules() -> None:
    # Every import counts here: inside functions and for the type checker too.
    edges, _ = _imports(every=True)
    assert _violations(edges) == []


def test_the_checker_sees_imports_that_break_the_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(WINGS, "datasets")  # as if the wing had not yet said what it may import
    edges = {
        "tokreg.cli.app": {"tokreg.registry", "tokreg.store.refs", "tokreg.serve.app"},  # down and across: fine
        "tokreg.store.refs": {"tokreg.registry"},  # the store calling a front door
        "tokreg.formats.hf_json": {"tokreg.algorithms.base"},  # formats are below the algorithms
        "tokreg.training.train_run": {"tokreg.store.writer", "tokreg.encoding.tokenizer"},
        "tokreg.encoding.tokenizer": {"tokreg.versions.diff", "tokreg.errors"},
        "tokreg.versions.diff": {"tokreg.evaluation.evaluate", "tokreg.store.reads"},  # both allowed
        "tokreg.datasets.shards": set(),
        "tokreg.stray": set(),
    }
    assert _violations(edges) == [
        "tokreg.datasets.shards: wing datasets has no entry in WINGS",
        "tokreg.encoding.tokenizer -> tokreg.versions.diff: encoding/ may not import versions/",
        "tokreg.formats.hf_json -> tokreg.algorithms.base: up, from formats to algorithms",
        "tokreg.store.refs -> tokreg.registry: up, from store to front doors",
        "tokreg.stray: in no layer of LAYERS",
        "tokreg.training.train_run -> tokreg.store.writer: training/ knows no database",
    ]


def test_the_wings_import_each_other_without_circles() -> None:
    assert _cycles(WINGS) == []


def test_a_wing_package_imports_nothing() -> None:
    # Importing tokreg.versions.lockfile runs tokreg/versions/__init__.py first: a wing's
    # __init__.py is its docstring only, so reaching one module never loads the rest of its wing.
    for wing in [*WINGS, "datasets"]:
        init = PACKAGE / wing / "__init__.py"
        if not init.exists():
            continue
        tree = ast.parse(init.read_text(encoding="utf-8"))
        assert ast.get_docstring(tree), f"{wing}/__init__.py says what the wing owns and may import"
        assert not [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))], wing


def test_function_local_imports_say_why() -> None:
    _, local = _imports()
    unexplained = []
    for module, line in local:
        lines = MODULES[module].read_text(encoding="utf-8").splitlines()
        if not any("#" in x for x in lines[max(0, line - 4) : line]):  # on the line or up to 3 above
            unexplained.append(f"{module}:{line}: {lines[line - 1].strip()}")
    assert unexplained == []


SQL = re.compile(r"(?<![.\w])(?<!def )(select|insert|update|delete|text)\(|\.execute\(|exec_driver_sql|raw_connection")


def test_all_sql_lives_in_the_store() -> None:
    outside = []
    for module, path in MODULES.items():
        if path.suffix != ".py" or module.startswith("tokreg.store"):
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("#", 1)[0]
            if SQL.search(code) and "sqlalchemy" not in code:
                outside.append(f"{module}:{n}: {line.strip()}")
    assert outside == []


ALGORITHM_BRANCH = re.compile(r"""algorithm\s*[!=]=|["'](byte_level|model)["']\)?\s*[!=]=|get\(["']byte_level""")


def test_no_algorithm_branches_outside_the_algorithm_modules() -> None:
    # content.py defines the hashed format, which names the one algorithm whose merges it hashes.
    allowed = {"tokreg.content"}
    outside = []
    for module, path in MODULES.items():
        if path.suffix != ".py" or module.startswith("tokreg.algorithms") or module in allowed:
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if ALGORITHM_BRANCH.search(line):
                outside.append(f"{module}:{n}: {line.strip()}")
    assert outside == []
