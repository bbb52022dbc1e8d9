"""Loading: `tokreg.load(name@1)` from the registry to a ready encoder, in a fresh process each
time (so no in-process cache helps), beside tiktoken building its Encoding from the same file.

"cold" is a machine that has never loaded the version: an empty compiled cache, so the content
stored with the version is read from the database (SQLite, and PostgreSQL over a Unix socket)
and checked by its hash; "warm" reads the on-disk cache. "from_file" is
`Tokenizer.from_file` of the file `tokreg export --format tokreg` wrote (no registry, no cache:
the file is read and its content hashed every time). The PostgreSQL column needs the server
binaries (a throwaway server is started, as the tests do) or TOKREG_BENCH_PG=URL of a database
to use (its registry is replaced)."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Optional

import tokreg
from benchmarks.common import DATA, child, table
from benchmarks.vocabs import VOCABS, db_path


@contextlib.contextmanager
def postgres() -> Iterator[Optional[str]]:
    """A PostgreSQL registry holding the vocabularies, or None when no server can be had."""
    url = os.environ.get("TOKREG_BENCH_PG")
    with contextlib.ExitStack() as stack:
        if url is None:
            try:
                from tests import pg_server  # the tests' throwaway server (initdb, a Unix socket)
            except ImportError:
                yield None
                return
            if pg_server.unavailable() is not None:
                yield None
                return
            folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="tokreg-bench-pg-"))
            url = stack.enter_context(pg_server.server(Path(folder)))
        with tokreg.Registry(url, create=True) as reg:
            for name, (pattern, specials) in VOCABS.items():
                reg.import_tiktoken(name, DATA / f"{name}.tiktoken", pattern=pattern, specials=specials)
        yield url


def _best(name: str, db: str, cache: Optional[str]) -> float:
    """Best of 3 fresh processes; `cache` None: the on-disk cache warmed first, else a new,
    empty cache folder for each run."""
    times = []
    for _ in range(3):
        folder = tempfile.mkdtemp(prefix="tokreg-cache-") if cache == "cold" else cache
        env = {"TOKREG_CACHE": folder} if folder else {}
        times.append(child("benchmarks.load_child", "tokreg", name, db, env=env)["seconds"])
        if cache == "cold" and folder:
            shutil.rmtree(folder, ignore_errors=True)
    return min(times)


def run() -> None:
    db = db_path()
    warm = tempfile.mkdtemp(prefix="tokreg-cache-")
    with postgres() as pg:
        rows = []
        for name in VOCABS:
            child("benchmarks.load_child", "tokreg", name, db, env={"TOKREG_CACHE": warm})  # fills the cache
            row = [name, f"{_best(name, db, warm):.3f}", f"{_best(name, db, 'cold'):.3f}"]
            row.append(f"{_best(name, pg, 'cold'):.3f}" if pg else "no server")
            exported = os.path.join(warm, f"{name}.tokreg")
            with tokreg.Registry(db) as reg:
                reg.export(f"{name}@1", "tokreg", exported)
            files = [child("benchmarks.load_child", "tokreg-file", name, exported)["seconds"] for _ in range(3)]
            row.append(f"{min(files):.3f}")
            theirs = [child("benchmarks.load_child", "tiktoken", name, db)["seconds"] for _ in range(3)]
            rows.append([*row, f"{min(theirs):.3f}"])
    shutil.rmtree(warm, ignore_errors=True)
    table(
        "Load to a ready encoder (best of 3 fresh processes; cold: an empty compiled cache)",
        ["vocab", "tokreg.load warm s", "cold, SQLite s", "cold, PostgreSQL s", "from_file s", "tiktoken Encoding s"],
        rows,
    )
