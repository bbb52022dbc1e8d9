"""A throwaway PostgreSQL server for the tests: initdb into a temp dir, listening on a Unix
socket only (no TCP port), stopped at the end. Runs as the `postgres` user when the tests run
as root, since PostgreSQL refuses root."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Optional


def find_bin(name: str) -> Optional[str]:
    found = shutil.which(name)
    if found:
        return found
    hits = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return hits[-1] if hits else None


def unavailable() -> Optional[str]:
    """Why no server can be started here, or None when one can."""
    if find_bin("initdb") is None or find_bin("pg_ctl") is None:
        return "PostgreSQL server binaries (initdb, pg_ctl) are not installed"
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "the psycopg driver is not installed (pip install 'psycopg[binary]')"
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        return "running as root without runuser to drop to the postgres user"
    return None


@contextmanager
def server(base: Path) -> Iterator[str]:
    """Starts a server under `base`; yields its SQLAlchemy URL."""
    data, sock = base / "data", base / "sock"
    sock.mkdir(parents=True)
    as_user: list[str] = []
    if os.geteuid() == 0:
        import pwd

        pw = pwd.getpwnam("postgres")
        for p in (base, sock):
            os.chown(p, pw.pw_uid, pw.pw_gid)
        as_user = ["runuser", "-u", "postgres", "--"]
    run = lambda *cmd: subprocess.run([*as_user, *cmd], check=True, capture_output=True, text=True)  # noqa: E731
    run(
        find_bin("initdb") or "initdb",
        "-D",
        str(data),
        "-U",
        "tokreg",
        "--auth=trust",
        "-E",
        "UTF8",
        "--no-sync",
    )
    log = base / "server.log"
    run(
        find_bin("pg_ctl") or "pg_ctl",
        "-D",
        str(data),
        "-l",
        str(log),
        "-w",
        "-t",
        "60",
        "-o",
        f"-c listen_addresses='' -k {sock} -c fsync=off",
        "start",
    )
    try:
        yield f"postgresql+psycopg://tokreg@/postgres?host={sock}"
    finally:
        subprocess.run(
            [*as_user, find_bin("pg_ctl") or "pg_ctl", "-D", str(data), "-m", "immediate", "stop"],
            capture_output=True,
        )
