"""The counting phase per language, for a trainer that asks for it (`Trainer.languages`;
parity-aware BPE): each source of the corpus labelled with its language by the plan (a `--lang`
path equal to the source's, or the nearest folder above it), or each JSON Lines record by a
field of its own (`--lang-field`), each language's text counted apart, and each language's
development text (`--parallel`) counted the same way.

Every source must get a language and every `--lang` path must hold a source: anything else is
refused in one line, naming the file. With `--lang` paths the corpus is read once: what the run
records of the whole corpus (its fingerprint, files and counting figures) is put together from
the languages' counts (`count_corpus`). With `--lang-field` the run counts the corpus once more
as a whole for that record, since the languages are found only by reading every record.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any, Optional

from .. import _core, algorithms
from ..algorithms.interfaces import check_languages
from ..errors import InputError
from . import budget, counting_local, round_trip
from .corpus import Corpus, Source, expand
from .corpus.decompress import open_decompressed
from .corpus.fingerprint import fingerprint
from .corpus.records import record_text


def label(sources: list[Source], plan: algorithms.LanguagePlan) -> dict[str, list[Source]]:
    """code -> its sources, in corpus order; the longest `--lang` path that is the source's
    own or a folder above it wins (so `--lang en=docs --lang ja=docs/ja` works)."""
    owners = sorted(((p, code) for code, paths in plan.train.items() for p in paths), key=lambda x: -len(x[0]))
    out: dict[str, list[Source]] = {code: [] for code in plan.train}
    for src in sources:
        if src.path is None:
            raise InputError(f"{src.name} has no language: parity-aware BPE reads files, each under a --lang CODE=PATH")
        path = os.path.abspath(src.path)
        code = next((c for p, c in owners if path == p or path.startswith(p.rstrip(os.sep) + os.sep)), None)
        if code is None:
            raise InputError(f"{src.name} has no language: give --lang CODE={src.name} (or --lang CODE=its folder)")
        out[code].append(src)
    empty = sorted(c for c, srcs in out.items() if not srcs)
    if empty:
        raise InputError(f"--lang {empty[0]} names no input of the corpus; give its files as INPUTS or drop it")
    return out


def count_corpus(
    corpus: Corpus,
    plan: algorithms.LanguagePlan,
    options: algorithms.TrainOptions,
    progress: Optional[counting_local.Progress] = None,
) -> tuple[Optional[counting_local.Counted], dict[str, _core.Counts], dict[str, _core.Counts]]:
    """(the whole corpus as the run records it, code -> counts of its training text, code ->
    counts of its development text). The whole corpus is made from the languages' counts, so
    each input is read once: its pieces summed, its files' records in corpus order with their
    fingerprint, and its text to measure the version on. None with `--lang-field`: the run
    counts the corpus as a whole itself."""
    spec = algorithms.trainer_for(options).counting(options)

    def counted(sources: list[Source], keep_text: int = 0) -> counting_local.Counted:
        return counting_local.count_sources(
            sources,
            spec,
            threads=options.threads,
            memory_limit=options.memory_limit,
            progress=progress,
            keep_text=keep_text,
        )

    whole = None
    if plan.field is not None:
        records = by_field(corpus.sources(), plan.field)
        check_languages(records, plan.dev)
        by_language = {
            code: counted([Source(name=f"{code} records", texts=texts)]).counts for code, texts in records.items()
        }
    else:
        t0 = time.perf_counter()
        sources = corpus.sources()
        owners = label(sources, plan)
        # The text the version is measured on (round_trip.py), as `train_run.count` keeps it:
        # plain files are read again after training; other inputs kept while counted.
        keep_text = min(round_trip.KEEP_BYTES, budget.effective(options.memory_limit) // 8)
        plain = all(s.path is not None and s.format == "text" for s in sources)
        share = 0 if plain else keep_text // len(owners)
        parts = {code: counted(srcs, share) for code, srcs in owners.items()}
        whole = _whole(sources, owners, parts, options, time.perf_counter() - t0)
        if plain and keep_text:
            whole.reread = lambda: round_trip.reread(sources, keep_text)
        by_language = {code: c.counts for code, c in parts.items()}
    dev = {code: counted(expand([path], glob=corpus.glob)).counts for code, path in plan.dev.items()}
    return whole, by_language, dev


def _whole(
    sources: list[Source],
    owners: dict[str, list[Source]],
    parts: dict[str, counting_local.Counted],
    options: algorithms.TrainOptions,
    seconds: float,
) -> counting_local.Counted:
    """The record of the whole corpus from its languages' counts: each source's record (name,
    size, xxh3) put back in corpus order, so the fingerprint is the one counting the corpus as a
    whole gives; the pieces summed; the kept text of every language."""
    record_of: dict[int, dict[str, Any]] = {}
    for code, srcs in owners.items():
        files = parts[code].corpus["files"]
        assert len(files) == len(srcs), "one record per source"
        record_of.update({id(src): rec for src, rec in zip(srcs, files)})
    files = [record_of[id(src)] for src in sources]
    counts = _core.Counts.sum([c.counts for c in parts.values()])
    info = counting_local.stats_info(counts, budget.effective(options.memory_limit))
    info.update(
        sample_bytes=0,
        sampled=False,
        text_bytes=sum(c.info.get("text_bytes", 0) for c in parts.values()),
        engine="local",
    )
    kept = [c.text for c in parts.values() if c.text is not None]
    text = ([seg for segs, _ in kept for seg in segs], all(w for _, w in kept)) if kept else None
    return counting_local.Counted(counts, {"fingerprint": fingerprint(files), "files": files}, seconds, info, text)


def by_field(sources: list[Source], field: str) -> dict[str, list[str]]:
    """code -> the texts of the JSON Lines records whose `field` holds that code (each a line of
    its language's corpus), codes sorted. The texts are held in memory until counted."""
    out: dict[str, list[str]] = {}
    for src in sources:
        if src.path is None or src.format != "jsonl":
            raise InputError(f"{src.name} is not a JSON Lines file: --lang-field reads each record's language")
        where = f"corpus file {src.path!r}"
        stream, _, _ = open_decompressed(src.path)
        with stream:
            for n, line in enumerate(stream, 1):
                if not line.strip():
                    continue
                text = record_text(line, n, where, src.field or "text")
                code = json.loads(line).get(field)
                if not isinstance(code, str) or not code:
                    raise InputError(f"{where} line {n} has no language in field {field!r} (a non-empty string)")
                out.setdefault(code, []).append(text if text.endswith("\n") else text + "\n")
    return {code: out[code] for code in sorted(out)}
