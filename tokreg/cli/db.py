"""`tokreg db`: the registry's schema (it is also upgraded automatically on open)."""

from __future__ import annotations

from typing import Optional

import click

from .common import db_option, open_registry


@click.group()
def db() -> None:
    """Manage the registry's schema (it is also upgraded automatically on open).

    \b
    Example:
        tokreg db current
    """


@db.command()
@db_option
def upgrade(db: Optional[str]) -> None:
    """Upgrade the registry's schema to the newest migration.

    \b
    Example:
        tokreg db upgrade --db team.db
    """
    reg = open_registry(db)
    reg.upgrade()
    cur, _ = reg.schema_revision()
    click.echo(f"{reg.location}: schema at revision {cur} (newest)")


@db.command()
@db_option
def current(db: Optional[str]) -> None:
    """Print the registry's location and schema revision.

    \b
    Example:
        tokreg db current
    """
    reg = open_registry(db)
    cur, head = reg.schema_revision()
    click.echo(f"{reg.location}: schema at revision {cur}" + (" (newest)" if cur == head else f" (newest is {head})"))
