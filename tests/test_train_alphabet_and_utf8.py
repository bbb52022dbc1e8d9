"""What every training algorithm does with a vocabulary size below its base alphabet (refused
the same way by all of them, nothing recorded; WordPiece must not record a version of its whole
alphabet) and with a corpus that is not UTF-8 (a message naming only options of the algorithm in
use, never "drop --char-level" to a WordPiece or Unigram user; byte-level BPE trains on it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import Cli, one_error_line

#: The base alphabet of each training algorithm, and the vocab size below it.
ALGOS = {
    "bpe": (["--algo", "bpe"], "256"),
    "char-level bpe": (["--algo", "bpe", "--char-level"], "base alphabet"),
    "wordpiece": (["--algo", "wordpiece"], "base alphabet"),
    "unigram": (["--algo", "unigram"], "base alphabet"),
}


@pytest.mark.parametrize("algo", sorted(ALGOS))
def test_a_vocab_size_below_the_alphabet_is_refused(algo: str, run: Cli, small_corpus: Path) -> None:
    flags, needle = ALGOS[algo]
    line = one_error_line(run("train", "small", small_corpus, "--vocab-size", "10", *flags, ok=False), code=1)
    assert "--vocab-size 10" in line and needle in line, line
    assert "small" not in run("list").output  # nothing recorded


@pytest.mark.parametrize(
    "algo, says, never",
    [
        ("char-level bpe", ["drop --char-level"], []),
        ("wordpiece", ["WordPiece trains on UTF-8 text", "convert the file to UTF-8"], ["--char-level"]),
        ("unigram", ["Unigram trains on UTF-8 text", "convert the file to UTF-8"], ["--char-level"]),
    ],
)
def test_the_non_utf8_message_names_only_this_algorithms_options(
    algo: str, says: list[str], never: list[str], run: Cli, tmp_path: Path
) -> None:
    p = tmp_path / "latin1.txt"
    p.write_bytes(b"caf\xe9 na\xefve\n" * 50)
    flags, _ = ALGOS[algo]
    line = one_error_line(run("train", "x", p, "--vocab-size", "2000", *flags, ok=False), code=1)
    assert "latin1.txt" in line and "not UTF-8 at byte offset 3" in line, line
    for s in says:
        assert s in line, line
    for s in never:
        assert s not in line, line


def test_byte_level_bpe_takes_non_utf8_text(run: Cli, tmp_path: Path) -> None:
    p = tmp_path / "latin1.txt"
    p.write_bytes(b"caf\xe9 na\xefve\n" * 50 + bytes(range(256)))
    assert "x@1" in run("train", "x", p, "--vocab-size", "300", "-q").output
