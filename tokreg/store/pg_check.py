"""The PostgreSQL half of `tokreg sql`'s allow-list: a statement is parsed by PostgreSQL's own
parser (libpg_query, through pglast) and its whole tree is walked; it may run only if it is one
SELECT (WITH, UNION, VALUES, TABLE and EXPLAIN without ANALYZE included) that reads tokreg's
tables and views and calls only the functions of sql_allow.py.

Every node of the tree must be of a kind this module knows (`_NODES`); anything else (a
statement other than a query, XML expressions, parameters, TABLESAMPLE, syntax a newer parser
adds) is refused by default. On the known kinds:

- every function call (FuncCall: bare, schema-qualified, quoted or U&-spelled names, as the
  parser resolves them; the SQL-standard spellings such as TRIM or EXTRACT; table functions in
  FROM) names a function of `PG_FUNCTIONS`, bare or in pg_catalog;
- every relation read (RangeVar) is a CTE in scope, one of tokreg's tables and views (bare or in
  the registry's schema), or one of `PG_CATALOG_RELATIONS`;
- every type named (casts, typed literals, column definitions) is one of `PG_TYPES`;
- every operator is bare or in pg_catalog; `x.name` and `(x).name` must name a column (written
  that way, a name that is no column would call the function `name(x)`);
- no SELECT INTO, no FOR UPDATE/SHARE, no data-modifying WITH, no EXPLAIN ANALYZE.

    >>> check("SELECT lower(text) FROM vocab", Scope.of({"vocab"}, {"text"}))
    >>> check("SELECT pg_read_file('/etc/hostname')", Scope.of({"vocab"}, {"text"}))
    Traceback (most recent call last):
    ...
    tokreg.errors.ReadOnlyError: refused: the function pg_read_file() is not on the allow-list ...
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from ..errors import InputError, ReadOnlyError, TokregError
from . import sql_text
from .sql_allow import PG_CATALOG_RELATIONS, PG_EXPLAIN_OPTIONS, PG_FUNCTIONS, PG_TYPES

HINT = "tokreg sql is read-only; what it allows is in docs/sql.md"

#: Node kinds a query is made of. A kind not listed here is refused wherever it appears.
_NODES = frozenset(
    {
        "RawStmt",
        "SelectStmt",
        "ExplainStmt",
        "DefElem",
        "WithClause",
        "CommonTableExpr",
        "CTESearchClause",
        "CTECycleClause",
        "ResTarget",
        "ColumnRef",
        "A_Star",
        "A_Const",
        "String",
        "Integer",
        "Float",
        "Boolean",
        "BitString",
        "A_Expr",
        "BoolExpr",
        "FuncCall",
        "TypeCast",
        "TypeName",
        "SubLink",
        "CaseExpr",
        "CaseWhen",
        "CoalesceExpr",
        "MinMaxExpr",
        "NullTest",
        "BooleanTest",
        "RowExpr",
        "A_ArrayExpr",
        "A_Indices",
        "A_Indirection",
        "CollateClause",
        "SortBy",
        "WindowDef",
        "RangeVar",
        "RangeSubselect",
        "RangeFunction",
        "JoinExpr",
        "Alias",
        "ColumnDef",
        "SQLValueFunction",
        "GroupingSet",
        "GroupingFunc",
    }
)
#: What a refusal names for a node kind that is not allowed.
_NODE_NAMES = {
    "IntoClause": "SELECT INTO (it creates a table)",
    "LockingClause": "FOR UPDATE/FOR SHARE (it locks rows)",
    "XmlExpr": "XML expressions (XPath and XML functions are not on the allow-list)",
    "XmlSerialize": "XMLSERIALIZE (XML functions are not on the allow-list)",
    "RangeTableFunc": "XMLTABLE (XML functions are not on the allow-list)",
    "ParamRef": "parameters ($1)",
    "RangeTableSample": "TABLESAMPLE",
    "VariableShowStmt": "SHOW (it reads the server's settings, not the registry)",
}
#: Names `x.name` may end with besides columns and the query's own aliases: system columns,
#: WITH ORDINALITY's column and the columns of the allowed JSON table functions.
_EXTRA_COLUMNS = frozenset({"ctid", "xmin", "xmax", "cmin", "cmax", "tableoid", "ordinality", "key", "value"})


@dataclass(frozen=True)
class Scope:
    """What a statement may read: `relations` (tokreg's tables and views, bare names), the
    registry's `schema`, and `columns` (every column name of those relations and of
    `PG_CATALOG_RELATIONS`); and `shadowed`, the names of functions and operators defined in the
    registry's schema (by an extension, or by hand), which PostgreSQL could pick instead of
    pg_catalog's for some argument types, so a call of such a name is refused."""

    relations: frozenset[str]
    columns: frozenset[str]
    schema: str = "public"
    shadowed: frozenset[str] = frozenset()

    @classmethod
    def of(
        cls, relations: Iterable[str], columns: Iterable[str], schema: str = "public", shadowed: Iterable[str] = ()
    ) -> Scope:
        return cls(frozenset(relations), frozenset(columns), schema, frozenset(shadowed))


def _refuse(what: str, why: str) -> ReadOnlyError:
    return ReadOnlyError(f"refused: {what} {why}; {HINT}")


def _names(nodes: Any) -> list[str]:
    """The strings of a list of String nodes (a function, type or operator name)."""
    return [getattr(n, "sval", "?") for n in nodes or ()]


def _children(node: Any) -> Iterator[Any]:
    """The nodes directly under `node` (lists of nodes flattened)."""
    return _flatten(tuple(getattr(node, attr, None) for attr in type(node).__slots__))


def _flatten(values: tuple[Any, ...]) -> Iterator[Any]:
    for v in values:
        if isinstance(v, tuple):
            yield from _flatten(v)
        elif isinstance(v, _NODE_CLASS):
            yield v


def _all_nodes(node: Any) -> Iterator[Any]:
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(_children(n))


def _defined_names(tree: Any) -> set[str]:
    """Names the statement itself gives to columns and relations (aliases, CTE names and their
    columns, column definitions): `x.name` may end with any of them."""
    out: set[str] = set()
    for n in _all_nodes(tree):
        kind = type(n).__name__
        if kind == "ResTarget" and n.name:
            out.add(n.name)
        elif kind == "Alias":
            out.add(n.aliasname)
            out.update(_names(n.colnames))
        elif kind == "CommonTableExpr":
            out.add(n.ctename)
            out.update(_names(n.aliascolnames))
        elif kind == "ColumnDef" and n.colname:
            out.add(n.colname)
    return out


#: A node to check and the CTE names visible where it stands.
_Item = tuple[Any, frozenset[str]]


class _Walk:
    """Checks every node of a statement with a worklist rather than recursion, so that a deeply
    nested statement costs memory, never Python's recursion limit. Each handler checks its node
    and returns the children to check next, with the CTE names visible to them."""

    def __init__(self, scope: Scope, defined: set[str]):
        self.scope = scope
        self.known = scope.columns | defined | _EXTRA_COLUMNS | PG_FUNCTIONS

    def run(self, root: Any) -> None:
        todo: list[_Item] = [(root, frozenset())]
        while todo:
            node, ctes = todo.pop()
            kind = type(node).__name__
            if kind not in _NODES:
                raise _refuse(_NODE_NAMES.get(kind, f"{kind} (a kind of statement or expression)"), "is not allowed")
            method = getattr(self, f"_{kind}", None)
            nxt = method(node, ctes) if method is not None else [(c, ctes) for c in _children(node)]
            todo.extend(reversed(nxt))  # reversed: refusals follow the order of the text

    def _SelectStmt(self, node: Any, ctes: frozenset[str]) -> list[_Item]:
        if node.intoClause is not None:
            raise _refuse(_NODE_NAMES["IntoClause"], "is not allowed")
        if node.lockingClause:
            raise _refuse(_NODE_NAMES["LockingClause"], "is not allowed")
        out: list[_Item] = []
        inner = ctes
        if node.withClause is not None:
            w = node.withClause
            names = [c.ctename for c in w.ctes]
            for i, cte in enumerate(w.ctes):
                if type(cte.ctequery).__name__ != "SelectStmt":
                    what = type(cte.ctequery).__name__.removesuffix("Stmt").upper()
                    raise _refuse(f"WITH {cte.ctename} AS ({what} …)", "would change data (only SELECT may run)")
                # A WITH RECURSIVE query sees every sibling; a plain one only those before it
                # (a later name would be read as a table, not as the CTE).
                seen = ctes | frozenset(names if w.recursive else names[:i])
                out += [(child, seen) for child in _children(cte)]
            inner = ctes | frozenset(names)
        for attr in type(node).__slots__:
            value = getattr(node, attr, None)
            if attr != "withClause":
                out += [(child, inner) for child in _flatten((value,))]
        return out

    def _FuncCall(self, node: Any, ctes: frozenset[str]) -> list[_Item]:
        names = _names(node.funcname)
        name = names[-1]
        if not (len(names) == 1 or (len(names) == 2 and names[0] == "pg_catalog")) or name not in PG_FUNCTIONS:
            raise _refuse(
                f"the function {'.'.join(names)}()", "is not on the allow-list of functions without side effects"
            )
        if name in self.scope.shadowed:
            raise _refuse(
                f"the function {name}()", f"is also defined in schema {self.scope.schema}, not only in pg_catalog"
            )
        return [(c, ctes) for c in _children(node)]

    def _TypeName(self, node: Any, ctes: frozenset[str]) -> list[_Item]:
        names = _names(node.names)
        ok = len(names) == 1 or (len(names) == 2 and names[0] == "pg_catalog")
        if not ok or names[-1] not in PG_TYPES or node.pct_type:
            raise _refuse(f"the type {'.'.join(names)}", "is not on the allow-list of types")
        return [(c, ctes) for c in _children(node)]

    def _RangeVar(self, node: Any, ctes: frozenset[str]) -> list[_Item]:
        schema, name = node.schemaname, node.relname
        shown = ".".join(p for p in (node.catalogname, schema, name) if p)
        ok = node.catalogname is None and (
            (schema is None and (name in ctes or name in self.scope.relations))
            or (schema == self.scope.schema and name in self.scope.relations)
            or (schema, name) in PG_CATALOG_RELATIONS
        )
        if not ok:
            raise _refuse(
                f"reading {shown}",
                "(only tokreg's tables and views, and information_schema's tables, columns and views, may be read)",
            )
        return [] if node.alias is None else [(node.alias, ctes)]

    def _operator(self, names: list[str], node: Any, ctes: frozenset[str]) -> list[_Item]:
        if len(names) > 2 or (len(names) == 2 and names[0] != "pg_catalog"):
            raise _refuse(f"the operator OPERATOR({'.'.join(names)})", "is outside pg_catalog")
        if names and names[-1] in self.scope.shadowed:
            raise _refuse(
                f"the operator {names[-1]}", f"is also defined in schema {self.scope.schema}, not only in pg_catalog"
            )
        return [(c, ctes) for c in _children(node)]

    def _A_Expr(self, node: Any, ctes: frozenset[str]) -> list[_Item]:
        return self._operator(_names(node.name), node, ctes)

    def _SortBy(self, node: Any, ctes: frozenset[str]) -> list[_Item]:
        return self._operator(_names(node.useOp), node, ctes)

    def _SubLink(self, node: Any, ctes: frozenset[str]) -> list[_Item]:
        return self._operator(_names(node.operName), node, ctes)

    def _field(self, name: str, written: str) -> None:
        # The query's own names are accepted too, so `t.x` could still be a call x(t) when t has
        # no column x; the pg_catalog functions a whole row can be passed to (to_json, pg_typeof,
        # row_to_json, …) only compute, and the registry schema's own functions are refused here.
        if name not in self.known or name in self.scope.shadowed:
            raise _refuse(
                written,
                f"names no column of the registry or of this query (written so, PostgreSQL would call {name}(), "
                "which is not on the allow-list)",
            )

    def _ColumnRef(self, node: Any, ctes: frozenset[str]) -> list[_Item]:
        fields = node.fields
        if len(fields) >= 2 and type(fields[-1]).__name__ == "String":
            self._field(fields[-1].sval, ".".join(_names(fields)))
        return []

    def _A_Indirection(self, node: Any, ctes: frozenset[str]) -> list[_Item]:
        out: list[_Item] = [(node.arg, ctes)]
        for part in node.indirection:
            if type(part).__name__ == "String":
                self._field(part.sval, f"(…).{part.sval}")
            else:
                out.append((part, ctes))
        return out


#: The longest PostgreSQL statement checked (and so run), in characters: far beyond any query
#: written by hand.
MAX_CHARS = 100_000
#: The parser and pglast's conversion of its tree recurse in C once per level of nesting (`1+1+…`
#: nests once per `+`), and a few tens of thousands of levels exhaust a thread's usual 8 MB of
#: stack. They run on a thread with this much stack (address space reserved, touched only as
#: used), which holds any statement of MAX_CHARS.
_PARSE_STACK = 512 << 20
#: pglast's base class of tree nodes, set by parse() once pglast is imported (until then, a class
#: nothing is an instance of).
_NODE_CLASS: type = type("NoNodeYet", (), {})


class _ParseThread:
    """One thread, started once per process with a stack of _PARSE_STACK, that parses every
    statement handed to it in turn.

    Not a new thread per statement: libpg_query keeps per-thread state under a pthread key it
    never deletes, so each thread that parses uses up one of the process's 1,024 keys for good.
    With a thread per statement, a `tokreg serve` of a PostgreSQL registry or any long-lived
    process calling `Registry.sql` failed after about a thousand statements, in whatever next
    asked for a key (seen as `import tracemalloc` raising `OSError: [Errno 0]`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: queue.SimpleQueue[tuple[Callable[[str], Any], str, dict[str, Any], threading.Event]] = (
            queue.SimpleQueue()
        )
        self._thread: threading.Thread | None = None

    def _serve(self) -> None:
        while True:
            parse_sql, query, out, done = self._jobs.get()
            try:
                out["stmts"] = parse_sql(query)
            except Exception as e:  # handed to the caller's thread
                out["error"] = e
            finally:
                done.set()

    def __call__(self, parse_sql: Callable[[str], Any], query: str) -> Any:
        with self._lock:  # (after a fork the parent's thread is not alive in the child: start one)
            if self._thread is None or not self._thread.is_alive():
                old = threading.stack_size(_PARSE_STACK)
                try:
                    self._thread = threading.Thread(target=self._serve, name="tokreg-sql-parse", daemon=True)
                    self._thread.start()
                finally:
                    threading.stack_size(old)
        out: dict[str, Any] = {}
        done = threading.Event()
        self._jobs.put((parse_sql, query, out, done))
        done.wait()
        if "error" in out:
            raise out["error"]
        return out["stmts"]


#: `_on_big_stack(parse_sql, query)`: `parse_sql(query)` on the process's parse thread, whose
#: stack no statement of MAX_CHARS exhausts.
_on_big_stack = _ParseThread()


def parse(query: str) -> Any:
    """The one statement of `query` as pglast's tree (InputError for a syntax error, more than
    one statement or more than MAX_CHARS; TokregError saying what to install when pglast is
    missing)."""
    global _NODE_CLASS
    try:  # pglast is optional (the postgresql extra): needed only for a PostgreSQL registry
        from pglast import parse_sql
        from pglast.ast import Node
        from pglast.parser import ParseError
    except ImportError:
        raise TokregError(
            "checking SQL for a PostgreSQL registry needs pglast: pip install 'tokreg[postgresql]' "
            "(or pip install pglast)"
        ) from None
    _NODE_CLASS = Node
    if len(query) > MAX_CHARS:
        raise InputError(f"the statement is {len(query):,} characters long; tokreg sql takes at most {MAX_CHARS:,}")
    try:
        stmts = _on_big_stack(parse_sql, query)
    except ParseError as e:
        msg, at = (e.args + (None,))[:2] if e.args else ("syntax error", None)
        where = f" (at character {at + 1})" if isinstance(at, int) else ""
        raise InputError(f"SQL error: {str(msg).splitlines()[0]}{where}") from None
    if len(stmts) != 1:
        raise InputError(f"give one statement per call: found {len(stmts)}; nothing was run")
    return stmts[0]


def check(query: str, scope: Scope) -> None:
    """Raises ReadOnlyError naming the first thing of `query` that is not on the allow-list
    (InputError for SQL that does not parse); returns None when it may run."""
    raw = parse(query)
    stmt = raw.stmt
    kind = type(stmt).__name__
    if kind == "ExplainStmt":
        for opt in stmt.options or ():
            if opt.defname not in PG_EXPLAIN_OPTIONS:
                why = "runs the statement" if opt.defname == "analyze" else "is not an option that only shows the plan"
                raise _refuse(f"EXPLAIN {opt.defname.upper()}", why)
        stmt = stmt.query
        kind = type(stmt).__name__
        if kind != "SelectStmt":
            inner = "CREATE TABLE AS" if kind == "CreateTableAsStmt" else kind.removesuffix("Stmt").upper()
            raise _refuse(f"EXPLAIN {inner}", "explains a statement that is not a query")
    if kind != "SelectStmt":
        shown = _NODE_NAMES.get(kind) or sql_text.first_keyword(query) or kind
        raise _refuse(shown, "is not a query (tokreg sql runs one SELECT, WITH, VALUES, TABLE or EXPLAIN)")
    _Walk(scope, _defined_names(stmt)).run(stmt)
