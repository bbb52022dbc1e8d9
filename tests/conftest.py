"""Shared fixtures: a real SQLite registry in a temp dir, the real Rust core, and the shared
corpora (found through TOKREG_TEST_DATA, default ../shared/data; tests that need them skip
with a reason when they are absent). For the whole session the user's own directories are
replaced by temp ones (`user_dirs`)."""

from __future__ import annotations

import hashlib
import itertools
import os
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Optional

import pytest
from click.testing import CliRunner, Result

from tokreg import Registry
from tokreg.cli import cli

from . import pg_server

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("TOKREG_TEST_DATA", ROOT.parent / "shared" / "data"))
CORPORA = ["kjv.txt", "dr.en.txt", "dr.zh-cn.txt"]


def _data_digests() -> dict[str, Optional[str]]:
    """Each file SHA256SUMS lists in the shared data: its sha256 now, or None when it is missing."""
    sums = DATA / "SHA256SUMS"
    if not sums.is_file():
        return {}
    out: dict[str, Optional[str]] = {}
    for line in sums.read_text(encoding="utf-8").splitlines():
        if line.strip():
            name = line.split()[-1]
            p = DATA / name
            out[name] = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else None
    return out


def _expected_digests() -> dict[str, str]:
    sums = DATA / "SHA256SUMS"
    return {x.split()[-1]: x.split()[0] for x in sums.read_text(encoding="utf-8").splitlines() if x.strip()}


def pytest_sessionstart(session: pytest.Session) -> None:
    """The shared data is checked against its SHA256SUMS before any test and again after the last
    one: a changed corpus makes dozens of unrelated tests fail strangely, so it is named instead."""
    now = _data_digests()
    if not now:
        return
    expected = _expected_digests()
    changed = sorted(n for n, d in now.items() if d is not None and d != expected[n])
    if changed:
        pytest.exit(
            f"the shared test data in {DATA} has changed: {', '.join(changed)} "
            f"{'does' if len(changed) == 1 else 'do'} not match SHA256SUMS "
            "(restore them: the README there says where each comes from)",
            returncode=3,
        )


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    now = _data_digests()
    if not now:
        return
    expected = _expected_digests()
    changed = sorted(n for n, d in now.items() if d is not None and d != expected[n])
    if changed:
        # A test wrote into the shared data: that must fail the run, whatever else passed.
        print(f"\nERROR: a test changed the shared test data in {DATA}: {', '.join(changed)}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def slow(*values: Any) -> Any:
    """One `parametrize` case marked slow: `slow("o200k_base")`, or `slow(a, b)` for a case of
    several arguments. Its id is the same as unmarked."""
    return pytest.param(*values, marks=pytest.mark.slow)


#: CORPORA for a comparison on every line of each: the fast lane keeps the two small ones (English
#: and Chinese, 0.8 MB each); kjv.txt (4.3 MB) is compared in `just test` only.
CORPORA_BY_LANE = [slow("kjv.txt"), "dr.en.txt", "dr.zh-cn.txt"]


#: The German and Japanese corpora that ../shared/tools/lang-corpora.sh builds (de.txt, ja.txt; never
#: committed): TOKREG_LANG_DATA, default ../langcorp beside the repository. `.ci/run` builds them.
LANG_DATA = Path(os.environ.get("TOKREG_LANG_DATA", ROOT.parent / "langcorp"))


def lang_file(name: str) -> Path:
    p = LANG_DATA / name
    if not p.exists():
        pytest.skip(
            f"language corpus {name} not found in {LANG_DATA} (build it with ../shared/tools/lang-corpora.sh DIR "
            "and set TOKREG_LANG_DATA=DIR)"
        )
    return p


def data_file(name: str) -> Path:
    p = DATA / name
    if not p.exists():
        pytest.skip(f"test data {name} not found in {DATA} (set TOKREG_TEST_DATA to the shared data folder)")
    return p


#: Of kjv.txt (73,811 lines of one English book: two thirds of all the shared lines), the sweeps
#: of `just test` take every KJV_STEP-th line, and every line of the other corpora: with a
#: dozen layouts swept by several modules, every line of kjv would put CI over its 20 minutes.
#: `python tools/conformance_table.py` compares every line of all three.
KJV_STEP = 8


def sweep_lines(name: str) -> list[str]:
    """The lines of a shared corpus that an every-line sweep of `just test` compares (see
    KJV_STEP): every line, but only every KJV_STEP-th of kjv.txt."""
    lines = data_file(name).read_text(encoding="utf-8").splitlines()
    return lines[::KJV_STEP] if name == "kjv.txt" else lines


def head_lines(name: str, size: int) -> bytes:
    """The first `size` bytes of a shared corpus, cut back to the last whole line."""
    raw = data_file(name).read_bytes()[:size]
    return raw[: raw.rindex(b"\n") + 1]


def corpus_slice(path: Path, size: int = 200_000) -> Path:
    """Writes `head_lines` of every shared corpus, one after another, to `path`."""
    path.write_bytes(b"".join(head_lines(name, size) for name in CORPORA))
    return path


#: The directories of the user's own that tokreg, and the libraries the tests drive (pip, matplotlib,
#: HF hub, Playwright), find through the environment.
USER_DIRS = {"XDG_CACHE_HOME": "cache", "XDG_DATA_HOME": "data", "XDG_CONFIG_HOME": "config", "XDG_STATE_HOME": "state"}
#: tokreg's own overrides (registry, compiled-content cache, lockfile): a test that wants one sets it.
TOKREG_ENV = ("TOKREG_DB", "TOKREG_CACHE", "TOKREG_LOCK", "TOKREG_OFFLINE", "TOKREG_SERVE_TOKEN")


@pytest.fixture(scope="session", autouse=True)
def user_dirs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """No test reads or writes the user's real cache, data or config: for the whole session the
    XDG directories are folders of one temp dir (the default registry and the compiled-content
    cache `~/.cache/tokreg` land there), and tokreg's own overrides are unset. It changes
    `os.environ`, so every process a test starts inherits it (test_user_dirs.py checks)."""
    home = tmp_path_factory.mktemp("user-dirs")
    with pytest.MonkeyPatch.context() as mp:
        for var, name in USER_DIRS.items():
            (home / name).mkdir()
            mp.setenv(var, str(home / name))
        for var in TOKREG_ENV:
            mp.delenv(var, raising=False)
        yield home


@pytest.fixture
def data() -> Path:
    return data_file("kjv.txt").parent


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "registry.db"


@pytest.fixture
def registry(db_path: Path) -> Iterator[Registry]:
    reg = Registry(db_path, create=True)
    yield reg
    reg.close()


@pytest.fixture
def small_corpus(tmp_path: Path) -> Path:
    """About 60 KB of real text: the head of kjv.txt if present, else the Python standard
    library's own source (present on every machine), so tests that need no particular corpus
    run without the shared data too."""
    p = tmp_path / "small.txt"
    src = DATA / "kjv.txt"
    if src.exists():
        p.write_bytes(src.read_bytes()[:60_000])
    else:
        stdlib = Path(sysconfig.get_path("stdlib"))
        text = "".join((stdlib / f).read_text(encoding="utf-8") for f in ("textwrap.py", "difflib.py"))
        p.write_text(text[:60_000], encoding="utf-8")
    return p


class Cli:
    """Runs `tokreg ...` in-process against one registry file."""

    def __init__(self, db: Path):
        self.db = db
        self.runner = CliRunner()

    def __call__(self, *args: Any, input: str | None = None, ok: bool = True) -> Result:
        argv = [str(a) for a in args]
        res = self.runner.invoke(cli, argv, input=input, env={"TOKREG_DB": str(self.db)}, catch_exceptions=False)
        if ok and res.exit_code != 0:
            raise AssertionError(f"tokreg {' '.join(argv)} exited {res.exit_code}:\n{res.output}")
        return res


def one_error_line(res: Result, *needles: str, code: Optional[int] = None) -> str:
    """The one line a refused command printed, checked as every refusal must be: exit code `code`
    (any non-zero one when None), exactly one non-blank line of output, starting `tokreg: error: `,
    no traceback, and each of `needles` in that line. Returns the line."""
    out = res.output
    if code is None:
        assert res.exit_code != 0, out
    else:
        assert res.exit_code == code != 0, out
    assert "Traceback" not in out, out
    lines = [x for x in out.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("tokreg: error: "), out
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def run(db_path: Path) -> Cli:
    """The CLI on a registry that exists (empty): a first write would also print "created a new
    registry at …", which tests of other things need not see (test_registry_location.py does)."""
    Registry(db_path, create=True).close()
    return Cli(db_path)


# -- PostgreSQL: one real server for the session, a new database per test -----------------------

_databases = itertools.count(1)


@pytest.fixture(scope="session")
def pg_admin() -> Iterator[str]:
    """The URL of the `postgres` database of a server started for this session (tests that use
    it skip, saying why, when no server can be started here)."""
    why = pg_server.unavailable()
    if why is not None:
        pytest.skip(why)
    # In /tmp itself: the server runs as the postgres user, who cannot enter pytest's folders.
    with tempfile.TemporaryDirectory(prefix="tokreg-pg-") as d, pg_server.server(Path(d)) as url:
        yield url


@pytest.fixture
def pg_db(pg_admin: str) -> Iterator[str]:
    """The URL of a new, empty database on the session's server, dropped afterwards."""
    import psycopg

    name = f"t{os.getpid()}_{next(_databases)}"
    dsn = pg_admin.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute(f"CREATE DATABASE {name}")
    yield pg_admin.replace("/postgres?", f"/{name}?")
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def pg_role(url: str, name: str) -> str:
    """Creates the login role `name` (once per server); returns `url` with that role as its user."""
    import psycopg

    dsn = url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(dsn, autocommit=True) as c:
        if not c.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (name,)).fetchone():
            c.execute(f"CREATE ROLE {name} LOGIN")
    return url.replace("//tokreg@", f"//{name}@")


# Models trained with the `sentencepiece` library, shared by the SentencePiece import and
# export tests: imported here so that each is trained once per session (a fixture is shared by
# the modules that see it through conftest, and computed once at its scope).
from .spm_models import spm_imported, spm_models, spm_processors  # noqa: E402, F401
