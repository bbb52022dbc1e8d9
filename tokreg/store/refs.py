"""Turning a ref into a version (a `VersionInfo`, data.py): the resolver for `name`, `name@N`,
`name@latest`, `name@ALIAS` and hash prefixes (`xxh3-128:9f2c41`, `sha256:…`, or bare hex such
as `9f2c41`).

Resolution reads the database only. Pins from a project's `tokreg.lock` are applied by
`Registry` through versions/lockfile.py's `resolve`, never here.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Optional

from sqlalchemy import Connection, select

from ..data import VersionInfo
from ..errors import InputError, NotFoundError
from .schema import Alias, TrainingRun, Version, table

#: A bare hex string at least this long is also tried as a hash prefix.
_HEX_RE = re.compile(r"^[0-9a-f]{6,64}$")

_FIELDS = (
    "id",
    "name",
    "number",
    "algorithm",
    "config",
    "vocab_size",
    "content_hash",
    "sha256",
    "source",
    "created_at",
    "message",
)


def _rows(conn: Connection, stmt: Any) -> list[VersionInfo]:
    return [VersionInfo(**{k: r[k] for k in _FIELDS}) for r in conn.execute(stmt).mappings()]


def all_versions(conn: Connection, name: Optional[str] = None) -> list[VersionInfo]:
    """Every version (of `name`), by name then number."""
    t = table(Version)
    stmt = select(t).order_by(t.c.name, t.c.number)
    if name is not None:
        stmt = stmt.where(t.c.name == name)
    return with_same_run(conn, _rows(conn, stmt))


def with_same_run(conn: Connection, versions: list[VersionInfo]) -> list[VersionInfo]:
    """`versions` with `same_run` filled: the other versions whose run shares their run group."""
    r, v = table(TrainingRun), table(Version)
    rows = conn.execute(
        select(r.c.run_group, v.c.id, v.c.name, v.c.number)
        .join(v, v.c.id == r.c.version_id)
        .where(r.c.run_group.is_not(None))
        .order_by(v.c.number)
    ).all()
    groups: dict[str, list[tuple[int, str]]] = {}
    group_of: dict[int, str] = {}
    for g, vid, name, number in rows:
        groups.setdefault(g, []).append((vid, f"{name}@{number}"))
        group_of[vid] = g
    return [
        replace(x, same_run=tuple(ref for vid, ref in groups[group_of[x.id]] if vid != x.id)) if x.id in group_of else x
        for x in versions
    ]


def by_id(conn: Connection, version_id: int) -> Optional[VersionInfo]:
    t = table(Version)
    rows = _rows(conn, select(t).where(t.c.id == version_id))
    return rows[0] if rows else None


def names(conn: Connection) -> list[str]:
    t = table(Version)
    return list(conn.execute(select(t.c.name).distinct().order_by(t.c.name)).scalars())


def what_exists(conn: Connection) -> str:
    """A clause saying what the registry holds, for "not found" messages."""
    have = names(conn)
    if not have:
        return "the registry is empty (train one with `tokreg train NAME FILE... --vocab-size N`)"
    shown = ", ".join(have[:20]) + (f", … ({len(have)} in all)" if len(have) > 20 else "")
    return f"the registry has: {shown}"


def alias_target(conn: Connection, name: str, alias: str) -> Optional[int]:
    """The version id `name@alias` points at, or None."""
    t = table(Alias)
    return conn.execute(select(t.c.version_id).where(t.c.name == name, t.c.alias == alias)).scalar()


def aliases_of(conn: Connection, name: str) -> dict[str, int]:
    """alias -> version number, for every alias of `name`."""
    a, v = table(Alias), table(Version)
    rows = conn.execute(
        select(a.c.alias, v.c.number).join(v, v.c.id == a.c.version_id).where(a.c.name == name).order_by(a.c.alias)
    )
    return {r[0]: r[1] for r in rows}


def _by_hash(conn: Connection, prefix: str) -> list[VersionInfo]:
    t = table(Version)
    col = t.c.sha256 if prefix.startswith("sha256:") else t.c.content_hash
    return _rows(conn, select(t).where(col.startswith(prefix, autoescape=True)).order_by(t.c.name, t.c.number))


def _one_hash(hits: list[VersionInfo], prefix: str) -> VersionInfo:
    """The one version a hash prefix names. A prefix matching several versions is ambiguous and
    lists them; only a full hash (which names content exactly) held by several versions resolves,
    to the oldest of them, since they encode identically."""
    full = len(prefix.rpartition(":")[2]) in (32, 64)
    if len(hits) > 1 and (len({h.content_hash for h in hits}) > 1 or not full):
        shown = ", ".join(f"{h.ref} ({h.content_hash[:22]}…)" for h in hits[:10])
        more = f" and {len(hits) - 10} more" if len(hits) > 10 else ""
        raise NotFoundError(
            f"hash prefix {prefix!r} is ambiguous: it matches {shown}{more}; give more digits or NAME@N"
        )
    return min(hits, key=lambda h: h.id)


def resolve(conn: Connection, ref: str) -> VersionInfo:
    """The version a ref names. Raises NotFoundError saying what exists when it names none."""
    if not isinstance(ref, str):
        raise InputError(f"a ref must be a str, not {type(ref).__name__}")
    ref = ref.strip()
    if ref.startswith(("xxh3-128:", "sha256:")):
        hits = _by_hash(conn, ref)
        if not hits:
            raise NotFoundError(f"no version has a hash starting with {ref!r}; `tokreg list` shows the hashes")
        return _one_hash(hits, ref)
    name, _, version = ref.partition("@")
    if not name:
        raise InputError(f"ref {ref!r} has no name; write NAME, NAME@N or a hash prefix")
    versions = all_versions(conn, name)
    if not versions:
        if not version and _HEX_RE.match(name):
            hits = _by_hash(conn, "xxh3-128:" + name)
            if hits:
                return _one_hash(hits, name)
        raise NotFoundError(f"no tokenizer named {name!r}; {what_exists(conn)}")
    if not version or version == "latest":
        return versions[-1]
    if version.isdigit():
        for v in versions:
            if v.number == int(version):
                return v
        nums = ", ".join(str(v.number) for v in versions)
        raise NotFoundError(f"{name} has no version {version}; its versions are {nums}")
    vid = alias_target(conn, name, version)
    for v in versions:
        if v.id == vid:
            return v
    have = ", ".join(f"@{a} (-> {n})" for a, n in aliases_of(conn, name).items()) or "none"
    raise NotFoundError(
        f"{name} has no version or alias {version!r}; its versions are "
        + ", ".join(str(v.number) for v in versions)
        + f"; its aliases: {have}"
    )
