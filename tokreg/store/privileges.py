"""What the registry's database role may do beyond reading tokreg's tables, said in one line.

`tokreg sql` and the `/sql` page of `tokreg serve` check every statement against an allow-list
before it runs; on PostgreSQL the database itself is the stronger guard when the URL's role can
only read (`tokreg db grant-read`). `role_warning` tells the faces when that second guard is
missing, so they can say it once: a superuser, a role that may write or own tokreg's tables, or
a member of the server's file/program/signal roles.

SQLite has no roles: the file's permissions are the guard, and `tokreg serve` opens the file
read-only, so there is nothing to say.
"""

from __future__ import annotations

from typing import Optional

from sqlalchemy import Engine, text

from .schema import Base

#: PostgreSQL's predefined roles that reach outside the database (files, programs, other sessions).
_SERVER_ROLES = ("pg_read_server_files", "pg_write_server_files", "pg_execute_server_program", "pg_signal_backend")

_ADVICE = "connect as a role made by `tokreg db grant-read ROLE` to have the server refuse everything but reading"


def role_warning(engine: Engine) -> Optional[str]:
    """One line saying what the connection's PostgreSQL role can do beyond reading tokreg's
    tables and what to do about it, or None when it can only read (or the registry is SQLite).
    Reads the catalogs only; never raises for a database it cannot ask (returns None)."""
    if engine.dialect.name != "postgresql":
        return None
    try:
        with engine.connect() as conn:
            user, superuser = conn.execute(
                text("SELECT current_user, rolsuper FROM pg_roles WHERE rolname = current_user")
            ).one()
            if superuser:
                return f"the registry's PostgreSQL role {user!r} is a superuser; {_ADVICE}"
            member = [
                r
                for r in _SERVER_ROLES
                if conn.execute(
                    text("SELECT pg_has_role(current_user, oid, 'MEMBER') FROM pg_roles WHERE rolname = :r"), {"r": r}
                ).scalar()
            ]
            if member:
                return f"the registry's PostgreSQL role {user!r} is a member of {', '.join(member)}; {_ADVICE}"
            tables = sorted(Base.metadata.tables)
            writable = conn.execute(
                text(
                    "SELECT c.relname FROM pg_class c WHERE c.relname = ANY(:t) "
                    "AND c.relnamespace = to_regnamespace(current_schema())::oid "
                    "AND (pg_has_role(current_user, c.relowner, 'USAGE') "
                    "OR has_table_privilege(c.oid, 'INSERT,UPDATE,DELETE,TRUNCATE')) ORDER BY 1 LIMIT 1"
                ),
                {"t": tables},
            ).scalar()
            if writable:
                what = f"may write or owns tokreg's tables ({writable}, …)"
                return f"the registry's PostgreSQL role {user!r} {what}; {_ADVICE}"
    except Exception:  # a catalog we may not read: nothing to add to the query's own errors
        return None
    return None
