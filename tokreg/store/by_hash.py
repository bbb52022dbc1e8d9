"""Versions found by their exact content hash: how a pin (whose hash is the pin) and a copy
(which keeps every hash) find content in a registry, whatever its name and number there."""

from __future__ import annotations

from typing import Optional

from sqlalchemy import Connection, select

from ..data import VersionInfo
from . import reads, refs
from .schema import Version, table


def versions_with(conn: Connection, content_hash: str) -> list[VersionInfo]:
    """Every version whose content hash is exactly `content_hash`, oldest (lowest id) first."""
    t = table(Version)
    return refs.with_same_run(
        conn, refs._rows(conn, select(t).where(t.c.content_hash == content_hash).order_by(t.c.id))
    )


def labelled(conn: Connection, name: str, number: int) -> Optional[VersionInfo]:
    """The version `name@number`, or None."""
    t = table(Version)
    rows = refs._rows(conn, select(t).where(t.c.name == name, t.c.number == number))
    return rows[0] if rows else None


def content(conn: Connection, content_hash: str) -> Optional[bytes]:
    """The stored canonical content of the oldest version holding `content_hash`, checked
    against it (IntegrityError naming both hashes when it was changed), or None."""
    held = versions_with(conn, content_hash)
    return reads.read_version(conn, held[0], rows=False).content if held else None
