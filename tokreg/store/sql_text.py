"""Reading SQL text just enough for clear, early messages: where statements end, and the first
keyword of a statement, outside strings, quoted names and comments.

`tokreg sql` refuses a second statement before anything runs; what a statement may do is judged
elsewhere, by a real parser (pg_check.py) or by SQLite itself (readonly_sql.py), never from this
reading of the text, so a text this reader misjudges is still refused there.

    >>> statements("SELECT ';' AS x; -- done")
    ["SELECT ';' AS x"]
    >>> first_keyword("/* hi */ (SELECT 1)")
    'SELECT'
"""

from __future__ import annotations

import re

_DOLLAR_TAG = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)?\$")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")


def _skip_quoted(sql: str, i: int, quote: str, backslash: bool = False) -> int:
    """The index after the quoted text starting at `sql[i]` (doubled quotes escape; with
    `backslash`, so does a backslash, as in PostgreSQL's E'...')."""
    i += 1
    while i < len(sql):
        c = sql[i]
        if backslash and c == "\\":
            i += 2
            continue
        if c == quote:
            if i + 1 < len(sql) and sql[i + 1] == quote:
                i += 2
                continue
            return i + 1
        i += 1
    return i


def _skip_block_comment(sql: str, i: int, nested: bool) -> int:
    depth, i = 1, i + 2
    while i < len(sql) and depth:
        if nested and sql.startswith("/*", i):
            depth, i = depth + 1, i + 2
        elif sql.startswith("*/", i):
            depth, i = depth - 1, i + 2
        else:
            i += 1
    return i


def tokens(sql: str, postgres: bool = True) -> list[tuple[str, int]]:
    """(kind, index) of what matters outside strings and comments: ("word", i) for each bare
    word, ("quoted", i) for a double-quoted name, ("escaped", i) for a PostgreSQL U&"..." name,
    (";", i) and ("(", i)."""
    out: list[tuple[str, int]] = []
    i, n = 0, len(sql)
    while i < n:
        c = sql[i]
        if sql.startswith("--", i):
            j = sql.find("\n", i)
            i = n if j < 0 else j + 1
        elif sql.startswith("/*", i):
            i = _skip_block_comment(sql, i, nested=postgres)
        elif c == "'":
            i = _skip_quoted(sql, i, "'")
        elif c in "eE" and postgres and sql.startswith("'", i + 1) and not (i and sql[i - 1].isalnum()):
            i = _skip_quoted(sql, i + 1, "'", backslash=True)
        elif c in "uU" and postgres and sql.startswith('&"', i + 1) and not (i and sql[i - 1].isalnum()):
            out.append(("escaped", i))  # U&"..." spells a name with escapes a reader cannot check
            i = _skip_quoted(sql, i + 2, '"')
        elif c == '"':
            out.append(("quoted", i))
            i = _skip_quoted(sql, i, '"')
        elif c in "`[" and not postgres:
            j = sql.find("]" if c == "[" else "`", i + 1)
            i = n if j < 0 else j + 1
        elif c == "$" and postgres and (m := _DOLLAR_TAG.match(sql, i)) and not (i and sql[i - 1].isalnum()):
            end = sql.find(m.group(0), m.end())
            i = n if end < 0 else end + len(m.group(0))
        elif c in ";(":
            out.append((c, i))
            i += 1
        elif (m := _WORD.match(sql, i)) and not (i and (sql[i - 1].isalnum() or sql[i - 1] in "_$")):
            out.append(("word", i))
            i = m.end()
        else:
            i += 1
    return out


def statements(sql: str, postgres: bool = True) -> list[str]:
    """The statements of `sql` (split at `;` outside strings and comments), empty ones dropped."""
    cuts = [i for kind, i in tokens(sql, postgres) if kind == ";"]
    parts, start = [], 0
    for cut in [*cuts, len(sql)]:
        part = sql[start:cut]
        if any(kind != ";" for kind, _ in tokens(part, postgres)):
            parts.append(part.strip())
        start = cut + 1
    return parts


def first_keyword(sql: str, postgres: bool = True) -> str:
    """The first bare word of `sql`, upper-cased ('' when there is none)."""
    for kind, i in tokens(sql, postgres):
        if kind == "word":
            m = _WORD.match(sql, i)
            assert m is not None
            return m.group(0).upper()
        if kind == "quoted":
            return ""
    return ""
