"""The suite never touches the user's own directories: conftest's session fixture `user_dirs`
points the XDG directories at a temp dir, so tokreg's default registry and its compiled-content
cache resolve under the session's temp dir, in this process and in the processes tests start.
These tests do not ask for the fixture: they fail if it is not in force."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import tokreg
from tokreg import BpeOptions, Registry

from .conftest import ROOT


def _under(path: Path, folder: Path) -> bool:
    return str(path.resolve()).startswith(str(folder.resolve()) + os.sep)


@pytest.fixture
def session_temp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.getbasetemp()


def test_the_xdg_directories_are_the_sessions(session_temp: Path) -> None:
    for var in ("XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME"):
        assert var in os.environ and _under(Path(os.environ[var]), session_temp), (var, os.environ.get(var))
    for var in ("TOKREG_DB", "TOKREG_CACHE", "TOKREG_LOCK"):
        assert var not in os.environ, f"{var} is set for every test: it may name the user's own {var[7:].lower()}"


def test_a_loaded_version_is_cached_under_the_session_temp_dir(
    registry: Registry, small_corpus: Path, session_temp: Path
) -> None:
    v = registry.train("cached", [small_corpus], BpeOptions(vocab_size=300))
    tokreg.load("cached@1", db=registry.url)
    name = v.content_hash.split(":")[1] + ".content"
    cached = [p for p in Path(os.environ["XDG_CACHE_HOME"]).rglob(name)]
    assert len(cached) == 1 and _under(cached[0], session_temp), cached
    assert cached[0].parent.parent.name == "tokreg"  # $XDG_CACHE_HOME/tokreg/compiled/


def test_a_started_process_resolves_the_registry_and_cache_there(
    registry: Registry, small_corpus: Path, session_temp: Path
) -> None:
    """A `tokreg` process started with the test's environment looks for its default registry, and
    caches what it loads, under the session's temp dir."""
    v = registry.train("child", [small_corpus], BpeOptions(vocab_size=280))
    res = subprocess.run([sys.executable, "-m", "tokreg", "list"], capture_output=True, text=True, cwd=ROOT)
    assert res.returncode == 4 and "there is no registry at " in res.stderr, res.stderr
    where = Path(res.stderr.split("there is no registry at ", 1)[1].split()[0].rstrip(";,:"))
    assert _under(where, session_temp), res.stderr
    name = v.content_hash.split(":")[1] + ".content"
    for p in Path(os.environ["XDG_CACHE_HOME"]).rglob(name):
        p.unlink()  # whatever this process cached: the child must write its own
    load = f"import tokreg; tokreg.load('child@1', db={str(registry.url)!r})"
    subprocess.run([sys.executable, "-c", load], check=True, cwd=ROOT)
    cached = list(Path(os.environ["XDG_CACHE_HOME"]).rglob(name))
    assert len(cached) == 1 and _under(cached[0], session_temp), cached
