"""`tokreg.lock`: the versions a project pins, and where they came from.

`tokreg pin REF` writes it in the current directory; inside that directory (or below it) a bare
`name` resolves to the pinned version, and loading it checks the stored content against the
pinned hash. The file is TOML, one `[[pin]]` table per tokenizer:

    # tokreg.lock: written by `tokreg pin`; commit it with your project.
    lock_version = 1

    [[pin]]
    name = "gpt-mini"
    version = 2
    hash = "xxh3-128:9f2c41…"
    sha256 = "sha256:…"
    registry = "sqlite:////home/me/.local/share/tokreg/registry.db"
    pinned_at = "2026-11-21T10:00:00+00:00"

A project can pin token datasets too (`tokreg dataset pin DIR`; versions/dataset_pins.py says
what is checked), one `[[dataset]]` table each:

    [[dataset]]
    name = "web"
    path = "data/web"                 # relative to the lockfile's folder (or absolute)
    hash = "xxh3-128:…"               # the dataset's hash (its manifest's dataset_hash)
    tokenizer = "xxh3-128:9f2c41…"    # the content hash of the tokenizer that made it
    tokenizer_ref = "gpt-mini@2"
    pinned_at = "2026-11-21T10:05:00+00:00"

A lockfile exactly as `render` writes it is read by `_as_written`, which parses it and renders
the result again: only a text that comes back byte for byte is taken (it is then exactly that
document), anything else, hand-edited or not, is read with `tomllib` (Python 3.11+; before, the
small reader below, which knows exactly the subset written here: comments, `key = "string"`,
`key = integer`, `[[pin]]`, `[[dataset]]`). So `tokreg.load` of a pin imports neither tomllib
nor dataclasses (the pins are named tuples) for a lockfile `tokreg pin` wrote.
`TOKREG_LOCK` names a lockfile to use instead of searching, or `off` to ignore lockfiles.

This module finds, reads, writes and applies the file. **The hash is the pin**: a `[[pin]]` is
satisfied by content with the pinned hash, wherever that content comes from (the vendored
folder beside the lockfile, the local cache, a registry, an exported file, a `tokreg serve`);
`name`, `version` and `registry` are provenance, shown and used to look, never required.

- `tokreg.load` of a pinned name (loading.py, versions/pinned.py) fetches the content by hash
  and labels the tokenizer with the pin's `name@version`; it never compares that label with a
  registry's, so the answer (ids, ref, hash) is the same warm or cold, online or offline.
- `Registry` methods that read a version's rows (`show`, `diff`, `export`...) need the
  registry's version holding that content (`resolve`): the recorded `name@version` when it
  holds the hash, else another version holding it (same name first, lowest number; else the
  oldest). When that version's label is not the recorded one (a registry that numbered the
  content otherwise, e.g. after `tokreg copy` found `name@N` taken), a `PinLabelWarning` says
  so, every time, as one `tokreg: warning:` line on the CLI. It is a warning, not an error,
  because the content is exactly the pinned one: refusing would fail a project's CI over a
  number that does not change a single id.
- A lockfile with two `[[pin]]` tables for one name is refused in one line.

A bare `name` pinned here is loaded from the registry it was pinned from when it is not local
(`registry_for`). `Registry` applies pins through `resolve` (its REF-taking reads do; its
writes do not, see its docstring). The lockfile is read once per call (`current`) and handed
down as a `Lock`; resolving a ref in the store never reads a file (store/refs.py).
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Optional, Union

from ..errors import InputError, IntegrityError, NotFoundError, PinLabelWarning, TokregError
from ..files import write_atomic

if TYPE_CHECKING:
    from sqlalchemy import Connection

    from ..data import VersionInfo

FILENAME = "tokreg.lock"
LOCK_VERSION = 1
PathLike = Union[str, os.PathLike[str]]  # not a string: typing would compile it at import


# The value types below are named tuples declared by the call (`NamedTuple("Pin", [...])`),
# not the class syntax: under `from __future__ import annotations` the class syntax hands typing
# each field's type as a string, which it compiles, and a fresh process's first compile costs
# more (about 10 million instructions) than the rest of a pinned load's own imports.


class Pin(
    NamedTuple(
        "Pin", [("name", str), ("version", int), ("hash", str), ("sha256", str), ("registry", str), ("pinned_at", str)]
    )
):
    """One `[[pin]]` table: the tokenizer `name`'s pinned content `hash` (the pin), and where it
    came from (`version`, `sha256`, `registry`, `pinned_at`: provenance)."""

    __slots__ = ()

    @property
    def ref(self) -> str:
        return f"{self.name}@{self.version}"


class DatasetPin(
    NamedTuple(
        "DatasetPin",
        [("name", str), ("path", str), ("hash", str), ("tokenizer", str), ("tokenizer_ref", str), ("pinned_at", str)],
    )
):
    """One `[[dataset]]` table (versions/dataset_pins.py says what is checked)."""

    __slots__ = ()


class Lock(NamedTuple("Lock", [("path", Path), ("pins", dict[str, Pin]), ("datasets", dict[str, DatasetPin])])):
    """A lockfile read: its `path`, its pins by tokenizer name, its dataset pins by name."""

    __slots__ = ()

    @property
    def folder(self) -> Path:
        """The project folder: the lockfile's own (where the vendored folder sits)."""
        return self.path.parent


def find(start: Optional[PathLike] = None) -> Optional[Path]:
    """The lockfile in effect: `TOKREG_LOCK`, else the nearest `tokreg.lock` from `start` (the
    current directory) upward; None when there is none (or `TOKREG_LOCK=off`)."""
    env = os.environ.get("TOKREG_LOCK")
    if env is not None and start is None:
        if env.strip().lower() in ("", "off", "none", "0"):
            return None
        return Path(env)
    here = Path(start if start is not None else os.getcwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / FILENAME
        if candidate.is_file():
            return candidate
    return None


def read(path: PathLike) -> Lock:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"lockfile {str(path)!r} does not exist; write one with `tokreg pin REF`") from None
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"cannot read lockfile {str(path)!r}: {e}") from None
    try:
        doc = _parse(text)
    except ValueError as e:
        raise InputError(f"lockfile {str(path)!r} is not valid TOML: {e}; fix it or delete it and re-pin") from None
    if doc.get("lock_version", LOCK_VERSION) > LOCK_VERSION:
        raise InputError(
            f"lockfile {str(path)!r} has lock_version {doc['lock_version']}, newer than this tokreg "
            f"reads ({LOCK_VERSION}); upgrade tokreg"
        )
    pins: dict[str, Pin] = {}
    for n, entry in enumerate(doc.get("pin", []), 1):
        try:
            pin = Pin(
                name=str(entry["name"]),
                version=int(entry["version"]),
                hash=str(entry["hash"]),
                sha256=str(entry.get("sha256", "")),
                registry=str(entry.get("registry", "")),
                pinned_at=str(entry.get("pinned_at", "")),
            )
        except (KeyError, TypeError, ValueError):
            raise InputError(
                f"lockfile {str(path)!r}: pin {n} needs name, version and hash; re-pin it with `tokreg pin NAME@N`"
            ) from None
        if pin.name in pins:
            raise InputError(
                f"lockfile {str(path)!r} pins {pin.name!r} twice (pins {list(pins).index(pin.name) + 1} and {n}); "
                f"keep one, or re-pin with `tokreg pin {pin.name}@N`"
            )
        pins[pin.name] = pin
    return Lock(path=path, pins=pins, datasets=_datasets(path, doc.get("dataset", [])))


def _datasets(path: Path, tables: list[Any]) -> dict[str, DatasetPin]:
    out: dict[str, DatasetPin] = {}
    for n, entry in enumerate(tables, 1):
        try:
            d = DatasetPin(
                name=str(entry["name"]),
                path=str(entry["path"]),
                hash=str(entry["hash"]),
                tokenizer=str(entry["tokenizer"]),
                tokenizer_ref=str(entry.get("tokenizer_ref", "")),
                pinned_at=str(entry.get("pinned_at", "")),
            )
        except (KeyError, TypeError):
            raise InputError(
                f"lockfile {str(path)!r}: dataset {n} needs name, path, hash and tokenizer; "
                "re-pin it with `tokreg dataset pin DIR`"
            ) from None
        if d.name in out:
            raise InputError(f"lockfile {str(path)!r} pins dataset {d.name!r} twice; keep one")
        out[d.name] = d
    return out


def current(lock: Union[PathLike, bool, None] = None) -> Optional[Lock]:
    """The lock to apply: `lock` as a path, None to search (see `find`), False for none."""
    if lock is False:
        return None
    path = find() if lock is None or lock is True else Path(lock)
    return read(path) if path is not None else None


#: What callers pass for "which lockfile": a Lock, None to search from the current directory
#: (or TOKREG_LOCK), False for none.
LockArg = Union[Lock, None, bool]


def lock_of(lock: LockArg) -> Optional[Lock]:
    if isinstance(lock, Lock):
        return lock
    return current(None if lock is None or lock is True else False)


def pin_for(lock: Optional[Lock], ref: str) -> Optional[Pin]:
    """The pin that applies to `ref`: only a bare name (no @version, no hash) is pinned."""
    if lock is None or "@" in ref or ":" in ref:
        return None
    return lock.pins.get(ref.strip())


def write(path: PathLike, pin: Pin) -> Lock:
    """Adds or replaces `pin` in the lockfile at `path` (created if absent); keeps the others."""
    path = Path(path)
    old = read(path) if path.exists() else Lock(path, {}, {})
    pins = {**old.pins, pin.name: pin}
    write_atomic(path, render(pins.values(), old.datasets.values()).encode("utf-8"))
    return Lock(path=path, pins=pins, datasets=old.datasets)


def write_dataset(path: PathLike, pin: DatasetPin) -> Lock:
    """Adds or replaces the dataset pin `pin` in the lockfile at `path` (created if absent)."""
    path = Path(path)
    old = read(path) if path.exists() else Lock(path, {}, {})
    datasets = {**old.datasets, pin.name: pin}
    write_atomic(path, render(old.pins.values(), datasets.values()).encode("utf-8"))
    return Lock(path=path, pins=old.pins, datasets=datasets)


def render(pins: Iterable[Pin], datasets: Iterable[DatasetPin] = ()) -> str:
    """The lockfile holding `pins` and `datasets` (each sorted by name), as `write` writes it."""
    tables: list[tuple[str, dict[str, Any]]] = [("pin", p._asdict()) for p in sorted(pins, key=lambda p: p.name)]
    tables += [("dataset", d._asdict()) for d in sorted(datasets, key=lambda d: d.name)]
    return _render(LOCK_VERSION, tables)


_HEADER = "# tokreg.lock: written by `tokreg pin`; commit it with your project."


def _render(lock_version: int, tables: Iterable[tuple[str, dict[str, Any]]]) -> str:
    """TOML for a lockfile: the header, `lock_version`, then each (kind, its keys and values in
    order) as a `[[kind]]` table; the one writer of the format (`render`, `_as_written`)."""
    lines = [_HEADER, f"lock_version = {lock_version}"]
    for kind, entry in tables:
        lines += ["", f"[[{kind}]]"]
        for key, value in entry.items():
            lines.append(f"{key} = {value}" if isinstance(value, int) else f"{key} = {_quote(value)}")
    return "\n".join(lines) + "\n"


def new_pin(name: str, version: int, content_hash: str, sha256: str, registry: str) -> Pin:
    from datetime import datetime, timezone  # here: reading a lockfile (every load) needs no clock

    return Pin(
        name=name,
        version=version,
        hash=content_hash,
        sha256=sha256,
        registry=registry,
        pinned_at=datetime.now(timezone.utc).replace(microsecond=0).isoformat(),
    )


# -- What a pin means when a ref is used ----------------------------------------------------------


def resolve(conn: Connection, ref: str, lock: Optional[Lock], *, where: str = "this registry") -> VersionInfo:
    """The version `ref` names with the pins of `lock` applied: the one place a bare name becomes
    the registry's version holding its pinned content (see the module's docstring for the rule
    and its `PinLabelWarning`). Every `Registry` method that follows pins resolves its REF here,
    once per call (registry.py). `where` names the registry in messages."""
    # The store (and SQLAlchemy) on use only: `tokreg.load` reads pins from this module on its
    # cached path, which must not import them.
    from ..store import by_hash, refs

    pin = pin_for(lock, ref)
    if pin is None:
        return refs.resolve(conn, ref)
    assert lock is not None
    holders = by_hash.versions_with(conn, pin.hash)
    if not holders:
        raise missing(lock, pin, where, by_hash.labelled(conn, pin.name, pin.version))
    v = choose(holders, pin)
    if v.ref != pin.ref:
        warnings.warn(label_warning(lock, pin, where, v.ref), PinLabelWarning, stacklevel=2)
    # The content itself is checked against this same hash wherever it is read, so rows changed
    # behind tokreg's back are refused there, naming both hashes.
    return v


def choose(holders: Sequence[VersionInfo], pin: Pin) -> VersionInfo:
    """Which of the versions holding a pin's content stands for it: the recorded `name@version`,
    else the same name's lowest number, else the oldest (lowest id)."""
    for v in holders:
        if (v.name, v.number) == (pin.name, pin.version):
            return v
    same = [v for v in holders if v.name == pin.name]
    return min(same, key=lambda v: v.number) if same else min(holders, key=lambda v: v.id)


def label_warning(lock: Lock, pin: Pin, where: str, held_as: str) -> str:
    return (
        f"{lock.path} pins {pin.ref} ({pin.hash}); {where} holds that content as {held_as}: using it "
        "(the hash is the pin; the number is provenance)"
    )


def missing(lock: Lock, pin: Pin, where: str, labelled: Optional[VersionInfo]) -> TokregError:
    """The error for a registry without the pinned content: an IntegrityError naming both
    hashes when it holds the recorded `name@version` with other content, else NotFoundError."""
    head = f"{lock.path} pins {pin.ref} ({pin.hash})"
    if labelled is not None:
        return IntegrityError(
            f"{head}, but {labelled.ref} in {where} is {labelled.content_hash}; it is not the pinned "
            f"tokenizer (re-pin deliberately with `tokreg pin {labelled.ref}`, or `tokreg sync` the pinned content)",
            expected=pin.hash,
            actual=labelled.content_hash,
        )
    return NotFoundError(
        f"{head}, but {where} holds no version with that content; it was pinned from "
        f"{pin.registry or 'an unrecorded registry'}: run `tokreg sync` (--from SOURCE), or re-pin with "
        f"`tokreg pin {pin.name}@N`"
    )


def registry_for(ref: str, lock: Optional[Lock]) -> Optional[str]:
    """The registry that `lock` names for `ref`'s tokenizer (a bare `name` or `name@...` pinned
    there), when it can be reached from here: a SQLite file that exists, or another URL whose
    password was not hidden when it was written. None otherwise, and then the usual location
    applies; what is loaded is checked against the pinned hash either way."""
    p = lock.pins.get(ref.split("@", 1)[0]) if lock is not None else None
    if p is None or not p.registry or ":***@" in p.registry:
        return None
    # SQLAlchemy on use only, as in `resolve`.
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        url = make_url(p.registry)
    except ArgumentError:
        return None
    if url.get_backend_name() == "sqlite":
        return p.registry if url.database and Path(url.database).is_file() else None
    return p.registry


# -- TOML, the subset written above ---------------------------------------------------------------


def _quote(s: str) -> str:
    # A JSON string is a valid TOML basic string once non-ASCII escapes are left as characters.
    return json.dumps(s, ensure_ascii=False)


_BARE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def _parse(text: str) -> dict[str, Any]:
    doc = _as_written(text)
    if doc is not None:
        return doc
    if sys.version_info >= (3, 11):
        import tomllib  # in the standard library from 3.11 on only

        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise ValueError(str(e)) from None
        except RecursionError:  # tomllib reads nested arrays and tables recursively
            raise ValueError("its values are nested too deeply (a lockfile's are flat)") from None
    return _parse_subset(text)


def _as_written(text: str) -> Optional[dict[str, Any]]:
    """The document in `text` when `text` is exactly what `_render` writes for it, else None.

    Exact, not lenient: the lines are read as `_render` writes them (bare keys, JSON-quoted
    strings, decimal integers, `[[pin]]` and `[[dataset]]` tables), and the result is rendered
    again; only when that gives `text` back, byte for byte, is it taken. `_render` writes valid
    TOML for the document it is given, so the document is then what any TOML reader finds in
    `text`. Anything else (a comment added, keys reordered, another quoting) returns None and
    is read by tomllib, which also words the errors."""
    doc: dict[str, Any] = {}
    table = doc
    tables: list[tuple[str, dict[str, Any]]] = []
    for line in text.split("\n"):
        if not line or line == _HEADER:
            continue
        if line in ("[[pin]]", "[[dataset]]"):
            table = {}
            doc.setdefault(line[2:-2], []).append(table)
            tables.append((line[2:-2], table))
            continue
        key, eq, value = line.partition(" = ")
        if not eq or not key or not _BARE.issuperset(key) or key in table:
            return None
        if value[:1] == '"':
            if "\x7f" in value:  # raw DEL: JSON allows it in a string, TOML does not
                return None
            try:
                table[key] = json.loads(value)  # strict: a raw control character fails, as in TOML
            except ValueError:
                return None
            if not isinstance(table[key], str):
                return None
        elif value.isascii() and value.isdigit():
            table[key] = int(value)
        else:
            return None
    version = doc.get("lock_version")
    if list(doc) != ["lock_version", *{kind: None for kind, _ in tables}] or not isinstance(version, int):
        return None
    return doc if _render(version, tables) == text else None


def _parse_subset(text: str) -> dict[str, Any]:
    import re  # here: only Python 3.10 reads a lockfile this way

    key_value = re.compile(r"^([A-Za-z0-9_-]+)\s*=\s*(.+?)\s*$")
    doc: dict[str, Any] = {}
    table = doc
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line in ("[[pin]]", "[[dataset]]"):
            table = {}
            doc.setdefault(line[2:-2], []).append(table)
            continue
        m = key_value.match(line)
        if not m:
            raise ValueError(f"line {n}: expected `key = value`, [[pin]] or [[dataset]], found {raw!r}")
        key, value = m.groups()
        if value.startswith('"'):
            try:
                table[key] = json.loads(value)
            except json.JSONDecodeError:
                raise ValueError(f"line {n}: bad string {value!r}") from None
        elif re.fullmatch(r"[+-]?\d+", value):
            table[key] = int(value)
        else:
            raise ValueError(f"line {n}: unsupported value {value!r}")
    return doc
