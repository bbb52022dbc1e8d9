"""`tokreg db`: the registry's schema (it is also upgraded automatically on open)."""

from __future__ import annotations

from typing import Optional

import click

from .common import db_option, open_registry, say_created


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
    say_created(reg)
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


@db.command(name="grant-read")
@click.argument("role")
@db_option
def grant_read(role: str, db: Optional[str]) -> None:
    """PostgreSQL: let the existing role ROLE read tokreg's tables and views, and nothing else.

    Give `tokreg sql` a URL of that role for the strongest read-only guarantee: the server
    itself then refuses anything but reading. Run it again after `tokreg db upgrade`.

    \b
    Example:
        tokreg db grant-read tokreg_reader --db postgresql://owner@db.example/tokreg
    """
    names = open_registry(db).grant_read(role)
    click.echo(f"{role} may now read {len(names)} tables and views: {', '.join(names)}")
