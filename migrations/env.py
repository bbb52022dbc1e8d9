"""Alembic environment for tokreg: runs against the engine tokreg hands over (or, from the
`alembic` command line, the URL in sqlalchemy.url / TOKREG_DB)."""

from __future__ import annotations

from alembic import context
from sqlalchemy import Engine

from tokreg.store.engine import create, resolve_url
from tokreg.store.schema import Base

config = context.config
target_metadata = Base.metadata


def run() -> None:
    engine: Engine | None = config.attributes.get("engine")
    if engine is None:
        engine = create(config.get_main_option("sqlalchemy.url") or resolve_url())
    with engine.begin() as connection:
        context.configure(
            connection=connection,
            target_metadata=target_metadata,
            # SQLite cannot ALTER most things; batch mode rebuilds tables instead.
            render_as_batch=connection.dialect.name == "sqlite",
            compare_type=True,
        )
        context.run_migrations()


run()
