"""`tokreg train` opens its registry on a thread while it trains (cli/opening.py): what the
opening finds wrong stops the run at its next progress report, with the same error."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tokreg import Registry
from tokreg.cli.opening import Opening
from tokreg.errors import InputError


def test_a_refused_opening_stops_the_run_at_its_next_report(tmp_path: Path) -> None:
    opening = Opening(str(tmp_path / "r.db"), "bad@name")
    seen: list[tuple[str, int, int]] = []
    report = opening.guard(lambda phase, done, total: seen.append((phase, done, total)))
    with pytest.raises(InputError, match="not valid"):
        opening.registry()
    with pytest.raises(InputError, match="not valid"):
        report("merge", 256, 1000)
    assert seen == []
    opening.abandon()
    assert not (tmp_path / "r.db").exists()  # nothing was created


def test_a_good_opening_passes_reports_on_and_gives_the_registry(tmp_path: Path) -> None:
    opening = Opening(str(tmp_path / "r.db"), "mini")
    seen: list[tuple[str, int, int]] = []
    report = opening.guard(lambda phase, done, total: seen.append((phase, done, total)))
    reg = opening.registry()
    report("merge", 256, 1000)
    assert seen == [("merge", 256, 1000)]
    assert not reg.created and not (tmp_path / "r.db").exists()  # opened, not created: the first write creates it
    reg.close()


def test_what_is_needed_only_after_training_is_imported_on_the_opening_thread(
    registry: Registry, db_path: Path, tmp_path: Path
) -> None:
    # A fresh process: the command's module and a BPE run's trainer and corpus, as the command
    # has them when the core starts to count, hold none of AFTER_TRAINING; the opening imports them.
    code = (
        "import sys; from tokreg import algorithms; from tokreg.cli import opening, train\n"
        "from tokreg.training.corpus import Corpus\n"
        "opts = train._options_for('bpe', {'pattern': 'gpt2'}, train.common_options(300, 0, (), 0, None))\n"
        "algorithms.trainer_for(opts).counting(opts); Corpus.of([sys.argv[1]]).sources()\n"
        "print(sorted(m for m in opening.AFTER_TRAINING if m in sys.modules))\n"
        "opening.Opening(sys.argv[2], 'mini').registry().close()\n"
        "print(sorted(m for m in opening.AFTER_TRAINING if m in sys.modules))"
    )
    corpus = tmp_path / "c.txt"
    corpus.write_text("low lower newest widest\n", encoding="utf-8")
    out = subprocess.run(
        [sys.executable, "-c", code, str(corpus), str(db_path)], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    from tokreg.cli.opening import AFTER_TRAINING

    assert out == ["[]", str(sorted(AFTER_TRAINING))]


def _console(argv: list[str], after: str) -> str:
    """`tokreg ARGV` through the console script's entry point in a fresh process, then `after`'s
    value printed by an exit handler (with none, a command that succeeds may end the process
    in `main` at once: console.py's `_leave`)."""
    code = (
        "import atexit, sys; from tokreg import console\n"
        f"atexit.register(lambda: print({after}))\n"
        f"sys.argv = ['tokreg', *{argv!r}]\n"
        "console.main()\n"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout


def test_a_lean_train_imports_neither_sqlalchemy_nor_logging(registry: Registry, db_path: Path, tmp_path: Path) -> None:
    """Nor OpenSSL (a small version's sha256 is Python's own, content.py) nor SentencePiece's
    text handling (byte-level BPE's model never needs it)."""
    corpus = tmp_path / "c.txt"
    corpus.write_text("low lower newest widest\n" * 20, encoding="utf-8")
    argv = ["train", "mini", str(corpus), "--vocab-size", "270", "--db", str(db_path), "-q"]
    unused = ("sqlalchemy", "logging", "hashlib", "tokreg.algorithms.sentencepiece_text")
    assert _console(argv, f"[m for m in {unused!r} if m in sys.modules]").splitlines()[-1] == "[]"


@pytest.mark.slow
def test_the_console_quiets_sqlalchemys_loggers_when_it_is_imported(registry: Registry, db_path: Path) -> None:
    # SQLAlchemy logs an interruption that lands while a connection returns to its pool, with a
    # traceback; the command says it in one line (console.py).
    logger = "__import__('logging').getLogger('sqlalchemy')"
    after = f"[(type(h).__name__, lg.propagate) for lg in [{logger}] for h in lg.handlers]"
    assert _console(["list", "--db", str(db_path)], after).splitlines()[-1] == "[('NullHandler', False)]"
