"""How a `tokreg` process ends, through the console script (cli/app.py's `run`, not click's
standalone `main`): a Ctrl-C that lands outside a command's own handler is one line and status
130 like any other; a usage error is click's usage lines and status 2; a confirmation answered no
is "Aborted!" and status 1 with nothing removed; a reader that goes away (`| head`) ends the
process quietly with status 1; --help and --version end with 0."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tokreg import BpeOptions, Registry

#: Runs `tokreg ARGV` through the console script's entry point; {before} runs first.
_RUN = """
import sys
from tokreg import console
{before}
sys.argv = ["tokreg", *sys.argv[1:]]
console.main()
"""

#: Makes a KeyboardInterrupt land where the group's own handler is not yet in place: while the
#: group sets up its warning lines, after the command line was parsed and before the command ran.
_INTERRUPT_BEFORE_THE_COMMAND = """
from tokreg.cli import app
def interrupted(*kinds):
    raise KeyboardInterrupt
app._warning_lines = interrupted
"""


def _run(argv: list[str], before: str = "", **kw: object) -> subprocess.CompletedProcess[str]:
    code = _RUN.format(before=before)
    return subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=60, **kw)  # type: ignore[call-overload,no-any-return]


@pytest.fixture
def trained(db_path: Path, tmp_path: Path) -> Path:
    corpus = tmp_path / "c.txt"
    corpus.write_text("low lower newest widest\n" * 20, encoding="utf-8")
    with Registry(db_path, create=True) as reg:
        reg.train("mini", [corpus], BpeOptions(vocab_size=270))
    return db_path


def _versions(db: Path) -> list[tuple[str, int]]:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT name, number FROM versions").fetchall()


def test_ctrl_c_before_the_command_ran_is_one_line_and_130(trained: Path) -> None:
    before = _versions(trained)
    p = _run(["rm", "mini@1", "--yes", "--db", str(trained)], before=_INTERRUPT_BEFORE_THE_COMMAND)
    assert p.returncode == 130, p
    assert p.stderr.splitlines() == ["tokreg: error: interrupted; nothing was written to the registry"], p.stderr
    assert p.stdout == ""
    assert _versions(trained) == before


def test_a_usage_error_is_clicks_usage_and_2(trained: Path) -> None:
    p = _run(["rm", "--no-such-option", "--db", str(trained)])
    assert p.returncode == 2, p
    assert p.stderr.startswith("Usage: tokreg rm") and "Error: No such option '--no-such-option'" in p.stderr
    assert "Traceback" not in p.stderr


def test_a_confirmation_answered_no_is_aborted_and_1_with_nothing_removed(trained: Path) -> None:
    p = _run(["rm", "mini@1", "--db", str(trained)], input="n\n")
    assert p.returncode == 1, p
    assert p.stderr.splitlines()[-1] == "Aborted!"
    assert _versions(trained) == [("mini", 1)]


def test_a_reader_that_goes_away_ends_quietly_with_1(trained: Path) -> None:
    code = _RUN.format(before="")
    argv = ["sql", "SELECT * FROM tokens, tokens AS t2 LIMIT 200000", "--db", str(trained)]
    with subprocess.Popen([sys.executable, "-c", code, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.read(100)  # the head of the output, then the reader goes away
        proc.stdout.close()
        err = proc.stderr.read().decode()
        assert proc.wait(timeout=60) == 1
    assert err == ""


def test_help_and_version_end_with_0() -> None:
    for argv in (["--version"], ["rm", "--help"]):
        p = _run(argv)
        assert p.returncode == 0 and p.stderr == "" and p.stdout, (argv, p)
