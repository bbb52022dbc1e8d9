"""Aliases (`name@prod`, `name@staging`): names that move between the versions of one
tokenizer, with every move kept in `alias_events`; the history of a name; and `rm`, which
removes a version only when no alias points at it. Versions themselves are never rewritten.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Optional

from sqlalchemy import Connection, delete, insert, select, update

from ..data import AliasMove, LogEntry, VersionInfo
from ..errors import InputError, NotFoundError
from . import lineage
from .names import check_name
from .refs import alias_target, aliases_of, all_versions, resolve
from .schema import Alias, AliasEvent, Version, table

ALIAS_RE = re.compile(r"^[A-Za-z][A-Za-z0-9._-]{0,99}$")
RESERVED = {"latest"}


def check_alias(alias: str) -> str:
    if not ALIAS_RE.match(alias) or alias in RESERVED:
        raise InputError(
            f"alias {alias!r} is not valid: start with a letter, then letters, digits, '.', '_' or '-' "
            "(numbers name versions, and 'latest' always means the newest version)"
        )
    return alias


def tag(conn: Connection, v: VersionInfo, alias: str) -> AliasMove:
    """Points `name@alias` at `v` (resolved by the caller); records the move."""
    check_alias(alias)
    if _number(conn, v.id) is None:
        raise _gone(v)
    t = table(Alias)
    now = datetime.now(timezone.utc)
    old_vid = alias_target(conn, v.name, alias)
    old = _number(conn, old_vid)
    if old_vid == v.id:
        return AliasMove(v.ref, f"{v.name}@{alias}", old, v.number, moved=False)
    if old_vid is None:
        conn.execute(insert(t).values(name=v.name, alias=alias, version_id=v.id, updated_at=now))
    else:
        conn.execute(update(t).where(t.c.name == v.name, t.c.alias == alias).values(version_id=v.id, updated_at=now))
    conn.execute(
        insert(table(AliasEvent)).values(name=v.name, alias=alias, old_version=old, new_version=v.number, at=now)
    )
    return AliasMove(v.ref, f"{v.name}@{alias}", old, v.number, moved=True)


def untag(conn: Connection, name: str, alias: str) -> int:
    """Deletes `name@alias`; returns the version number it pointed at."""
    name = name.partition("@")[0]
    check_name(name)
    vid = alias_target(conn, name, alias)
    if vid is None:
        have = ", ".join(f"{name}@{a}" for a in aliases_of(conn, name)) or "none"
        raise NotFoundError(f"{name} has no alias {alias!r}; its aliases: {have}")
    old = _number(conn, vid)
    t = table(Alias)
    conn.execute(delete(t).where(t.c.name == name, t.c.alias == alias))
    conn.execute(
        insert(table(AliasEvent)).values(
            name=name, alias=alias, old_version=old, new_version=None, at=datetime.now(timezone.utc)
        )
    )
    assert old is not None
    return old


def log(conn: Connection, name: str) -> list[LogEntry]:
    """The history of `name`, oldest first: one entry per version created (with its lineage)
    and per alias move."""
    check_name(name)
    versions = all_versions(conn, name)
    e = table(AliasEvent)
    events = list(conn.execute(select(e).where(e.c.name == name).order_by(e.c.at, e.c.id)).mappings())
    if not versions and not events:
        resolve(conn, name)  # raises, saying what exists
    out = [
        LogEntry(
            at=v.created_at,
            event="version",
            ref=v.ref,
            hash=v.content_hash,
            detail=v.message or v.source,
            lineage=lineage.of(conn, v),
        )
        for v in versions
    ]
    for ev in events:
        old = "(new)" if ev["old_version"] is None else f"@{ev['old_version']}"
        new = "(deleted)" if ev["new_version"] is None else f"@{ev['new_version']}"
        out.append(
            LogEntry(
                at=ev["at"],
                event="alias",
                ref=f"{name}@{ev['alias']}",
                hash=None,
                detail=f"{old} -> {new}",
                old=ev["old_version"],
                new=ev["new_version"],
            )
        )
    out.sort(key=lambda r: _aware(r.at))
    return out


def remove(conn: Connection, v: VersionInfo) -> VersionInfo:
    """Deletes `v` (resolved by the caller) and its rows. Refuses while an alias points at it."""
    a = table(Alias)
    held = list(conn.execute(select(a.c.alias).where(a.c.version_id == v.id).order_by(a.c.alias)).scalars())
    if held:
        names = ", ".join(f"{v.name}@{x}" for x in held)
        raise InputError(
            f"{v.ref} is still named by {names}; move or delete the alias first "
            f"(`tokreg tag {v.name}@N {held[0]}` or `tokreg tag {v.name} {held[0]} --delete`)"
        )
    if conn.execute(delete(table(Version)).where(table(Version).c.id == v.id)).rowcount == 0:
        raise _gone(v)
    return v


def _gone(v: VersionInfo) -> NotFoundError:
    # A write after a confirmation: the version was resolved, then removed by someone else.
    return NotFoundError(
        f"{v.ref} ({v.content_hash}) is no longer in the registry; `tokreg list {v.name}` shows what is"
    )


def _number(conn: Connection, vid: Optional[int]) -> Optional[int]:
    if vid is None:
        return None
    t = table(Version)
    return conn.execute(select(t.c.number).where(t.c.id == vid)).scalar()


def _aware(dt: datetime) -> datetime:
    # SQLite hands back naive datetimes (stored as UTC); others keep the zone.
    return dt if dt.tzinfo is not None else dt.replace(tzinfo=timezone.utc)
