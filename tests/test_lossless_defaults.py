"""Defaults that lose nothing: every trainer, trained on a corpus with its default options,
decodes every line of that corpus (with its line break) back byte for byte, or loses exactly
what its design drops, and `train` reports the loss it measured (`FinishedVersion.round_trip`),
which must equal what these tests count themselves.

- byte-level BPE (the default `--algo bpe`), Unigram (byte fallback on by default) and
  character-level BPE with a pattern that keeps whitespace (`--pattern cl100k`): every line back.
- character-level BPE with its default pattern (`whitespace`: `\\S+`, Hugging Face's
  `WhitespaceSplit`): the whitespace between words is dropped, nothing else.
- character-level BPE with `</w>`: the suffix decodes as one space (Sennrich's convention), so
  a line comes back as its words joined by single spaces.
- WordPiece: BERT's lowercasing and accent stripping, and its whitespace (a space between
  words, none at line ends); no text is unknown in its own corpus.
- Unigram with `--no-byte-fallback` (spm_train's vocabulary): every line break is `<unk>`.

Whole corpora in the slow lane; in the fast lane a CI-sized slice: the first 150 lines of each
corpus, plus 50 lines of dr.en.txt whose leading spaces are tabs (the corpora have no tab).
"""

from __future__ import annotations

import gzip
import json
import re
import unicodedata
from pathlib import Path
from typing import Any, Callable, Optional

import pytest

from tokreg import BpeOptions, Registry, Tokenizer, UnigramOptions, WordPieceOptions, algorithms
from tokreg.training import round_trip, train_run
from tokreg.training.corpus import Corpus
from tokreg.training.corpus.sources import expand

from .conftest import CORPORA, Cli, data_file, slow

_PRETOKEN = re.compile(r"\S+")  # the `whitespace` pattern (Hugging Face's WhitespaceSplit)


def _strip_accents(s: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", s) if unicodedata.category(c) != "Mn")


def _no_space(s: str) -> str:
    return "".join(s.split())


def _wordpiece_same(line: str, back: str) -> bool:
    """BERT's normalization (lowercase, accents stripped) and its spacing are all it changes."""
    return _no_space(back) == _no_space(_strip_accents(line.lower()))


#: name -> (options, what a line decodes to: None for itself, else a check of (line, decoded))
CASES: dict[str, tuple[Any, Optional[Callable[[str, str], bool]]]] = {
    "byte-bpe": (BpeOptions(vocab_size=0), None),
    "unigram": (UnigramOptions(vocab_size=0), None),
    "char-bpe-cl100k": (BpeOptions(vocab_size=0, char_level=True, pattern="cl100k"), None),
    "char-bpe": (
        BpeOptions(vocab_size=0, char_level=True),
        lambda line, back: back == "".join(_PRETOKEN.findall(line)),
    ),
    "char-bpe-eow": (
        BpeOptions(vocab_size=0, char_level=True, end_of_word_suffix="</w>"),
        lambda line, back: back == " ".join(_PRETOKEN.findall(line)),  # decode drops the last space
    ),
    "wordpiece": (WordPieceOptions(vocab_size=0, lowercase=True), _wordpiece_same),
}


def _slice(path: Path) -> Path:
    lines: list[str] = []
    for name in CORPORA:
        lines += data_file(name).read_text(encoding="utf-8").splitlines(keepends=True)[:150]
    indented = [
        s for s in data_file("dr.en.txt").read_text(encoding="utf-8").splitlines(keepends=True) if s[:4] == " " * 4
    ]
    lines += [re.sub(r"^( {4})+", lambda m: "\t" * (len(m.group()) // 4), s) for s in indented[:50]]
    path.write_text("".join(lines), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def reg(tmp_path_factory: pytest.TempPathFactory) -> Registry:
    return Registry(tmp_path_factory.mktemp("db") / "r.db", create=True)


@pytest.fixture(scope="module", params=["slice", slow("kjv.txt"), slow("dr.en.txt"), slow("dr.zh-cn.txt")])
def corpus(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    """(a corpus, the vocabulary size to train on it)."""
    if request.param == "slice":
        return _slice(tmp_path_factory.mktemp("slice") / "slice.txt"), 1000
    return data_file(request.param), 8000


def _train(reg: Registry, name: str, corpus: Path, options: Any) -> tuple[Tokenizer, Any]:
    recorded = reg.train_corpus(name, Corpus.of([corpus]), options)[-1]
    return reg.load(recorded.info.ref), recorded.version.round_trip


@pytest.mark.parametrize("case", list(CASES))
def test_every_line_of_the_corpus_comes_back(reg: Registry, corpus: tuple[Path, int], case: str) -> None:
    path, size = corpus
    options, changes = CASES[case]
    tok, reported = _train(reg, f"{case}-{path.stem}", path, type(options)(**{**options.__dict__, "vocab_size": size}))
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    encoded = tok.encode_ordinary_batch(lines)
    lost = [(line, ids) for line, ids in zip(lines, encoded) if tok.decode_bytes(ids) != line.encode("utf-8")]
    specials = set(tok.special_tokens.values())
    unknown = sum(1 for ids in encoded for i in ids if i in specials)
    assert unknown == 0, f"{case}: {unknown} unknown tokens in its own corpus"
    if changes is None:
        assert not lost, f"{case}: {len(lost)} of {len(lines)} lines do not come back, e.g. {lost[0][0]!r}"
    else:
        wrong = [line for line, ids in lost if not changes(line, tok.decode(ids))]
        assert not wrong, f"{case}: {wrong[0]!r} came back as {tok.decode(tok.encode_ordinary(wrong[0]))!r}"
        assert lost  # the design does drop something on real text
    # what `train` reported is what was counted here
    assert reported is not None and reported.whole
    assert (reported.lines, reported.lost_lines, reported.unknown) == (len(lines), len(lost), unknown)
    assert reported.tokens == sum(map(len, encoded))


def test_without_byte_fallback_line_breaks_are_unknown(reg: Registry, corpus: tuple[Path, int]) -> None:
    """spm_train's vocabulary: no piece for a line break, so every line that has one loses it,
    and `train` says so."""
    path, size = corpus
    tok, reported = _train(reg, f"spm-{path.stem}", path, UnigramOptions(vocab_size=size, byte_fallback=False))
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    unk = tok.special_tokens["<unk>"]
    for line in lines[:200]:
        ids = tok.encode_ordinary(line)
        assert ids[-1] == unk and tok.decode_bytes(ids[:-1]) == line[:-1].encode("utf-8")
    assert reported is not None and reported.lost_lines == sum(1 for s in lines if s.endswith("\n"))
    assert reported.unknown >= reported.lost_lines and not reported.lossless


def test_the_default_is_recorded_and_older_runs_reproduce(registry: Registry, small_corpus: Path) -> None:
    """A default Unigram's config says byte_fallback true (hashed, so a new hash); a run recorded
    with byte_fallback false, as every run before the default changed recorded it, trains again
    to its own hash."""
    new = registry.train("new", [small_corpus], UnigramOptions(vocab_size=500))
    assert registry.show(new.ref).config["byte_fallback"] is True
    old = registry.train("old", [small_corpus], UnigramOptions(vocab_size=500, byte_fallback=False))
    assert registry.show(old.ref).training_run["config"]["byte_fallback"] is False
    assert old.content_hash != new.content_hash and registry.reproduce(old.ref).same


def test_train_says_what_is_lost_in_one_line(run: Cli, small_corpus: Path) -> None:
    lines = small_corpus.read_text(encoding="utf-8").splitlines(keepends=True)
    args = ["train", "u", small_corpus, "--algo", "unigram", "--vocab-size", 500]
    out = run(*args).output.splitlines()
    assert out[-1] == f"  lossless on its corpus: all {len(lines):,} lines decode back byte for byte"
    out = run(*args, "--no-byte-fallback").output.splitlines()
    breaks = sum(1 for s in lines if s.endswith("\n"))
    assert out[-1].startswith("  LOSSY on its corpus: ") and f"{breaks:,} of {len(lines):,} lines" in out[-1]
    assert out[-1].endswith("(expected: no byte fallback: characters outside the vocabulary become the unknown token)")
    d = json.loads(run(*args, "--no-byte-fallback", "--json").output)["round_trip"]
    assert (d["lines"], d["lost_lines"], d["lossless"], d["whole"]) == (len(lines), breaks, False, True)


def test_the_text_kept_for_measuring_ends_at_a_line_break() -> None:
    """Beyond its limit `Keep` keeps the lines before it, and says it is not the whole corpus;
    the counter behind it is fed everything."""
    fed: list[bytes] = []

    class Counter:
        def feed(self, data: bytes) -> None:
            fed.append(data)

        def end_input(self) -> None:
            fed.append(b"|")

    keep = round_trip.Keep(Counter(), limit=13)
    keep.feed(b"one\ntwo")
    keep.end_input()  # a source whose last line has no line break: a segment of its own
    keep.feed(b"three\nfour\n")
    keep.end_input()
    assert b"".join(fed) == b"one\ntwo|three\nfour\n|"
    assert keep.text() == ([b"one\ntwo", b"three\n"], False)


def test_plain_files_are_read_again_as_keep_would_have_kept_them(tmp_path: Path) -> None:
    """A corpus of plain files is read again after training (not held beside the trainer):
    the same segments as `Keep` keeps while counting."""
    (tmp_path / "a.txt").write_bytes(b"one\ntwo")
    (tmp_path / "b.txt").write_bytes(b"three\nfour\n")
    sources = expand([tmp_path / "a.txt", tmp_path / "b.txt"])
    assert round_trip.reread(sources, limit=13) == ([b"one\ntwo", b"three\n"], False)
    assert round_trip.reread(sources) == ([b"one\ntwo", b"three\nfour\n"], True)
    (tmp_path / "c.txt.gz").write_bytes(gzip.compress(b"five\nsix\n"))
    packed = expand([tmp_path / "a.txt", tmp_path / "c.txt.gz"])
    assert round_trip.reread(packed, limit=12) == ([b"one\ntwo", b"five\n"], False)


@pytest.mark.parametrize("pattern", ["gpt2", "cl100k", "o200k"])
def test_byte_level_bpe_is_measured_on_its_pieces_as_on_its_lines(tmp_path: Path, pattern: str) -> None:
    """A byte-level BPE is measured on the distinct pieces its corpus was counted into: the
    same numbers as its lines give (line breaks of every kind, runs of spaces and tabs, a last
    line without a break, a special token's text, CJK)."""
    lines = data_file("dr.zh-cn.txt").read_text(encoding="utf-8").splitlines(keepends=True)[:80]
    lines += ["a  b\t\tc   \r\n", "\n", "\r\n", "   \n", "x<|endoftext|>y\n", "tail without a break  "]
    path = tmp_path / "c.txt"
    path.write_bytes("".join(lines).encode("utf-8"))
    options = BpeOptions(vocab_size=600, pattern=pattern, special=("<|endoftext|>",))
    counted = train_run.count(Corpus.of([path]), options)
    tok = Tokenizer.of_finished(train_run.train(Corpus.of([path]), options)[0], ref="t")
    by_pieces = round_trip.measure_pieces(tok, counted.counts)
    assert by_pieces is not None and by_pieces == round_trip.measure(tok, [path.read_bytes()], whole=True)


def test_lines_that_are_not_utf8_are_measured_on_the_lines(reg: Registry, tmp_path: Path) -> None:
    """The pieces cannot say which lines a non-UTF-8 byte spoils: those corpora are measured
    line by line, and the lines that are not UTF-8 are counted as skipped."""
    path = tmp_path / "bytes.txt"
    path.write_bytes(b"one two\nthree \xff four\nfive\n")
    reported = reg.train_corpus("bytes", Corpus.of([path]), BpeOptions(vocab_size=270))[-1].version.round_trip
    assert reported is not None and (reported.lines, reported.skipped, reported.bytes) == (2, 1, 26)
    assert not algorithms.trainer_for(BpeOptions(vocab_size=300, max_piece_bytes=4)).encodes_by_pieces(
        BpeOptions(vocab_size=300, max_piece_bytes=4)
    )
