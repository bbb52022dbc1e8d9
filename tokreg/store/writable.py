"""Whether a registry can be written, asked before the work starts (a training can take hours):
file and folder permissions, `chattr +i`, read-only media, a PostgreSQL role without the
privileges, a read-only session or a standby server. Each answer is one ReadOnlyError line
saying why and what to do. Nothing is created.
"""

from __future__ import annotations

import os
from pathlib import Path

from sqlalchemy import Engine, inspect, text
from sqlalchemy.exc import DBAPIError

from ..errors import InputError, ReadOnlyError
from .engine import Location, error_line
from .sqlite_files import existing_ancestor, read_only_media

#: What training and importing insert into or update (PostgreSQL privileges checked before the work).
WRITTEN_TABLES = (
    "versions",
    "tokens",
    "merges",
    "training_runs",
    "training_rounds",
    "samples",
    "version_numbers",
    "version_contents",
)


def _sqlite_writable(engine: Engine, loc: Location, exists: bool) -> None:
    assert loc.path is not None
    p = loc.path
    folder = existing_ancestor(p.parent)
    if read_only_media(p):
        raise ReadOnlyError(f"the registry {p} is on a read-only file system; copy it to writable storage to add to it")
    if exists and not os.access(p, os.W_OK):
        raise ReadOnlyError(
            f"the registry file {p} is read-only (its permissions or attributes forbid writing); "
            "make it writable (chmod u+w; chattr -i), or use another registry"
        )
    if not os.access(folder, os.W_OK | os.X_OK):
        what = "the folder of the registry" if folder == p.parent else "the nearest existing folder of the registry"
        raise ReadOnlyError(
            f"{what} {p}, {folder}, is not writable; SQLite needs to create {p.name}-wal and {p.name}-shm beside it"
        )
    for side in ("-wal", "-shm"):
        extra = Path(str(p) + side)
        if extra.exists() and not os.access(extra, os.W_OK):
            raise ReadOnlyError(f"the registry's {extra.name} is read-only; make it writable, or remove it")
    if exists:
        _probe_write(engine, loc)


def _probe_write(engine: Engine, loc: Location) -> None:
    """Rewrites one row in a transaction that is rolled back: what the file checks cannot see
    (a file SQLite opened read-only, a read-only -shm) shows here."""
    try:
        with engine.connect().execution_options(tokreg_write=True) as conn:
            trans = conn.begin()
            try:
                conn.execute(text("UPDATE alembic_version SET version_num = version_num"))
            finally:
                trans.rollback()
    except DBAPIError as e:
        raise ReadOnlyError(f"the registry at {loc.shown} cannot be written: {error_line(e)}") from None


def _postgres_writable(engine: Engine, loc: Location, exists: bool) -> None:
    try:
        with engine.connect() as conn:
            user = conn.execute(text("SELECT current_user")).scalar()
            if conn.execute(text("SELECT pg_is_in_recovery()")).scalar():
                raise ReadOnlyError(f"the PostgreSQL server of {loc.shown} is a read-only standby; use the primary")
            if conn.execute(text("SHOW transaction_read_only")).scalar() == "on":
                raise ReadOnlyError(
                    f"sessions of role {user!r} on {loc.shown} are read-only (default_transaction_read_only); "
                    "use a role that can write"
                )
            if not exists:
                ok = conn.execute(text("SELECT has_schema_privilege(current_schema(), 'CREATE')")).scalar()
                if not ok:
                    raise ReadOnlyError(
                        f"role {user!r} cannot create tables in the schema of {loc.shown}, so it cannot create a "
                        "registry there; ask the database owner to GRANT CREATE, or use a role that can"
                    )
                return
            present = set(inspect(conn).get_table_names())
            needed = [(t, "INSERT") for t in WRITTEN_TABLES if t in present] + [("version_numbers", "UPDATE")]
            missing = [
                f"{what} on {t}"
                for t, what in needed
                if t in present
                and not conn.execute(text("SELECT has_table_privilege(:t, :p)"), {"t": t, "p": what}).scalar()
            ]
            # A new row's id comes from a sequence, which needs its own privilege.
            seq = conn.execute(text("SELECT pg_get_serial_sequence('versions', 'id')")).scalar()
            if seq and not conn.execute(text("SELECT has_sequence_privilege(:s, 'USAGE')"), {"s": seq}).scalar():
                missing.append(f"USAGE on {seq}")
            if missing:
                raise ReadOnlyError(
                    f"role {user!r} cannot write to the registry at {loc.shown} (no {', '.join(missing)}); "
                    "use a role that can write, or ask the owner to GRANT it"
                )
    except DBAPIError as e:
        raise InputError(f"cannot open the registry at {loc.shown}: {error_line(e)}") from None


def check_writable(engine: Engine, loc: Location, exists: bool) -> None:
    """Raises ReadOnlyError, in one line saying why and what to do, when a write to the registry
    (or creating it, when it does not exist yet) cannot succeed."""
    if loc.path is not None:
        _sqlite_writable(engine, loc, exists)
    else:
        _postgres_writable(engine, loc, exists)


def prepare_folder(loc: Location) -> None:
    """Creates the folder a new SQLite registry goes in."""
    if loc.path is None:
        return
    try:
        loc.path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ReadOnlyError(f"cannot create the registry folder {loc.path.parent}: {e.strerror}") from None
