"""Hostile calls to every encoder: arbitrary text (lone surrogates, NUL, controls, long single
lines), arbitrary ids, wrong types, unknown modes, NaN and infinite parameters and absurd
thread counts, through the Python API and straight into the core. Each is a result or one
clear error (InputError), never a crash, a hang, a PanicException or a silent success."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokreg import InputError, Registry, Tokenizer

from . import hostile
from .conftest import data_file, head_lines

ALGOS = ["byte_bpe", "char_bpe", "wordpiece", "unigram", "sp_bpe"]


@pytest.fixture(scope="module")
def toks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Tokenizer]]:
    data_file("kjv.txt")
    folder = tmp_path_factory.mktemp("enc")
    seeds = hostile.make_seeds(folder / "seeds", hostile.write_corpus(folder / "corpus.txt"))
    (folder / "sp.model").write_bytes(seeds["sp-bpe"])
    with Registry(folder / "seeds" / "seeds.db", create=True) as reg:
        reg.import_sentencepiece("spb", folder / "sp.model")
        out = {name: reg.load(ref, lock=False) for name, ref in zip(ALGOS, ["bb", "cb", "wp", "ug", "spb"])}
        yield out


TEXT = st.lists(
    st.one_of(
        st.characters(codec="utf-8"),
        st.sampled_from(["\x00", "\u2581", " ", "  ", "\n", "\r\n", "\t", "\ufeff", "<s>", "[CLS]", "##", "<0x41>"]),
    ),
    max_size=60,
).map("".join)


@pytest.mark.parametrize("algo", ALGOS)
def test_any_text_encodes_and_decodes(algo: str, toks: dict[str, Tokenizer]) -> None:
    tok = toks[algo]

    @settings(max_examples=150, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
    @given(TEXT)
    def run(text: str) -> None:
        ids = tok.encode_ordinary(text)
        assert all(0 <= i < tok.vocab_size + 2048 for i in ids)
        back = tok.decode(ids)
        if tok.lossless:
            # SentencePiece-style encoders read ▁ as the space marker (documented).
            assert back == (text.replace("\u2581", " ") if algo in ("unigram", "sp_bpe") else text)
        assert tok.encode_ordinary_batch([text, text], threads=2) == [ids, ids]

    run()


@pytest.mark.parametrize("algo", ALGOS)
def test_lone_surrogates_are_one_clear_error(algo: str, toks: dict[str, Tokenizer]) -> None:
    tok = toks[algo]
    for call in (
        lambda: tok.encode("a\ud800b"),
        lambda: tok.encode_ordinary("\udfff"),
        lambda: tok.encode_batch(["ok", "x\ud83d"]),
        lambda: tok.encode_ordinary_batch(["\ud800"] * 3, threads=2),
    ):
        with pytest.raises(InputError, match="lone surrogate"):
            call()
    if algo == "unigram":
        with pytest.raises(InputError, match="lone surrogate"):
            tok.nbest("\ud800", 2)
        with pytest.raises(InputError, match="lone surrogate"):
            tok.sample("\ud800", alpha=0.1, seed=1)


BAD_IDS: list[Any] = [
    [-1],
    [2**32],
    [2**64],
    [10**30],
    [1.5],
    [None],
    ["1"],
    [[1]],
    [True],
    b"\x01\x02",
    "12",
    {1: 2},
    {1, 2},
    None,
    7,
    [float("nan")],
]


@pytest.mark.parametrize("algo", ALGOS)
def test_bad_ids_are_refused(algo: str, toks: dict[str, Tokenizer]) -> None:
    tok = toks[algo]
    for ids in [*BAD_IDS, [tok.vocab_size + 5000]]:
        for call in (tok.decode, tok.decode_bytes):
            with pytest.raises(InputError):
                call(ids)
    for bad in (-1, 2**32, 10**30, 1.5, "1", None, True):
        with pytest.raises(InputError):
            tok.token_bytes(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("algo", ALGOS)
def test_bad_modes_and_parameters_are_refused(algo: str, toks: dict[str, Tokenizer]) -> None:
    tok = toks[algo]
    ids = tok.encode("hello")
    for errors in ("bogus", "", None, 3, "STRICT"):
        with pytest.raises(InputError):
            tok.decode(ids, errors=errors)  # type: ignore[arg-type]
    for text in (b"bytes", None, 5, ["a"]):
        with pytest.raises(InputError):
            tok.encode(text)  # type: ignore[arg-type]
    for special in ("none", b"x", 5, [5]):
        with pytest.raises(InputError):
            tok.encode("x", allowed_special=special)  # type: ignore[arg-type]
    for threads in (10**6, 257, -1, 2**64, 1.5, True, "2", None):
        with pytest.raises(InputError):
            tok.encode_batch(["a", "b"], threads=threads)  # type: ignore[arg-type]
        with pytest.raises(InputError):
            tok.encode_ordinary_batch(["a"], threads=threads)  # type: ignore[arg-type]
    for batch in ("one text", b"x", [1, 2], None):
        with pytest.raises(InputError):
            tok.encode_batch(batch)  # type: ignore[arg-type]
    for alpha in (math.nan, math.inf, -math.inf, 0.0, -1.0, "0.1", None, True):
        with pytest.raises(InputError):
            tok.sample("hello", alpha=alpha)  # type: ignore[arg-type]
    for k in (0, -1, 10**9, 2.0, None, True):
        with pytest.raises(InputError):
            tok.nbest("hello", k)  # type: ignore[arg-type]
    if algo != "unigram":
        for call in (lambda: tok.nbest("hello", 2), lambda: tok.sample("hello", alpha=0.1, seed=1)):
            with pytest.raises(InputError, match="Unigram"):
                call()


@pytest.mark.parametrize("algo", ALGOS)
def test_the_core_refuses_what_the_python_api_would(algo: str, toks: dict[str, Tokenizer]) -> None:
    """The core is reachable without the Python checks (tokreg._core): it must refuse with
    InputError too, never panic (a PanicException) or start a million threads."""
    enc = toks[algo]._enc
    for threads in (10**6, 257):
        with pytest.raises(InputError, match="threads"):
            enc.encode_batch(["a", "b"], [], threads)
    with pytest.raises(OverflowError):
        enc.encode_batch(["a"], [], -1)  # not a usize: PyO3's own clear error
    with pytest.raises(InputError):
        enc.decode_bytes([2**32 - 1])
    with pytest.raises(InputError):
        enc.decode_bytes([-5])
    with pytest.raises(InputError):
        enc.token_bytes(-1)
    if algo == "unigram":
        for alpha in (math.nan, math.inf, 0.0, -2.0):
            with pytest.raises(InputError, match="alpha"):
                enc.sample("hello", alpha, 1)
        assert len(enc.nbest("hello", 2**62)) >= 1  # capped, not allocated


LONG = 1_000_000


@pytest.mark.parametrize("algo", ALGOS)
def test_long_single_lines(algo: str, toks: dict[str, Tokenizer]) -> None:
    """A megabyte in one line, of prose and of one repeated character, encodes (`just bench
    long_lines` measures the time and memory of 1-100 MB lines)."""
    tok = toks[algo]
    prose = head_lines("kjv.txt", LONG).decode("utf-8").replace("\n", " ")
    ids = tok.encode_ordinary(prose)
    assert ids and len(ids) < len(prose)
    for text in ("a" * LONG, "日" * 100_000, "ab1" * 300_000):
        assert tok.encode_ordinary(text)
    # BERT's clean-up drops NUL and control characters: WordPiece gives nothing, the rest ids.
    assert bool(tok.encode_ordinary("\x00" * 100_000)) == (algo != "wordpiece")


def test_sp_bpe_long_lines_give_sentencepiece_ids(tmp_path: Path, toks: dict[str, Tokenizer]) -> None:
    """The SentencePiece-BPE encoder now cuts a line where no piece can join its two sides;
    on a long line of prose (and of spaces) it must still give the library's ids."""
    import sentencepiece as spm

    folder = tmp_path
    seeds = hostile.make_seeds(folder / "seeds", hostile.write_corpus(folder / "corpus.txt"))
    sp = spm.SentencePieceProcessor(model_proto=seeds["sp-bpe"])
    tok = toks["sp_bpe"]
    prose = head_lines("kjv.txt", 300_000).decode("utf-8").replace("\n", " ")
    for text in (prose, "  ".join(prose.split(" ")[:5000]), "a" * 5000 + " b" * 5000, "日本 " * 3000):
        assert tok.encode_ordinary(text) == sp.encode(text)
