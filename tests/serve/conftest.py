"""Shared by the `tokreg serve` tests: one registry for the whole session (a trained byte-level
BPE in two versions, one with an alias, a WordPiece, a Unigram, and the imported cl100k_base when
the shared data has it), the app over it opened read-only, and a live server on loopback for the
browser."""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import pytest

from tokreg import BpeOptions, Registry, UnigramOptions, WordPieceOptions

from ..conftest import DATA, ROOT, corpus_slice

if TYPE_CHECKING:
    from playwright.sync_api import Browser
    from starlette.testclient import TestClient

#: Each test module skips itself with this reason when the serve extra is missing.
NEEDS = "tokreg serve's tests need the serve extra: pip install 'tokreg[serve]'"
#: Where the browser tests saved their screenshots, printed at the end of the run.
SCREENSHOTS = pytest.StashKey[Path]()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    folder = config.stash.get(SCREENSHOTS, None)
    if folder is not None:
        terminalreporter.write_line(f"tokreg serve: screenshots of every page in {folder}")


#: Lines that put markup into token text, a message and the samples' neighbourhood: every page
#: must show them as text.
HOSTILE = "<script>alert('x')</script> <b>bold</b> & \"quoted\" 'single'\n" * 40


@dataclass
class Served:
    db: Path
    corpus: Path
    refs: dict[str, str]  # what -> ref: bpe, bpe2, wordpiece, unigram, cl100k (when the data has it)
    digest: str = ""  # of the registry file and its WAL after it was built


@dataclass
class ServeRun:
    """A `tokreg serve` process: the lines it printed at startup, its URL, and once it has
    stopped, its stderr and exit code."""

    lines: list[str]
    url: str
    err: str = ""
    returncode: Optional[int] = None


@contextmanager
def serve_process(db: str, *args: str, env: Optional[dict[str, str]] = None, lines: int = 1) -> Iterator[ServeRun]:
    """Runs `tokreg serve --db DB --port 0 ARGS` until the block ends, then stops it with Ctrl-C
    (SIGINT) as a person would; yields its first `lines` lines of stdout and its URL."""
    p = subprocess.Popen(
        [sys.executable, "-m", "tokreg", "serve", "--db", db, "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
    )
    run = ServeRun([], "")
    try:
        run.lines = [p.stdout.readline().strip() for _ in range(lines)] if p.stdout else []
        assert run.lines and run.lines[0].startswith("serving ") and " at " in run.lines[0], run.lines
        run.url = run.lines[0].split(" at ")[1].split()[0]
        yield run
    finally:
        p.send_signal(signal.SIGINT)
        _, run.err = p.communicate(timeout=20)
        run.returncode = p.returncode


def file_digest(db: Path) -> str:
    """Of the registry's content: its file and its WAL (reading in WAL mode creates an empty
    WAL and a -shm index beside the file, which hold nothing of the registry)."""
    h = hashlib.sha256(db.read_bytes())
    wal = db.with_name(db.name + "-wal")
    h.update(wal.read_bytes() if wal.exists() else b"")
    return h.hexdigest()


@pytest.fixture(scope="session")
def served(tmp_path_factory: pytest.TempPathFactory) -> Served:
    folder = tmp_path_factory.mktemp("serve")
    corpus = folder / "corpus.txt"
    if (DATA / "kjv.txt").exists():
        corpus_slice(corpus, 60_000)
    else:
        import sysconfig  # only without the shared data: the standard library's own text instead

        stdlib = Path(sysconfig.get_path("stdlib"))
        corpus.write_text((stdlib / "textwrap.py").read_text(encoding="utf-8") * 4, encoding="utf-8")
    with corpus.open("a", encoding="utf-8") as f:
        f.write(HOSTILE)
    db = folder / "registry.db"
    refs = {}
    with Registry(db) as reg:
        refs["bpe"] = reg.train("web", [corpus], BpeOptions(vocab_size=600, special=("<|endoftext|>",))).ref
        refs["bpe2"] = reg.train(
            "web", [corpus], BpeOptions(vocab_size=900), message="<script>alert('message')</script> second"
        ).ref
        reg.tag(refs["bpe2"], "prod")
        refs["wordpiece"] = reg.train("wp", [corpus], WordPieceOptions(vocab_size=2500, lowercase=True)).ref
        refs["unigram"] = reg.train("uni", [corpus], UnigramOptions(vocab_size=2500, byte_fallback=True)).ref
        cl100k = DATA / "cl100k_base.tiktoken"
        if cl100k.exists():
            refs["cl100k"] = reg.import_tiktoken(
                "cl100k_base", cl100k, pattern="cl100k", specials={"<|endoftext|>": 100257}
            ).ref
        reg.evaluate([refs["bpe"], refs["bpe2"]], [corpus], languages=["en"])  # shown on the version page
        # Fold the WAL into the file, so that the digest covers everything the registry holds.
        with reg.engine.connect() as conn:
            conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    return Served(db=db, corpus=corpus, refs=refs, digest=file_digest(db))


@pytest.fixture(scope="session")
def ro_registry(served: Served) -> Iterator[Registry]:
    reg = Registry.read_only(served.db)
    yield reg
    reg.close()


@pytest.fixture(scope="session")
def client(ro_registry: Registry) -> Iterator[TestClient]:
    from starlette.testclient import TestClient  # the serve extra: each module skips without it

    from tokreg.serve import create_app

    # The app accepts only its own Host names: loopback ones by default.
    with TestClient(create_app(ro_registry), base_url="http://127.0.0.1:8765", raise_server_exceptions=False) as c:
        yield c


@pytest.fixture(scope="session")
def live(ro_registry: Registry) -> Iterator[str]:
    """A real uvicorn server on 127.0.0.1 (a free port), in a thread, for the browser."""
    from tokreg.serve import create_app

    with running(create_app(ro_registry)) as url:
        yield url


@contextmanager
def running(app: Any) -> Iterator[str]:
    """`app` served by uvicorn on 127.0.0.1 (a free port) in a thread, as `tokreg serve` runs it;
    yields its URL (no trailing slash)."""
    import uvicorn  # the serve extra: each module skips without it

    from tokreg.serve.server import bind, url_of

    sock = bind("127.0.0.1", 0)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the test server did not start"
        time.sleep(0.02)
    try:
        yield url_of(sock).rstrip("/")
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def chromium() -> str:
    for candidate in (os.environ.get("TOKREG_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        found = candidate and shutil.which(candidate)
        if found:
            return found
    pytest.skip("no Chromium to drive: install Debian's chromium package (or set TOKREG_CHROMIUM)")


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    """One headless Chromium for the session, shared by the browser tests (Playwright's sync API
    runs one at a time)."""
    pytest.importorskip("playwright", reason="the browser tests need Playwright: pip install playwright")
    from playwright.sync_api import sync_playwright

    path = chromium()
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=path)
        yield b
        b.close()
