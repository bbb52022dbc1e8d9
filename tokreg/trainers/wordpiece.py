"""Training WordPiece (BERT): BERT normalization and pre-tokenization, then merges that maximise
count(ab) / (count(a) * count(b)). Counting and merging run in the Rust core.

Ids: special tokens first (the unknown token, then --special in order), then the alphabet
(first characters, and `##`-prefixed continuation characters, sorted by UTF-8 bytes), then merge
results in the order learned. Ties: higher score, then higher pair count, then the smaller left
token's bytes, then the smaller right token's bytes. Every merge records its score and the
three counts behind it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Optional

from .. import _core
from ..corpus import read_corpus
from ..errors import InputError
from ..result import MergeRow, TokenizerData, TokenRow
from .common import OptionsJson, Progress, check_threads, core_errors, run_record

FORMS = ("none", "nfc", "nfkc", "nfd", "nfkd")


@dataclass(frozen=True)
class WordPieceOptions(OptionsJson):
    vocab_size: int
    lowercase: bool = False
    strip_accents: Optional[bool] = None  # None: strip exactly when lowercasing (BERT's rule)
    unicode_normalization: str = "none"  # applied before the BERT steps: none | nfc | nfkc | nfd | nfkd
    clean_text: bool = True  # drop control characters, map whitespace to spaces
    handle_chinese_chars: bool = True  # isolate each CJK character as a word
    continuing_prefix: str = "##"
    unk_token: str = "[UNK]"
    special: tuple[str, ...] = ()  # e.g. [CLS] [SEP] [PAD] [MASK]
    min_frequency: int = 0
    limit_alphabet: Optional[int] = None
    max_input_chars_per_word: int = 100
    threads: int = 0

    def normalizer(self) -> dict[str, Any]:
        """The normalizer settings, as stored in the version's config and passed to the core."""
        return {
            "clean_text": self.clean_text,
            "handle_chinese_chars": self.handle_chinese_chars,
            "strip_accents": self.strip_accents,
            "lowercase": self.lowercase,
            "unicode_form": None if self.unicode_normalization == "none" else self.unicode_normalization,
        }


def token_kind(token: str, prefix: str, specials: set[str]) -> str:
    """A WordPiece token's kind, from the token alone (so imports hash like training output):
    special; char (one character, or the prefix and one character: the alphabet); merged."""
    if token in specials:
        return "special"
    body = token[len(prefix):] if prefix and token.startswith(prefix) and token != prefix else token
    return "char" if len(body) == 1 else "merged"


def encoding_config(opts: WordPieceOptions) -> dict[str, Any]:
    return {
        "normalizer": opts.normalizer(),
        "pre_tokenizer": "bert",
        "continuing_prefix": opts.continuing_prefix,
        "unk_token": opts.unk_token,
        "max_input_chars_per_word": opts.max_input_chars_per_word,
    }


def train_wordpiece(
    files: Sequence[str | os.PathLike[str]], opts: WordPieceOptions, progress: Optional[Progress] = None
) -> TokenizerData:
    """Trains WordPiece on `files`; returns the plain result (nothing is written)."""
    started, t0 = datetime.now(timezone.utc), time.perf_counter()
    check_threads(opts.threads)
    if opts.unicode_normalization not in FORMS:
        raise InputError(f"--normalization {opts.unicode_normalization!r} is not one of {', '.join(FORMS)}")
    if not opts.continuing_prefix:
        raise InputError("--prefix must not be empty (BERT uses '##')")
    specials = list(dict.fromkeys([opts.unk_token, *opts.special]))
    if opts.vocab_size <= len(specials):
        raise InputError(
            f"--vocab-size {opts.vocab_size} leaves no room beside {len(specials)} special tokens"
        )
    corpus = read_corpus(files, require_utf8=True)
    with core_errors("training"):
        out = _core.train_wordpiece(
            corpus.data,
            opts.vocab_size,
            specials,
            continuing_prefix=opts.continuing_prefix,
            min_frequency=opts.min_frequency,
            limit_alphabet=opts.limit_alphabet,
            threads=opts.threads,
            progress=progress,
            **opts.normalizer(),
        )
    merged = {m[2] for m in out["merges"]}
    tokens = []
    for i, (text, count) in enumerate(out["tokens"]):
        kind = "special" if i < len(specials) else "merged" if i in merged else "char"
        tokens.append(
            TokenRow(id=i, bytes=text.encode("utf-8"), kind=kind, count=count if kind != "special" else None)
        )
    if len(tokens) - len(specials) == 0:
        raise InputError("the corpus has no words after normalization; give files that contain text")
    merges = [
        MergeRow(rank=k, left=a, right=b, result=z, count=pc, score=sc, left_count=lc, right_count=rc)
        for k, (a, b, z, sc, pc, lc, rc) in enumerate(out["merges"])
    ]
    run = run_record(
        "wordpiece",
        opts.to_json(),
        corpus,
        threads=opts.threads,
        started=started,
        t0=t0,
        count_seconds=out["count_seconds"],
        train_seconds=out["merge_seconds"],
    )
    return TokenizerData(
        algorithm="wordpiece", config=encoding_config(opts), tokens=tokens, merges=merges, run=run
    )
