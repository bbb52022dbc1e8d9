"""Training BPE, shared by its two flavours: byte-level (GPT-2 style, 256 byte tokens; module
byte_bpe) and classic character-level with an optional end-of-word suffix (Sennrich et al.;
module char_bpe). Counting and merging run in the Rust core (`bpe::train_corpus`).

Token ids: the base alphabet first (bytes 0..255 by value; or the corpus' characters sorted by
their UTF-8 bytes), then merge results in the order they were learned, then special tokens.
`vocab_size` counts all of them.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Optional

from .. import _core, patterns
from ..corpus import read_corpus
from ..data import MergeRow, TokenizerData, TokenRow
from ..errors import InputError, VocabularySizeError
from .base import PathLike
from .training import Progress, TrainOptions, flag, run_record

#: The unknown token every character-level version carries, for characters never seen in training.
CHAR_LEVEL_UNK = "<unk>"


@dataclass(frozen=True)
class BpeOptions(TrainOptions):
    """Options of a BPE training run (`--algo bpe`), byte-level unless `char_level`."""

    run_name = "bpe"

    vocab_size: int
    pattern: str = flag(
        "",
        metavar="NAME|REGEX",
        help="Pre-tokenizer: gpt2, cl100k, o200k, whitespace, or a regex "
        "[default: cl100k; whitespace with --char-level].",
    )
    char_level: bool = flag(False, help="Classic BPE over characters instead of bytes.")
    end_of_word_suffix: Optional[str] = flag(
        None, metavar="S", help="End-of-word symbol for --char-level, e.g. '</w>'."
    )
    min_frequency: int = 0
    special: tuple[str, ...] = ()
    threads: int = 0  # 0 = one per core; never changes the result

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> BpeOptions:
        d = {k: v for k, v in d.items() if k != "pattern_name"}  # recorded beside the options, derived
        return super().from_json(d)

    def pattern_or_default(self) -> str:
        return self.pattern or ("whitespace" if self.char_level else "cl100k")


def _specials(opts: BpeOptions) -> list[str]:
    wanted = ([CHAR_LEVEL_UNK] if opts.char_level else []) + list(opts.special)
    return list(dict.fromkeys(wanted))


def train(files: Sequence[PathLike], opts: BpeOptions, progress: Optional[Progress]) -> tuple[TokenizerData, str]:
    """Trains BPE on `files`; returns the plain result (nothing is written) and the regex used.
    The caller (byte_bpe or char_bpe) fills in its config."""
    started = datetime.now(timezone.utc)
    t0 = time.perf_counter()
    opts.check_common()
    pattern_name, regex = patterns.resolve(opts.pattern_or_default())
    if opts.end_of_word_suffix is not None and not opts.char_level:
        raise InputError("--end-of-word-suffix applies to character-level BPE; add --char-level")
    specials = _specials(opts)
    base = 0 if opts.char_level else 256
    if opts.vocab_size < base + len(specials) + (1 if opts.char_level else 0):
        raise InputError(
            f"--vocab-size {opts.vocab_size} is smaller than the base alphabet: byte-level BPE needs at least "
            f"{base + len(specials)} (256 bytes + {len(specials)} special tokens)"
            if not opts.char_level
            else f"--vocab-size {opts.vocab_size} is too small for character-level BPE"
        )
    corpus = read_corpus(
        files,
        require_utf8=opts.char_level,
        utf8_hint="character-level BPE needs UTF-8 text (convert the file, or drop --char-level to train byte-level)",
    )
    try:
        out: dict[str, Any] = _core.train_bpe(
            corpus.data,
            regex,
            opts.vocab_size - len(specials),
            min_frequency=opts.min_frequency,
            char_level=opts.char_level,
            end_of_word=opts.end_of_word_suffix,
            threads=opts.threads,
            progress=progress,
        )
    except VocabularySizeError as e:
        symbols = "characters" if opts.char_level else "bytes"
        raise InputError(
            f"--vocab-size {opts.vocab_size} is smaller than the base alphabet: the corpus has {e.needed:,} "
            f"{symbols} (+ {len(specials)} special tokens); raise --vocab-size to at least "
            f"{(e.needed or 0) + len(specials):,}"
        ) from None
    tokens: list[bytes] = out["tokens"]
    counts: list[int] = out["token_counts"]
    n_base = out["alphabet_size"]
    base_kind = "char" if opts.char_level else "byte"
    rows = [
        TokenRow(id=i, bytes=b, kind=base_kind if i < n_base else "merged", count=counts[i])
        for i, b in enumerate(tokens)
    ]
    for s in specials:
        rows.append(TokenRow(id=len(rows), bytes=s.encode("utf-8"), kind="special"))
    merges = [MergeRow(rank=r, left=a, right=b, result=z, count=c) for r, (a, b, z, c) in enumerate(out["merges"])]
    run = run_record(
        opts,
        corpus,
        started=started,
        t0=t0,
        count_seconds=out["count_seconds"],
        train_seconds=out["merge_seconds"],
        extra_config={"pattern_name": pattern_name},
        distinct_pieces=out["distinct_pieces"],
    )
    data = TokenizerData(algorithm="bpe", config={}, tokens=rows, merges=merges, run=run)
    return data, regex
