"""JSON as tokreg reads other tools' files: strictly, so that a damaged or hostile file is one
clear error instead of a traceback later, or a version that silently differs from the file.

Python's `json.loads` accepts things no tokenizer file should hold, and tokreg would act on
them: a key given twice (the last one silently wins, so a token disappears), `NaN` and
`Infinity` (scores no encoder can rank), strings with lone surrogates (not Unicode: encoding
them to UTF-8 fails far from the file), and nesting deep enough to exhaust the interpreter's
stack in any code that walks it. `loads` refuses each, naming what it found.

    >>> loads(b'{"a": 1, "a": 2}', "t.json", "tokenizer.json")
    InputError: t.json: not a tokenizer.json (the key 'a' appears twice in one object)
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import InputError

#: Deeper than any tokenizer file nests (tokenizer.json: about 6); deep enough to be safe to
#: walk recursively afterwards.
MAX_DEPTH = 64


class _Refused(ValueError):
    """A reason to refuse the document, raised from inside the parser's hooks."""


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise _Refused(f"the key {k[:40]!r} appears twice in one object")
        out[k] = v
    return out


def _constant(name: str) -> Any:
    raise _Refused(f"{name} is not a number JSON allows")


def _check(doc: Any) -> None:
    """Depth and lone surrogates, without recursion (the document may be deep)."""
    stack: list[tuple[Any, int]] = [(doc, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, str):
            _unicode(value)
        elif isinstance(value, (dict, list)):
            if depth > MAX_DEPTH:
                raise _Refused(f"it nests deeper than {MAX_DEPTH} levels")
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for k, v in items:
                if isinstance(k, str):
                    _unicode(k)
                if isinstance(v, (str, dict, list)):
                    stack.append((v, depth + 1))


def _unicode(s: str) -> None:
    if s.isascii():
        return
    try:
        s.encode("utf-8")
    except UnicodeEncodeError as e:
        raise _Refused(f"a string holds a lone surrogate (\\u{ord(s[e.start]):04x}), which is not Unicode") from None


def loads(raw: bytes, where: str, what: str) -> Any:
    """The document in `raw`, or InputError "{where}: not a {what} (reason)"."""
    try:
        doc = json.loads(raw.decode("utf-8"), object_pairs_hook=_pairs, parse_constant=_constant)
        _check(doc)
    except UnicodeDecodeError as e:
        raise InputError(f"{where}: not a {what} (not UTF-8 at byte {e.start})") from None
    except RecursionError:
        raise InputError(f"{where}: not a {what} (it nests deeper than {MAX_DEPTH} levels)") from None
    except _Refused as e:
        raise InputError(f"{where}: not a {what} ({e})") from None
    except ValueError as e:  # JSONDecodeError, and integers longer than Python converts
        reason = str(e).splitlines()[0][:120]
        raise InputError(f"{where}: not a {what} ({reason})") from None
    return doc
