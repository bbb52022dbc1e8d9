"""Unigram on German and Japanese (the corpora of ../shared/tools/lang-corpora.sh, found through
TOKREG_LANG_DATA; the tests skip, saying so, when they are absent): a model trained with
tokreg's defaults on a slice of each decodes every line back byte for byte, and with options
matched to SentencePiece's (no byte fallback, identity normalization, every character
covered) it needs about as many tokens as `sentencepiece`'s own trainer on held-out lines of
the same corpus.

A slice: blocks of 100 lines taken evenly over the whole file (so that every source in it is
sampled), every fifth block held out and never trained on. The fast lane decodes 100 KB of each
back; `just test` compares with SentencePiece on 300 KB at 2,000 pieces and on 1.5 MB of
Japanese at 8,000. The tolerance, 1% (the issue's bound), is what the measured figures justify:
the trainer's revision 3 gives -0.42% (German) and +0.75% / -0.33% (Japanese, 300 KB and
1.5 MB), revision 2 -0.24%, +1.28% and +1.16%, revision 1 +0.56%, +3.33% and +1.65%."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tokreg import Registry, UnigramOptions

from .conftest import lang_file, slow

spm = pytest.importorskip("sentencepiece")

TOLERANCE = 0.01


def _slice(name: str, size: int) -> tuple[list[str], list[str]]:
    """(training lines, held-out lines) of about `size` bytes of a language corpus."""
    raw = lang_file(name).read_bytes()
    lines = [x for x in raw.decode("utf-8").splitlines() if x.strip()]
    blocks = [lines[i : i + 100] for i in range(0, len(lines), 100)]
    taken = blocks[:: max(1, len(raw) // size)]
    train = [x for j, b in enumerate(taken) if j % 5 != 4 for x in b]
    held = [x for j, b in enumerate(taken) if j % 5 == 4 for x in b]
    return train, held


ROUND_TRIP = [("de.txt", 100_000, 1000), ("ja.txt", 100_000, 1000)]
BESIDE_SP = [slow("de.txt", 300_000, 2000), slow("ja.txt", 300_000, 2000), slow("ja.txt", 1_500_000, 8000)]


def _train(folder: Path, lines: list[str], vocab: int, **options: Any) -> Any:
    corpus = folder / "train.txt"
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    reg = Registry(folder / f"r{len(options)}.db")
    reg.train("t", [str(corpus)], UnigramOptions(vocab_size=vocab, threads=2, **options))
    return reg.load("t")


@pytest.mark.parametrize("name,size,vocab", ROUND_TRIP)
def test_defaults_decode_every_line(tmp_path: Path, name: str, size: int, vocab: int) -> None:
    train, held = _slice(name, size)
    tok = _train(tmp_path, train, vocab)
    lines = train + held
    got = tok.encode_batch(lines)
    bad = [i for i, ids in enumerate(got) if tok.decode(ids) != lines[i]]
    assert not bad, f"{len(bad)} of {len(lines)} lines of {name} do not decode back, first: {lines[bad[0]]!r}"


@pytest.mark.parametrize("name,size,vocab", BESIDE_SP)
def test_tokens_beside_sentencepiece(tmp_path: Path, name: str, size: int, vocab: int) -> None:
    train, held = _slice(name, size)
    ours = _train(tmp_path, train, vocab, byte_fallback=False)
    spm.SentencePieceTrainer.train(
        input=str(tmp_path / "train.txt"),
        model_prefix=str(tmp_path / "sp"),
        num_threads=2,
        minloglevel=2,
        **UnigramOptions(vocab_size=vocab, byte_fallback=False).spm_train_options(),
    )
    sp = spm.SentencePieceProcessor(model_file=str(tmp_path / "sp.model"))
    n_ours = sum(map(len, ours.encode_batch(held)))
    n_sp = sum(map(len, sp.encode(held)))
    assert n_ours <= n_sp * (1 + TOLERANCE), (
        f"{name} at {vocab:,}: tokreg {n_ours:,} tokens, SentencePiece {n_sp:,} ({100 * (n_ours / n_sp - 1):+.2f}%)"
    )
