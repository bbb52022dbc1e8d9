"""Alembic environment for tokreg: runs against the engine tokreg hands over (or, from the
`alembic` command line, the location in sqlalchemy.url / TOKREG_DB).

All pending migrations run in one write transaction under the migration lock (see
tokreg/store/migrate.py): a crash at any statement leaves the registry as it was, and two
processes never migrate the same registry at once. `started_from` tells the caller which
revision the registry had when the lock was taken (None: this run created it).
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import Engine

from tokreg.store.engine import create, locate, write_transaction
from tokreg.store.migrate import lock, revision_of
from tokreg.store.schema import Base

config = context.config
target_metadata = Base.metadata


def run() -> None:
    engine: Engine | None = config.attributes.get("engine")
    if engine is None:
        engine = create(locate(config.get_main_option("sqlalchemy.url")))
    with write_transaction(engine) as connection:
        lock(connection)
        config.attributes["started_from"] = revision_of(connection)
        context.configure(
            connection=connection,
            target_metadata=target_metadata,
            # SQLite cannot ALTER most things; batch mode rebuilds tables instead.
            render_as_batch=connection.dialect.name == "sqlite",
            compare_type=True,
        )
        context.run_migrations()


run()
