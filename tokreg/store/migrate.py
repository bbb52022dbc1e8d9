"""Alembic, driven from code: the migrations ship inside the package (`tokreg.migrations`),
so an installed tokreg can create and upgrade a registry with no alembic.ini around.

Opening a registry that is already at the newest revision (the usual case) reads the
`alembic_version` row with plain SQL and compares it with `HEAD`; Alembic itself is imported
only when there is something to upgrade. That keeps ~12 MB and ~80 ms of imports out of every
`tokreg` command and every process that loads a tokenizer. A test checks that `HEAD` is the
head of the shipped migration scripts.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Engine, inspect, text

if TYPE_CHECKING:
    from alembic.config import Config

#: The newest migration's revision id (tests/test_store.py checks it against the scripts).
HEAD = "0005"


def config(engine: Engine | None = None) -> Config:
    from alembic.config import Config  # Alembic only when there is a migration to run (see above)

    migrations = importlib.import_module("tokreg.migrations")  # shipped inside the package
    cfg = Config()
    cfg.set_main_option("script_location", str(Path(str(migrations.__file__)).parent))
    cfg.attributes["engine"] = engine
    return cfg


def head() -> str | None:
    """The head revision of the shipped migration scripts, as Alembic sees it."""
    from alembic.script import ScriptDirectory  # deferred: see above

    return ScriptDirectory.from_config(config()).get_current_head()


def current(engine: Engine) -> str | None:
    """The registry's schema revision, or None for an empty database."""
    with engine.connect() as conn:
        if not inspect(conn).has_table("alembic_version"):
            return None
        rows = conn.execute(text("SELECT version_num FROM alembic_version")).scalars().all()
    return rows[0] if len(rows) == 1 else None


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Brings the schema to `revision`; does nothing (cheaply, without Alembic) when it is
    already at the head."""
    if revision == "head" and current(engine) == HEAD:
        return
    from alembic import command  # deferred: see above

    command.upgrade(config(engine), revision)
