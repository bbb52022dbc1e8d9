"""The built wheel carries the extension and the migrations: installed into a fresh venv,
`tokreg db upgrade` creates a new registry whose schema comes from the packaged migrations (and
`tokreg list` does not)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from tokreg.store import migrate

from .conftest import ROOT

# Builds the Rust extension from scratch and installs from the package index: minutes.
pytestmark = pytest.mark.slow


def test_wheel_installs_and_creates_schema_from_migrations(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(ROOT)],
        check=True,
        capture_output=True,
    )
    wheel = next(dist.glob("tokreg-*.whl"))
    import zipfile

    names = zipfile.ZipFile(wheel).namelist()
    assert any(n.startswith("tokreg/_core") for n in names)
    assert "tokreg/migrations/env.py" in names and "tokreg/migrations/versions/0001_initial.py" in names
    assert "tokreg/migrations/script.py.mako" in names and "tokreg/_core.pyi" in names
    # tokreg serve's pages and their CSS and scripts
    assert {"tokreg/serve/templates/base.html", "tokreg/serve/templates/version/samples.html"} <= set(names)
    assert {"tokreg/serve/static/tokreg.css", "tokreg/serve/static/playground.js"} <= set(names)

    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "-q", str(wheel)], check=True, capture_output=True)
    db = tmp_path / "fresh.db"
    tokreg = str(env_dir / "bin" / "tokreg")
    res = subprocess.run([tokreg, "list", "--db", str(db)], capture_output=True, text=True, cwd=tmp_path)
    assert res.returncode == 4 and "there is no registry at" in res.stderr and not db.exists()  # reads never create
    res = subprocess.run([tokreg, "db", "upgrade", "--db", str(db)], capture_output=True, text=True, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert f"created a new registry at {db}" in res.stderr
    # The schema was made by the packaged migrations: Alembic's table holds the head revision.
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT version_num FROM alembic_version").fetchone()[0] == migrate.head()
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert {"versions", "tokens", "merges", "training_runs", "vocab", "merges_view"} <= tables
    # And the installed package is the wheel's, not this source tree.
    where = subprocess.run(
        [str(py), "-c", "import tokreg; print(tokreg.__file__)"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=True,
    ).stdout
    assert str(env_dir) in where
