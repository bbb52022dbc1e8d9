"""Unigram encoding gives SentencePiece's ids: a small model trained here with the `sentencepiece`
library (vocab 3000, on whole lines of the three shared corpora) is rebuilt in tokreg from its
pieces and scores, and both encode every line of the corpora, with and without byte fallback.
This pins the fast encode path (Viterbi, normalization, batching) to SentencePiece itself,
independently of any file-format import."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tokreg import Registry, Tokenizer
from tokreg.algorithms.sentencepiece_text import SpNormalizerConfig
from tokreg.algorithms.unigram.model import UnigramConfig
from tokreg.data import TokenizerData, TokenRow

from .conftest import CORPORA, CORPORA_BY_LANE, data_file

spm = pytest.importorskip("sentencepiece")


def _kind(sp: Any, i: int) -> str:
    # The Python API has no is_user_defined; models trained here have no user-defined pieces.
    if sp.is_unknown(i):
        return "unknown"
    if sp.is_control(i):
        return "control"
    if sp.is_unused(i):
        return "unused"
    if sp.is_byte(i):
        return "byte"
    return "normal"


@pytest.fixture(scope="module", params=[False, True], ids=["no-byte-fallback", "byte-fallback"])
def pair(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Tokenizer, Any]:
    byte_fallback: bool = request.param
    folder = tmp_path_factory.mktemp("ugsp")
    corpus = folder / "slice.txt"
    with corpus.open("w", encoding="utf-8") as fh:
        for name in CORPORA:
            fh.write("\n".join(data_file(name).read_text(encoding="utf-8").splitlines()[:2000]) + "\n")
    spm.SentencePieceTrainer.train(
        input=str(corpus),
        model_prefix=str(folder / "sp"),
        vocab_size=3000,
        model_type="unigram",
        normalization_rule_name="identity",
        remove_extra_whitespaces=False,
        byte_fallback=byte_fallback,
        bos_id=-1,
        eos_id=-1,
        minloglevel=2,
    )
    sp = spm.SentencePieceProcessor(model_file=str(folder / "sp.model"))
    data = TokenizerData(
        algorithm="unigram",
        config=UnigramConfig(SpNormalizerConfig(add_dummy_prefix=True), byte_fallback, "<unk>").to_json(),
        tokens=[
            TokenRow(id=i, bytes=sp.id_to_piece(i).encode(), kind=_kind(sp, i), score=sp.get_score(i))
            for i in range(sp.get_piece_size())
        ],
    )
    reg = Registry(Path(folder) / "registry.db")
    reg.add("sp", data)
    return reg.load("sp"), sp


@pytest.mark.parametrize("name", CORPORA_BY_LANE)
def test_same_ids_on_every_line(pair: tuple[Tokenizer, Any], name: str) -> None:
    tok, sp = pair
    lines = data_file(name).read_text(encoding="utf-8").splitlines()
    want = sp.encode(lines)
    for threads in (1, 2):
        got = tok.encode_batch(lines, threads=threads)
        bad = [i for i in range(len(lines)) if got[i] != want[i]]
        assert not bad, f"{len(bad)} of {len(lines)} lines differ (threads={threads}), first: {lines[bad[0]]!r}"


def test_same_ids_on_whole_texts_and_odd_lines(pair: tuple[Tokenizer, Any]) -> None:
    tok, sp = pair
    odd = ["", " ", "  two  spaces  ", "\u2581literal mark", "tab\tand\nnewline", "日本語 テキスト"]
    odd += ["x" * 5000, "🙂 ok"]
    for text in odd + [data_file(name).read_text(encoding="utf-8")[:300_000] for name in CORPORA]:
        assert tok.encode_ordinary(text) == sp.encode(text), repr(text[:60])
    assert tok.encode_batch(odd) == sp.encode(odd)


def test_batch_keeps_unknown_runs_of_neighbouring_texts_apart(pair: tuple[Tokenizer, Any]) -> None:
    # Characters the model has never seen (unknown without byte fallback) at the end of one text
    # and the start of the next: each text's unknown run is its own, in a batch as alone.
    unseen = "\U0001d54f\U0001d550"  # 𝕏𝕐: not in the training slice
    texts = [f"{unseen}a{unseen}", f"{unseen}", f"{unseen} b {unseen}", "", unseen * 3, "plain"]
    texts = texts * 50
    tok, sp = pair
    if sp.piece_to_id("<0x41>") == sp.unk_id():  # no byte fallback: the run really is unknown
        assert sp.unk_id() in sp.encode(unseen)
    want = sp.encode(texts)
    for threads in (1, 2):
        assert tok.encode_batch(texts, threads=threads) == want
    assert [tok.encode_ordinary(t) for t in texts] == want
