"""The counting phase of a run, on this machine: a core `Counter` made from a counting spec,
fed every source of the corpus in chunks, within the memory budget (budget.py), with its
result, the `Counts`, ready for a trainer or a counts file.

A counting spec is the JSON an algorithm gives for its options (`Algorithm.counting`): how a
line becomes pieces. It is recorded in counts files, and training from counts checks it.

    {"splitting": "pieces", "pattern": REGEX, "max_piece_bytes": N}           # BPE
    {"splitting": "superword", "pattern": REGEX, "max_words": K}              # superword BPE
    {"splitting": "bert", "normalizer": {...}, "max_piece_bytes": N}          # WordPiece
    {"splitting": "sentencepiece", "normalizer": {...}, "max_piece_bytes": N} # Unigram
        (normalizer: add_dummy_prefix, remove_extra_whitespaces, and when used "charsmap" (the
        rules, base64) and "user_defined"; "split_by_whitespace": false when off)
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from .. import _core
from ..errors import InputError
from . import budget, round_trip
from .corpus import Source, read_into

Progress = Callable[[str, int, int], None]


def new_counter(counting: dict[str, Any], *, threads: int = 0, table_budget: int = 1 << 62) -> _core.Counter:
    """A core counter for a counting spec."""
    kind = counting.get("splitting")
    common: dict[str, Any] = {
        "max_piece_bytes": int(counting.get("max_piece_bytes", 0)),
        "table_budget": table_budget,
        "threads": threads,
    }
    if kind == "pieces":
        return _core.Counter.pieces(counting["pattern"], **common)
    if kind == "superword":
        return _core.Counter.superword(
            counting["pattern"], int(counting["max_words"]), table_budget=table_budget, threads=threads
        )
    if kind == "bert":
        return _core.Counter.bert(**counting["normalizer"], **common)
    if kind == "sentencepiece":
        n = counting["normalizer"]
        import base64  # here: only SentencePiece's normalizer rules are stored in base64

        rules = base64.b64decode(n["charsmap"]) if "charsmap" in n else None
        return _core.Counter.sentencepiece(
            n["add_dummy_prefix"],
            n["remove_extra_whitespaces"],
            charsmap=rules,
            user_defined=list(n.get("user_defined", [])),
            split_by_whitespace=bool(counting.get("split_by_whitespace", True)),
            line_ends=bool(counting.get("line_ends", False)),
            **common,
        )
    raise InputError(f"counts made with splitting {kind!r} are not known to this tokreg; upgrade tokreg")


@dataclass
class Counted:
    """What the counting phase gives a run: the counts (after the budget rule) and what it
    records of the corpus and of itself."""

    counts: _core.Counts
    corpus: dict[str, Any]  # {"fingerprint", "files"}
    seconds: float
    info: dict[str, Any] = field(default_factory=dict)  # memory limit, sample, engine, stats
    #: The corpus text kept while counting (round_trip.Keep): its segments and whether they are
    #: all of it; None when counted elsewhere (a counts file, a cluster) or not asked for.
    text: Optional[tuple[list[bytes], bool]] = None
    #: Instead of `text` for a corpus of plain files: reads that text again from the files, after
    #: training, so that it is not held in memory beside the trainer (round_trip.reread).
    reread: Optional[Callable[[], tuple[list[bytes], bool]]] = None

    @property
    def reproducible(self) -> bool:
        return all(f.get("path") for f in self.corpus["files"])


def stats_info(counts: _core.Counts, limit: int) -> dict[str, Any]:
    s = counts.stats
    total = s.total or 1
    return {
        "memory_limit": limit,
        "pieces": s.pieces,
        "dropped_pieces": s.dropped_pieces,
        "dropped_total": s.dropped_total,
        "dropped_mass": round(s.dropped_total / total, 6),
        "spilled_runs": s.spilled_runs,
    }


def count_sources(
    sources: Sequence[Source],
    counting: dict[str, Any],
    *,
    threads: int = 0,
    memory_limit: Optional[int] = None,
    sample_bytes: int = 0,
    require_utf8: bool = False,
    utf8_hint: str = "",
    progress: Optional[Progress] = None,
    keep: bool = True,
    keep_text: int = 0,
) -> Counted:
    """Counts `sources` here. With `keep`, the budget rule is applied for training; with
    `keep_text`, up to that many bytes of the corpus text are kept (`Counted.text`)."""
    t0 = time.perf_counter()
    limit = budget.effective(memory_limit)
    table_budget, train_budget = budget.shares(limit)
    counter = new_counter(counting, threads=threads, table_budget=table_budget)
    kept = round_trip.Keep(counter, keep_text) if keep_text else None
    try:
        read = read_into(
            kept or counter,
            sources,
            progress=progress,
            sample_bytes=sample_bytes,
            require_utf8=require_utf8,
            utf8_hint=utf8_hint,
        )
        if progress is not None:
            progress("finish", 0, 0)
        counts = counter.finish(train_budget if keep else None)
    except MemoryError:
        raise InputError(
            f"counting ran out of memory within --memory-limit {limit >> 20}M; lower the limit so more is "
            "spilled to disk, or free memory"
        ) from None
    info = stats_info(counts, limit)
    info.update(sample_bytes=sample_bytes, sampled=read.sampled, text_bytes=read.text_bytes, engine="local")
    corpus = {"fingerprint": read.fingerprint, "files": read.records}
    return Counted(counts, corpus, time.perf_counter() - t0, info, kept.text() if kept else None)


def apply_budget(counted: Counted, memory_limit: Optional[int]) -> Counted:
    """The budget rule applied for training to counts made elsewhere (a file, a cluster)."""
    limit = budget.effective(memory_limit)
    _, train_budget = budget.shares(limit)
    counts = counted.counts.keep_within(train_budget)
    info = {**counted.info, **stats_info(counts, limit)}
    return Counted(counts, counted.corpus, counted.seconds, info, counted.text)
