"""Training a Unigram LM (SentencePiece style). Text is a stream in which spaces become ▁
(U+2581) and each line starts with a dummy ▁; lines are cut into ▁-words, counted in parallel,
and the Rust core runs the trainer: a seed vocabulary of frequent substrings, EM over piece
log-probabilities, and pruning of the pieces whose removal costs least likelihood (keeping
`shrinking_factor` of them per round, never a single character) down to `vocab_size`.

Ids (SentencePiece's layout): the unknown piece 0, then the control pieces (--special), then
the 256 byte pieces `<0x00>`..`<0xFF>` with --byte-fallback, then the learned pieces by score
descending, ties by UTF-8 bytes. Every piece keeps its log probability as its score; every
EM / prune round is recorded (vocab size, log-likelihood).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Optional

from .. import _core
from ..corpus import read_corpus
from ..errors import InputError
from ..result import RoundRow, TokenizerData, TokenRow
from .common import OptionsJson, Progress, check_threads, core_errors, run_record


@dataclass(frozen=True)
class UnigramOptions(OptionsJson):
    vocab_size: int
    byte_fallback: bool = False
    shrinking_factor: float = 0.75  # fraction of pieces kept per prune round
    max_piece_length: int = 16  # characters
    seed_size: int = 1_000_000
    em_iterations: int = 2
    unk_token: str = "<unk>"
    special: tuple[str, ...] = ()  # control pieces, e.g. <s> </s>; never matched in text
    character_coverage: float = 1.0
    add_dummy_prefix: bool = True
    remove_extra_whitespaces: bool = False  # True collapses runs of spaces (lossy), as SentencePiece does
    threads: int = 0


def encoding_config(
    *,
    byte_fallback: bool,
    unk_token: str,
    add_dummy_prefix: bool,
    remove_extra_whitespaces: bool,
    escape_whitespaces: bool = True,
) -> dict[str, Any]:
    """The Unigram config that changes encoding (shared with SentencePiece import)."""
    return {
        "normalizer": {
            "name": "identity",
            "add_dummy_prefix": add_dummy_prefix,
            "remove_extra_whitespaces": remove_extra_whitespaces,
            "escape_whitespaces": escape_whitespaces,
        },
        "byte_fallback": byte_fallback,
        "unk_token": unk_token,
    }


@contextmanager
def _vocab_hint(vocab_size: int) -> Iterator[None]:
    try:
        yield
    except ValueError as e:
        if "smaller than" in str(e):
            raise InputError(f"--vocab-size {vocab_size} is too small: {e}; raise --vocab-size") from None
        if "too large" in str(e):
            raise InputError(f"--vocab-size {vocab_size}: {e}; lower --vocab-size or give more text") from None
        raise


def train_unigram(
    files: Sequence[str | os.PathLike[str]], opts: UnigramOptions, progress: Optional[Progress] = None
) -> TokenizerData:
    """Trains a Unigram LM on `files`; returns the plain result (nothing is written)."""
    started, t0 = datetime.now(timezone.utc), time.perf_counter()
    check_threads(opts.threads)
    if not 0.0 < opts.shrinking_factor < 1.0:
        raise InputError(f"--shrinking-factor {opts.shrinking_factor} must be between 0 and 1 (e.g. 0.75)")
    corpus = read_corpus(files, require_utf8=True)
    with core_errors("training"), _vocab_hint(opts.vocab_size):
        out = _core.train_unigram(
            corpus.data,
            opts.vocab_size,
            byte_fallback=opts.byte_fallback,
            shrinking_factor=opts.shrinking_factor,
            max_piece_length=opts.max_piece_length,
            seed_size=opts.seed_size,
            em_iterations=opts.em_iterations,
            unk_piece=opts.unk_token,
            control_pieces=list(opts.special),
            character_coverage=opts.character_coverage,
            add_dummy_prefix=opts.add_dummy_prefix,
            remove_extra_whitespaces=opts.remove_extra_whitespaces,
            threads=opts.threads,
            progress=progress,
        )
    tokens = [
        TokenRow(id=i, bytes=text.encode("utf-8"), kind=kind, score=score)
        for i, (text, score, kind) in enumerate(out["pieces"])
    ]
    rounds = [RoundRow(round=r, phase="em", vocab_size=n, log_likelihood=ll) for r, n, ll in out["rounds"]]
    config = encoding_config(
        byte_fallback=opts.byte_fallback,
        unk_token=opts.unk_token,
        add_dummy_prefix=opts.add_dummy_prefix,
        remove_extra_whitespaces=opts.remove_extra_whitespaces,
    )
    run = run_record(
        "unigram",
        opts.to_json(),
        corpus,
        threads=opts.threads,
        started=started,
        t0=t0,
        count_seconds=out["count_seconds"],
        train_seconds=out["train_seconds"],
    )
    return TokenizerData(algorithm="unigram", config=config, tokens=tokens, run=run, rounds=rounds)
