"""Reading versions back: `VersionInfo` (one row of `versions`, as plain data) and the
resolver that turns a ref (`name`, `name@N`, `name@ALIAS`, `xxh3-128:<prefix>`) into one.
A bare `name` is the version pinned in the nearest `tokreg.lock` when there is one (its
stored content checked against the pinned hash), else the latest."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Optional

from sqlalchemy import Connection, select

from .errors import InputError, NotFoundError
from .store.models import Version, table

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$")


def check_name(name: str) -> str:
    if not NAME_RE.match(name):
        raise InputError(
            f"tokenizer name {name!r} is not valid: use letters, digits, '.', '_' and '-', starting "
            "with a letter or digit (no '@', which separates the version)"
        )
    return name


@dataclass(frozen=True)
class VersionInfo:
    id: int
    name: str
    number: int
    algorithm: str
    config: dict[str, Any]
    vocab_size: int
    content_hash: str
    sha256: str
    source: str
    created_at: datetime
    message: Optional[str]

    @property
    def ref(self) -> str:
        return f"{self.name}@{self.number}"

    def to_json(self) -> dict[str, Any]:
        return {
            "ref": self.ref,
            "name": self.name,
            "version": self.number,
            "algorithm": self.algorithm,
            "vocab_size": self.vocab_size,
            "hash": self.content_hash,
            "sha256": self.sha256,
            "source": self.source,
            "created_at": self.created_at.isoformat(),
            "message": self.message,
            "config": self.config,
        }


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
    t = table(Version)
    stmt = select(t).order_by(t.c.name, t.c.number)
    if name is not None:
        stmt = stmt.where(t.c.name == name)
    return _rows(conn, stmt)


def _names(conn: Connection) -> list[str]:
    t = table(Version)
    return list(conn.execute(select(t.c.name).distinct().order_by(t.c.name)).scalars())


def _what_exists(conn: Connection) -> str:
    names = _names(conn)
    if not names:
        return "the registry is empty (train one with `tokreg train NAME FILE... --vocab-size N`)"
    shown = ", ".join(names[:20]) + (f", … ({len(names)} in all)" if len(names) > 20 else "")
    return f"the registry has: {shown}"


def resolve(conn: Connection, ref: str, *, lock: Any = None) -> VersionInfo:
    """The version a ref names. Raises NotFoundError saying what exists when it names none.
    `lock`: a lockfile path, None to search from the cwd upward, False to ignore lockfiles."""
    t = table(Version)
    ref = ref.strip()
    if ref.startswith("xxh3-128:") or ref.startswith("sha256:"):
        col = t.c.content_hash if ref.startswith("xxh3-128:") else t.c.sha256
        hits = _rows(
            conn, select(t).where(col.startswith(ref, autoescape=True)).order_by(t.c.name, t.c.number)
        )
        if not hits:
            raise NotFoundError(
                f"no version has a hash starting with {ref!r}; `tokreg list` shows the hashes"
            )
        if len({h.content_hash for h in hits}) > 1:
            refs = ", ".join(h.ref for h in hits[:10])
            raise NotFoundError(f"hash prefix {ref!r} is ambiguous: it matches {refs}; give more digits")
        return hits[0]
    name, _, version = ref.partition("@")
    if not name:
        raise InputError(f"ref {ref!r} has no name; write NAME, NAME@N or a hash prefix")
    versions = all_versions(conn, name)
    if not version and lock is not False:
        from .verify import resolve_pinned

        pinned = resolve_pinned(conn, name, versions, lock)
        if pinned is not None:
            return pinned
    if not versions:
        raise NotFoundError(f"no tokenizer named {name!r}; {_what_exists(conn)}")
    if not version or version == "latest":
        return versions[-1]
    if version.isdigit():
        for v in versions:
            if v.number == int(version):
                return v
        nums = ", ".join(str(v.number) for v in versions)
        raise NotFoundError(f"{name} has no version {version}; its versions are {nums}")
    from .aliases import aliases_of, lookup

    vid = lookup(conn, name, version)
    for v in versions:
        if v.id == vid:
            return v
    have = ", ".join(f"@{a} (-> {n})" for a, n in aliases_of(conn, name).items()) or "none"
    raise NotFoundError(
        f"{name} has no version or alias {version!r}; its versions are "
        + ", ".join(str(v.number) for v in versions)
        + f"; its aliases: {have}"
    )


def load_rows(
    conn: Connection, version_id: int
) -> tuple[list[tuple[int, bytes, str, Optional[float]]], list[tuple[int, int, int]]]:
    """(tokens as (id, bytes, kind, score) in id order, merges as (left, right, result) in rank order)."""
    from .store.models import Merge, Token

    tt, mt = table(Token), table(Merge)
    tokens = [
        (r[0], bytes(r[1]), r[2], r[3])
        for r in conn.execute(
            select(tt.c.id, tt.c.bytes, tt.c.kind, tt.c.score)
            .where(tt.c.version_id == version_id)
            .order_by(tt.c.id)
        )
    ]
    merges = [
        (r[0], r[1], r[2])
        for r in conn.execute(
            select(mt.c.left_id, mt.c.right_id, mt.c.result_id)
            .where(mt.c.version_id == version_id)
            .order_by(mt.c.rank)
        )
    ]
    return tokens, merges
