"""Training BPE: byte-level (GPT-2 style, 256 byte tokens) or classic character-level with an
optional end-of-word suffix (Sennrich et al.). Counting and merging run in the Rust core.

Token ids: the base alphabet first (bytes 0..255 by value; or the corpus' characters sorted by
their UTF-8 bytes), then merge results in the order they were learned, then special tokens.
`vocab_size` counts all of them.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Optional

from .. import _core, patterns
from ..corpus import read_corpus
from ..errors import InputError
from ..result import MergeRow, TokenizerData, TokenRow
from .common import OptionsJson, Progress, check_threads, core_errors, run_record

CHAR_LEVEL_UNK = "<unk>"


@dataclass(frozen=True)
class BpeOptions(OptionsJson):
    vocab_size: int
    pattern: str = ""  # a built-in name or a regex; "" = cl100k (byte-level) / whitespace (char-level)
    char_level: bool = False
    end_of_word_suffix: Optional[str] = None
    min_frequency: int = 0
    special: tuple[str, ...] = ()
    threads: int = 0  # 0 = one per core; never changes the result


def _specials(opts: BpeOptions) -> list[str]:
    out: list[str] = []
    wanted = ([CHAR_LEVEL_UNK] if opts.char_level else []) + list(opts.special)
    for s in wanted:
        if not s:
            raise InputError("--special needs a non-empty token")
        if s not in out:
            out.append(s)
    return out


def _run_core(
    data: list[bytes], regex: str, opts: BpeOptions, specials: list[str], progress: Optional[Progress]
) -> dict[str, Any]:
    try:
        return _core.train_bpe(
            data,
            regex,
            opts.vocab_size - len(specials),
            min_frequency=opts.min_frequency,
            char_level=opts.char_level,
            end_of_word=opts.end_of_word_suffix,
            threads=opts.threads,
            progress=progress,
        )
    except ValueError as e:
        if "smaller than the base alphabet" in str(e):
            raise InputError(
                f"--vocab-size {opts.vocab_size} is smaller than the base alphabet: {str(e).split(': ', 1)[1]} "
                f"(+ {len(specials)} special tokens); raise --vocab-size"
            ) from None
        raise


def train_bpe(
    files: Sequence[str | os.PathLike[str]], opts: BpeOptions, progress: Optional[Progress] = None
) -> TokenizerData:
    """Trains BPE on `files`; returns the plain result (nothing is written)."""
    started = datetime.now(timezone.utc)
    t0 = time.perf_counter()
    pattern_name, regex = patterns.resolve(opts.pattern or ("whitespace" if opts.char_level else "cl100k"))
    if opts.end_of_word_suffix is not None and not opts.char_level:
        raise InputError("--end-of-word-suffix applies to character-level BPE; add --char-level")
    check_threads(opts.threads)
    specials = _specials(opts)
    base = 0 if opts.char_level else 256
    if opts.vocab_size < base + len(specials) + (1 if opts.char_level else 0):
        raise InputError(
            f"--vocab-size {opts.vocab_size} is smaller than the base alphabet: byte-level BPE needs at least "
            f"{base + len(specials)} (256 bytes + {len(specials)} special tokens)"
            if not opts.char_level
            else f"--vocab-size {opts.vocab_size} is too small for character-level BPE"
        )
    corpus = read_corpus(files, require_utf8=opts.char_level)
    with core_errors("training"):
        out = _run_core(corpus.data, regex, opts, specials, progress)
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
    merges = [
        MergeRow(rank=r, left=a, right=b, result=z, count=c) for r, (a, b, z, c) in enumerate(out["merges"])
    ]
    config: dict[str, Any] = {"byte_level": not opts.char_level, "pattern": regex}
    if opts.char_level:
        config["end_of_word_suffix"] = opts.end_of_word_suffix
        config["unk_token"] = CHAR_LEVEL_UNK
    run = run_record(
        "bpe",
        {**opts.to_json(), "pattern_name": pattern_name},
        corpus,
        threads=opts.threads,
        started=started,
        t0=t0,
        count_seconds=out["count_seconds"],
        train_seconds=out["merge_seconds"],
        distinct_pieces=out["distinct_pieces"],
    )
    return TokenizerData(algorithm="bpe", config=config, tokens=rows, merges=merges, run=run)
