"""The package's shape holds: no import circles among tokreg's modules, every query built under
tokreg/store/, no branching on an algorithm's name outside tokreg/algorithms/, and a
function-local import only where a comment says why (a heavy or optional dependency deferred)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

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


def _imports() -> tuple[dict[str, set[str]], list[tuple[str, int]]]:
    """(module -> tokreg modules it imports at load time, [(module, line) of function-local imports])."""
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
                    else:
                        edges[module].update(t for t in _targets(module, child) if t.startswith("tokreg"))
                elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    visit(child, True)
                elif isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                    continue  # imports for the type checker only
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
