"""Where the registry lives, whether one is there, whether it can be written, and how it is opened.

The location is `--db` / `TOKREG_DB` (a path or a SQLAlchemy URL), else
`$XDG_DATA_HOME/tokreg/registry.db`, else `~/.local/share/tokreg/registry.db`. tokreg keeps
registries in SQLite (a path, or `sqlite:///PATH`) or PostgreSQL (`postgresql://…`); anything
else is refused in one line before a file is touched or a server is reached.

Looking never creates: `probe` tells a registry from nothing at all (no file, an empty file or
database) and from something else (not a SQLite file, another program's tables); only a write
creates the registry (`store/migrate.py`), and `check_writable` says before the work starts
whether a write could succeed (file and folder permissions, read-only media, a read-only
PostgreSQL role or server).

SQLite registries run in WAL mode (set when tokreg creates or upgrades one) with foreign keys,
and tokreg emits BEGIN itself instead of
leaving it to the sqlite3 driver, whose legacy mode runs DDL outside any transaction: readers
get `BEGIN` (one consistent snapshot per connection), writers `BEGIN IMMEDIATE`, which takes
the write lock before the first read, so a writer's reads (the next version number) can never
go stale under another writer. A writer waits up to `BUSY_SECONDS` for another's transaction.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from sqlalchemy import Connection, Engine, create_engine, event, inspect, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError
from sqlalchemy.pool import NullPool

from ..errors import InputError, NotFoundError, ReadOnlyError

#: How long a SQLite writer waits for another writer's transaction before giving up.
BUSY_SECONDS = 300
#: The first bytes of every SQLite database file.
_SQLITE_MAGIC = b"SQLite format 3\x00"
#: Looks like a URL scheme ("postgres:", "::x"), but without the "//" of a URL: neither a path nor a URL.
_SCHEME_LIKE = re.compile(r"^(:|[A-Za-z][A-Za-z0-9+.\-]+:)")
_BACKENDS = {"sqlite": "SQLite", "postgresql": "PostgreSQL"}
#: The tables a registry has, whatever its revision (the others came later).
_CORE_TABLES = {"versions", "tokens", "merges", "training_runs"}
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


def default_path() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "tokreg" / "registry.db"


@dataclass(frozen=True)
class Location:
    """A registry's location: its SQLAlchemy URL and, for SQLite, its file."""

    url: str
    path: Optional[Path]

    @property
    def shown(self) -> str:
        """What messages name: the file, or the URL with any password hidden."""
        return str(self.path) if self.path is not None else make_url(self.url).render_as_string(hide_password=True)

    @property
    def backend(self) -> str:
        return "sqlite" if self.path is not None else make_url(self.url).get_backend_name()


def locate(db: str | os.PathLike[str] | None = None) -> Location:
    """The location named by `db`, `TOKREG_DB` or the default. A string that is neither a path
    nor a URL of a supported database is an InputError; nothing is touched."""
    where = os.fspath(db) if db is not None else os.environ.get("TOKREG_DB") or str(default_path())
    if not where.strip():
        raise InputError("the registry location is empty; give a file path or a database URL (--db / TOKREG_DB)")
    if "://" not in where:
        if _SCHEME_LIKE.match(where) and not re.match(r"^[A-Za-z]:[\\/]", where):  # not a Windows drive
            raise InputError(
                f"registry location {where!r} is neither a path nor a database URL (a URL looks like "
                "postgresql://USER@HOST/DB); for a file whose name has a ':' write ./NAME"
            )
        path = Path(where).expanduser().resolve()
        return Location(url=URL.create("sqlite", database=str(path)).render_as_string(), path=path)
    try:
        url = make_url(where)
    except (ArgumentError, ValueError):  # ValueError: e.g. a port that is not a number
        raise InputError(
            f"registry location {where!r} is not a valid database URL; write e.g. postgresql://USER@HOST/DB"
        ) from None
    backend = url.get_backend_name()
    if backend not in _BACKENDS:
        raise InputError(
            f"tokreg keeps registries in SQLite or PostgreSQL, not {backend!r} ({url.render_as_string()}); "
            "give a file path or a postgresql:// URL"
        )
    if backend == "sqlite":
        if not url.database or url.database == ":memory:" or url.query.get("mode") == "memory":
            raise InputError(
                f"{where!r} is an in-memory SQLite database, which ends with the process; give a file path"
            )
        path = Path(url.database).expanduser().resolve()
        return Location(url=url.set(database=str(path)).render_as_string(hide_password=False), path=path)
    return Location(url=url.render_as_string(hide_password=False), path=None)


# -- engines -------------------------------------------------------------------------------------


def _sqlite_connect(dbapi_conn: Any, _record: Any) -> None:
    dbapi_conn.isolation_level = None  # tokreg emits BEGIN itself (see _sqlite_begin)
    cur = dbapi_conn.cursor()
    cur.execute(f"PRAGMA busy_timeout={BUSY_SECONDS * 1000}")  # first: the next pragma may wait for a lock
    cur.execute("PRAGMA foreign_keys=ON")
    cur.close()


def use_wal(engine: Engine) -> None:
    """Puts a SQLite registry in WAL mode (readers never wait for a writer; it stays set in the
    file). Done when tokreg creates or upgrades a registry, never on merely opening a file, which
    could be another program's database."""
    if engine.dialect.name != "sqlite":
        return
    raw = engine.raw_connection()
    try:
        cur = raw.driver_connection.cursor()  # type: ignore[union-attr]
        if cur.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            cur.execute("PRAGMA journal_mode=WAL")
        cur.close()
    finally:
        raw.close()


def _sqlite_connect_immutable(dbapi_conn: Any, _record: Any) -> None:
    dbapi_conn.isolation_level = None
    dbapi_conn.execute("PRAGMA foreign_keys=ON")


def _sqlite_begin(conn: Connection) -> None:
    conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get("tokreg_write") else "BEGIN")


def _read_only_media(path: Path) -> bool:
    folder = _existing_ancestor(path.parent)
    try:
        return bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):  # no statvfs (Windows)
        return False


def create(loc: Location, *, pool: bool = True) -> Engine:
    """An engine for `loc` (nothing is connected or created yet). A SQLite file on read-only media
    is opened immutable (no lock files can be made there, and nobody can be writing to it)."""
    url = loc.url
    immutable = False
    if loc.path is not None and _read_only_media(loc.path) and loc.path.is_file():
        wal = Path(str(loc.path) + "-wal")
        immutable = not (wal.exists() and wal.stat().st_size > 0)
        if immutable:
            url = f"sqlite:///file:{loc.path}?mode=ro&immutable=1&uri=true"
    kwargs: dict[str, Any] = {} if pool else {"poolclass": NullPool}
    try:
        engine = create_engine(url, **kwargs)
    except (NoSuchModuleError, ModuleNotFoundError, ImportError) as e:
        raise InputError(
            f"cannot use {loc.shown}: its database driver is missing ({e}); for PostgreSQL, "
            "pip install 'psycopg[binary]'"
        ) from None
    except ArgumentError as e:
        raise InputError(f"cannot use {loc.shown}: {e}") from None
    if engine.dialect.name == "sqlite":
        event.listen(engine, "connect", _sqlite_connect_immutable if immutable else _sqlite_connect)
        event.listen(engine, "begin", _sqlite_begin)
    return engine


def fresh(engine: Engine) -> Engine:
    """A new engine to the same database with no pool, for asking what happened after an
    interruption that may have left `engine`'s pool half-way through returning a connection."""
    clone = create_engine(engine.url, poolclass=NullPool)
    if clone.dialect.name == "sqlite":
        event.listen(clone, "connect", _sqlite_connect)
        event.listen(clone, "begin", _sqlite_begin)
    return clone


@contextlib.contextmanager
def write_transaction(engine: Engine) -> Iterator[Connection]:
    """A connection in a write transaction (SQLite: BEGIN IMMEDIATE), committed on success."""
    with engine.connect().execution_options(tokreg_write=True) as conn, conn.begin():
        yield conn


def error_line(e: BaseException) -> str:
    """The database's own message, first line only (drivers add SQL and links below it)."""
    orig = getattr(e, "orig", None) or e
    return str(orig).strip().splitlines()[0] if str(orig).strip() else type(orig).__name__


#: SQLite's SQLITE_READONLY and PostgreSQL's insufficient_privilege / read_only_sql_transaction.
_READ_ONLY_CODES = {8}
_READ_ONLY_STATES = {"42501", "25006"}


def _is_read_only(e: DBAPIError) -> bool:
    orig = e.orig
    code = getattr(orig, "sqlite_errorcode", None)
    return (code is not None and code & 0xFF in _READ_ONLY_CODES) or getattr(
        orig, "sqlstate", None
    ) in _READ_ONLY_STATES


@contextlib.contextmanager
def database_errors(loc: Location) -> Iterator[None]:
    """Turns a database failure into one line naming the registry (ReadOnlyError when it
    refuses writes), for errors the checks before a command could not foresee."""
    try:
        yield
    except DBAPIError as e:
        if _is_read_only(e):
            raise ReadOnlyError(f"the registry at {loc.shown} cannot be written: {error_line(e)}") from None
        raise InputError(f"the registry at {loc.shown} failed: {error_line(e)}") from None


# -- what is at a location -----------------------------------------------------------------------


@dataclass(frozen=True)
class Found:
    """What `probe` found: `revision` is the schema revision of a registry, None when there is
    no registry yet (`missing`: no file or an empty database)."""

    exists: bool
    revision: Optional[str]


def _existing_ancestor(p: Path) -> Path:
    while not p.exists() and p != p.parent:
        p = p.parent
    return p


def _check_sqlite_file(loc: Location) -> bool:
    """Whether the SQLite file exists with content; raises InputError when the path is not a
    SQLite database at all."""
    assert loc.path is not None
    p = loc.path
    if p.is_dir():
        raise InputError(f"registry location {p} is a folder; give a file path such as {p / 'registry.db'}")
    if not p.exists():
        if p.parent.exists() and not p.parent.is_dir():
            raise InputError(f"registry location {p}: {p.parent} is a file, not a folder")
        return False
    try:
        with open(p, "rb") as fh:
            head = fh.read(len(_SQLITE_MAGIC))
    except OSError as e:
        raise InputError(f"cannot read the registry file {p}: {e.strerror}") from None
    if not head:
        return False  # an empty file is an empty database: nothing there yet
    if head != _SQLITE_MAGIC:
        raise InputError(
            f"{p} is not a SQLite database (it does not start with SQLite's header); give the path of a "
            "tokreg registry, or a new path to create one there"
        )
    return True


def probe(engine: Engine, loc: Location) -> Found:
    """What is at `loc`: a registry (and its revision), or nothing yet. Never creates anything;
    raises InputError for a location that holds something else or cannot be reached."""
    if loc.path is not None and not _check_sqlite_file(loc):
        return Found(exists=False, revision=None)
    try:
        with engine.connect() as conn:
            tables = set(inspect(conn).get_table_names())
            revision = None
            if "alembic_version" in tables:
                rows = conn.execute(text("SELECT version_num FROM alembic_version")).scalars().all()
                revision = rows[0] if len(rows) == 1 else None
    except DBAPIError as e:
        raise InputError(f"cannot open the registry at {loc.shown}: {error_line(e)}") from None
    if not tables and revision is None:
        return Found(exists=False, revision=None)
    if revision is None or not tables >= _CORE_TABLES:
        if loc.path is not None:
            shown = ", ".join(sorted(tables)[:6]) + (", …" if len(tables) > 6 else "")
            raise InputError(
                f"{loc.path} is a SQLite database of another program (tables: {shown}), not a tokreg registry; "
                "give another path"
            )
        clash = sorted(tables & (_CORE_TABLES | {"alembic_version"}))
        if clash:
            raise InputError(
                f"the database at {loc.shown} has tables named like tokreg's ({', '.join(clash)}) that are not a "
                "tokreg registry; use another database (or schema) for the registry"
            )
        return Found(exists=False, revision=None)
    return Found(exists=True, revision=revision)


def no_registry(loc: Location) -> NotFoundError:
    """The error for a read where no registry is."""
    return NotFoundError(
        f"there is no registry at {loc.shown}; create one by training or importing a tokenizer "
        "(`tokreg train NAME FILE... --vocab-size N`, `tokreg import ...`), or point --db / TOKREG_DB at one"
    )


# -- can it be written? --------------------------------------------------------------------------


def _sqlite_writable(engine: Engine, loc: Location, exists: bool) -> None:
    assert loc.path is not None
    p = loc.path
    folder = _existing_ancestor(p.parent)
    if _read_only_media(p):
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
            missing = [
                t
                for t in WRITTEN_TABLES
                if inspect(conn).has_table(t)
                and not conn.execute(text("SELECT has_table_privilege(:t, 'INSERT')"), {"t": t}).scalar()
            ]
            if missing:
                raise ReadOnlyError(
                    f"role {user!r} cannot write to the registry at {loc.shown} (no INSERT on {', '.join(missing)}); "
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


def side_files(loc: Location) -> Optional[list[Path]]:
    """For a SQLite registry this process cannot write: its -wal and -shm files that do not exist
    yet (SQLite makes them even to read, and cannot remove them after a read-only session);
    `tidy` removes them again. None when there is nothing to tidy."""
    if loc.path is None or not loc.path.is_file() or os.access(loc.path, os.W_OK):
        return None
    return [q for q in (Path(str(loc.path) + "-wal"), Path(str(loc.path) + "-shm")) if not q.exists()]


def tidy(engine: Engine, made: Optional[list[Path]]) -> None:
    """Closes `engine`'s connections and removes the side files a read-only session made, so
    reading (or failing to write to) a read-only registry leaves its folder as it was."""
    engine.dispose()
    if not made or any(q.name.endswith("-wal") and q.exists() and q.stat().st_size for q in made):
        return
    for q in made:
        with contextlib.suppress(OSError):
            q.unlink()


def has_table(engine: Engine, name: str) -> bool:
    return inspect(engine).has_table(name)
