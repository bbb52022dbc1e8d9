"""Bad input: one readable line naming the input and what to do, a non-zero exit, and the
registry exactly as it was. Never a traceback."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tokreg import Registry

from .conftest import Cli, one_error_line


def snapshot(db: Path) -> str:
    reg = Registry(db)
    with reg.engine.connect() as c:
        c.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    reg.close()
    return hashlib.sha256(db.read_bytes()).hexdigest()


@pytest.fixture
def seeded(run: Cli, small_corpus: Path, db_path: Path) -> str:
    run("train", "base", small_corpus, "--vocab-size", "300", "-q")
    return snapshot(db_path)


CASES = {
    "missing file": (["train", "x", "{tmp}/nope.txt", "--vocab-size", "300"], ["nope.txt", "does not exist"]),
    "folder without matches": (
        ["train", "x", "{tmp}", "--vocab-size", "300", "--glob", "*.nomatch"],
        ["holds no files", "*.nomatch"],
    ),
    "bad memory limit": (["train", "x", "{corpus}", "--vocab-size", "300", "--memory-limit", "lots"], ["lots"]),
    "memory limit too small": (["train", "x", "{corpus}", "--vocab-size", "300", "--memory-limit", "1M"], ["raise it"]),
    "memory limit in K": (["train", "x", "{corpus}", "--vocab-size", "300", "--memory-limit", "1K"], ["1K is below"]),
    "bad size list": (["train", "x", "{corpus}", "--vocab-size", "300,x"], ["--vocab-size", "300,x"]),
    "stdin twice": (["train", "x", "-", "-", "--vocab-size", "300"], ["standard input", "twice"]),
    "empty corpus": (["train", "x", "{tmp}/empty.txt", "--vocab-size", "300"], ["empty.txt", "empty"]),
    "vocab below bytes": (["train", "x", "{corpus}", "--vocab-size", "100"], ["--vocab-size 100", "256"]),
    "vocab below chars": (
        ["train", "x", "{corpus}", "--vocab-size", "10", "--char-level"],
        ["--vocab-size 10", "base alphabet"],
    ),
    "bad regex": (
        ["train", "x", "{corpus}", "--vocab-size", "300", "--pattern", "(unclosed"],
        ["(unclosed", "regex"],
    ),
    "not utf-8": (
        ["train", "x", "{tmp}/latin1.txt", "--vocab-size", "300", "--char-level"],
        ["latin1.txt", "byte offset 8", "drop --char-level"],
    ),
    "bad name": (["train", "a@b", "{corpus}", "--vocab-size", "300"], ["'a@b'", "not valid"]),
    "unknown ref": (["show", "nosuch"], ["nosuch", "base"]),
    "unknown version": (["encode", "base@9", "hi"], ["no version 9", "1"]),
    "unknown hash": (["show", "xxh3-128:ffff0000"], ["xxh3-128:ffff0000"]),
    "bad decode id": (["decode", "base", "99999"], ["99999"]),
    "missing encode file": (["encode", "base", "--file", "{tmp}/nope.txt"], ["nope.txt"]),
    "bad db url": (["list", "--db", "nosuchdialect://x"], ["nosuchdialect"]),
    "eow without char-level": (
        ["train", "x", "{corpus}", "--vocab-size", "300", "--end-of-word-suffix", "</w>"],
        ["--char-level"],
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input(case: str, run: Cli, seeded: str, db_path: Path, tmp_path: Path, small_corpus: Path) -> None:
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "latin1.txt").write_bytes(b"caf\xc3\xa9 na\xefve\n")
    args, needles = CASES[case]
    argv = [a.format(tmp=tmp_path, corpus=small_corpus) for a in args]
    one_error_line(run(*argv, ok=False), *needles)
    assert snapshot(db_path) == seeded


def test_byte_level_accepts_any_bytes(run: Cli, tmp_path: Path) -> None:
    p = tmp_path / "bin.bin"
    p.write_bytes(bytes(range(256)) * 20 + b"caf\xe9 \xff\xfe text\n" * 50)
    assert "@1" in run("train", "bin", p, "--vocab-size", "300", "-q").output
