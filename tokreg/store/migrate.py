"""Alembic, driven from code: the migrations ship inside the package (`tokreg.migrations`),
so an installed tokreg can create and upgrade a registry with no alembic.ini around."""

from __future__ import annotations

import importlib
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine


def config(engine: Engine | None = None) -> Config:
    migrations = importlib.import_module("tokreg.migrations")  # shipped inside the package
    cfg = Config()
    cfg.set_main_option("script_location", str(Path(str(migrations.__file__)).parent))
    cfg.attributes["engine"] = engine
    return cfg


def head() -> str | None:
    return ScriptDirectory.from_config(config()).get_current_head()


def current(engine: Engine) -> str | None:
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Brings the schema to `revision`; does nothing (cheaply) when it is already there."""
    if revision == "head" and current(engine) == head():
        return
    command.upgrade(config(engine), revision)
