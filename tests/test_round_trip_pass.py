"""The round trip over counted pieces (`encode/round_trip.rs`) segments every distinct piece
without the encoder's piece cache (`bpe/distinct_pass.rs`) and a superword version's runs with
the stage-1 cache held per task: the same six numbers as the encoder's own path
(`uncached=False`, each key through `segment_counted`) and as the lines, on real text and on
random characters, for trained vocabularies and cl100k, on any thread count."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from tokreg import BpeOptions, SuperwordOptions, Tokenizer, _core
from tokreg.content import serialize as content_bytes
from tokreg.training import train_run
from tokreg.training.corpus import Corpus

from .conftest import data_file
from .test_core_encoder import CL100K, read_ranks


def _real_text() -> str:
    """Lines of Chinese, English prose and the KJV in turn, a few odd lines among them."""
    texts = [data_file(n).read_text(encoding="utf-8").splitlines(keepends=True) for n in ("dr.zh-cn.txt", "dr.en.txt")]
    texts.append(data_file("kjv.txt").read_text(encoding="utf-8").splitlines(keepends=True)[:300])
    lines = [t[k] for k in range(120) for t in texts if k < len(t)]
    lines += ["a  b\t\tc   \r\n", "\n", "   \n", "x<|endoftext|>y\n", "aaaa" * 100 + "\n", "tail  "]
    return "".join(lines)


def _random_text(seed: int, size: int = 30_000) -> str:
    """Random characters from ASCII, Latin-1, CJK and emoji, with spaces and line breaks."""
    rnd = random.Random(seed)
    pools = [(0x20, 0x7E), (0xA0, 0x17F), (0x4E00, 0x4E40), (0x1F600, 0x1F610), (0x3040, 0x3060)]
    out = []
    for _ in range(size):
        r = rnd.random()
        if r < 0.1:
            out.append(" ")
        elif r < 0.12:
            out.append("\n")
        else:
            lo, hi = pools[rnd.randrange(len(pools))]
            out.append(chr(rnd.randint(lo, hi)))
    return "".join(out)


def _both_paths(enc: _core.Encoder, specials: list[int], path: Path, options: BpeOptions | SuperwordOptions) -> None:
    counts = train_run.count(Corpus.of([path]), options).counts
    old = enc.round_trip_pieces(counts, specials, 1, uncached=False)
    assert old is not None
    for threads in (1, 2, 3):
        assert enc.round_trip_pieces(counts, specials, threads) == old, threads
    assert enc.round_trip([path.read_bytes()], specials, 2) == old


def _trained(path: Path, options: BpeOptions | SuperwordOptions) -> tuple[_core.Encoder, list[int]]:
    tok = Tokenizer.of_finished(train_run.train(Corpus.of([path]), options)[0], ref="t")
    return tok._enc, sorted(set(tok.special_tokens.values()))


def _cl100k_head(n: int) -> _core.Encoder:
    """cl100k's first `n` ranks (every merged token among them is made of lower ones) and a
    special token: a cl100k-like vocabulary that builds in a fraction of a second."""
    ranks = read_ranks(data_file("cl100k_base.tiktoken"))
    ordinary = sorted((r, t) for t, r in ranks.items() if r < n)
    tokens: list[Any] = [(r, "byte" if len(t) == 1 else "merged", t, None) for r, t in ordinary]
    tokens.append((n, "special", b"<|endoftext|>", None))
    content = content_bytes("bpe", {"byte_level": True, "pattern": CL100K}, tokens, _core.merges_from_ranks(ordinary))
    return _core.Encoder.byte_bpe(content, CL100K)


@pytest.mark.parametrize("which", ["real", "random"])
def test_trained_bpe_pass_equals_the_encoders_path(tmp_path: Path, which: str) -> None:
    path = tmp_path / "c.txt"
    path.write_text(_real_text() if which == "real" else _random_text(7), encoding="utf-8")
    options = BpeOptions(vocab_size=1500, pattern="cl100k", special=("<|endoftext|>",))
    _both_paths(*_trained(path, options), path, options)


@pytest.mark.parametrize("which", ["real", "random"])
def test_cl100k_like_pass_equals_the_encoders_path(tmp_path: Path, which: str) -> None:
    path = tmp_path / "c.txt"
    path.write_text(_real_text() if which == "real" else _random_text(11), encoding="utf-8")
    n = 30_000
    _both_paths(_cl100k_head(n), [n], path, BpeOptions(vocab_size=1000, pattern="cl100k"))


@pytest.mark.parametrize("which", ["real", "random"])
def test_superword_pass_equals_the_encoders_path(tmp_path: Path, which: str) -> None:
    path = tmp_path / "c.txt"
    path.write_text(_real_text() if which == "real" else _random_text(13), encoding="utf-8")
    options = SuperwordOptions(vocab_size=1200, transition=900, threads=1)
    _both_paths(*_trained(path, options), path, options)
