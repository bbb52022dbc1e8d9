"""A `tokreg train` that succeeds ends its process at once, skipping the interpreter's teardown
(console.py's `_leave`), once its output is flushed and its registry closed; anything that may
need the teardown (an exit handler, a failure) keeps the usual exit."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

from tokreg import Registry
from tokreg.errors import InputError

#: Runs `tokreg ARGV` through the console script's entry point, with an object whose finalizer
#: says whether the interpreter's teardown ran (it clears __main__'s globals).
_RUN = """
import sys
from tokreg import console
class Sentinel:
    def __del__(self):
        sys.stdout.write("torn down\\n")
sentinel = Sentinel()
{before}
sys.argv = ["tokreg", *sys.argv[1:]]
console.main()
"""


def _run(argv: list[str], before: str = "") -> subprocess.CompletedProcess[str]:
    code = _RUN.format(before=before)
    return subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=60)


def _train(db: Path, corpus: Path, *more: str) -> list[str]:
    Registry(db, create=True).close()  # no connection of this process left open on it
    corpus.write_text("low lower newest widest\n" * 20, encoding="utf-8")
    return ["train", "mini", str(corpus), "--vocab-size", "270", "--db", str(db), "-q", *more]


def test_a_train_that_succeeds_leaves_at_once_with_its_output_flushed_and_registry_closed(
    db_path: Path, tmp_path: Path
) -> None:
    p = _run(_train(db_path, tmp_path / "c.txt", "--json"))
    assert p.returncode == 0, p.stderr
    assert "torn down" not in p.stdout  # the teardown was skipped
    shown = json.loads(p.stdout)  # the whole JSON document reached the pipe
    assert shown["ref"] == "mini@1"
    # Closed before leaving: the last connection's close checkpoints the WAL and removes it.
    assert not Path(f"{db_path}-wal").exists() and not Path(f"{db_path}-shm").exists()
    with sqlite3.connect(db_path) as conn:
        assert conn.execute("SELECT content_hash FROM versions").fetchall() == [(shown["hash"],)]


def test_an_exit_handler_keeps_the_usual_exit(db_path: Path, tmp_path: Path) -> None:
    p = _run(_train(db_path, tmp_path / "c.txt"), before="import atexit; atexit.register(print, 'handler ran')")
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[-2:] == ["handler ran", "torn down"]
    assert p.stdout.startswith("mini@1")


def test_a_failed_train_exits_the_usual_way_with_its_status(db_path: Path, tmp_path: Path) -> None:
    argv = _train(db_path, tmp_path / "c.txt")
    argv[2] = str(tmp_path / "missing.txt")
    p = _run(argv)
    assert p.returncode == InputError.exit_code and p.stderr.startswith("tokreg: error: "), (p.returncode, p.stderr)
    assert p.stdout == "torn down\n"
