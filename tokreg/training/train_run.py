"""A training run, from inputs to recorded-ready results: check the options, count the corpus
(here, on a Dask cluster, or from a counts file), train once for every vocabulary size asked,
and attach to each result the run record the registry stores with it.

Several sizes from one run share one `run_group` (a random id) in their run records; each
size's record holds the options with its own `vocab_size` and, as `run_sizes`, all the sizes
of the run, which `reproduce` trains again to get that size (for BPE and WordPiece a size is
the same alone as in a run of several; a Unigram size below the largest is taken from the
pruning rounds of the larger ones, so only the run reproduces it).
"""

from __future__ import annotations

import dataclasses
import os
import time
import uuid
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any, Optional, Union

from .. import algorithms
from ..algorithms import template
from ..data import TokenizerData
from ..errors import InputError
from ..package_version import __version__
from . import counting_local, counts_file
from .corpus import expand
from .corpus.sources import Input

PathLike = Union[str, "os.PathLike[str]"]


def sizes_of(options: algorithms.TrainOptions, sizes: Optional[Sequence[int]]) -> list[int]:
    out = sorted({int(s) for s in (sizes or [options.vocab_size])})
    if not out:
        raise InputError("give at least one --vocab-size")
    return out


def count(
    inputs: Sequence[Input],
    options: algorithms.TrainOptions,
    *,
    glob: Optional[str] = None,
    field: Optional[str] = None,
    engine: Optional[str] = None,
    progress: Optional[algorithms.Progress] = None,
    keep: bool = True,
) -> counting_local.Counted:
    """The counting phase for `options`' algorithm: here, or on the Dask scheduler `engine`."""
    trainer = algorithms.trainer_for(options)
    spec = trainer.counting(options)
    sources = expand(inputs, glob=glob, field=field)
    hint = trainer.utf8_hint(options)
    if engine is not None:
        # Dask is an optional extra: imported only when a run asks for a cluster.
        from . import counting_dask

        counted = counting_dask.count(
            engine, sources, spec, options, require_utf8=hint is not None, utf8_hint=hint or ""
        )
        return counting_local.apply_budget(counted, options.memory_limit) if keep else counted
    return counting_local.count_sources(
        sources,
        spec,
        threads=options.threads,
        memory_limit=options.memory_limit,
        sample_bytes=options.sample_bytes,
        require_utf8=hint is not None,
        utf8_hint=hint or "",
        progress=progress,
        keep=keep,
    )


def from_counts(path: PathLike, options: algorithms.TrainOptions) -> counting_local.Counted:
    """The counting phase read from a counts file, checked to be counted as `options` count."""
    t0 = time.perf_counter()
    counts, header = counts_file.read(path)
    spec = algorithms.trainer_for(options).counting(options)
    if header.get("counting") != spec:
        raise InputError(
            f"counts file {os.fspath(path)!r} was counted with {header.get('counting')}, but these options count "
            f"with {spec}; count the corpus again with the same options (tokreg count ... --algo ...)"
        )
    info = {"engine": "counts file", "counts_file": os.path.abspath(os.fspath(path)), "sample_bytes": 0}
    counted = counting_local.Counted(counts, header["corpus"], time.perf_counter() - t0, info)
    return counting_local.apply_budget(counted, options.memory_limit)


def train(
    inputs: Sequence[Input],
    options: algorithms.TrainOptions,
    sizes: Optional[Sequence[int]] = None,
    *,
    glob: Optional[str] = None,
    field: Optional[str] = None,
    counts: Optional[PathLike] = None,
    engine: Optional[str] = None,
    progress: Optional[algorithms.Progress] = None,
) -> list[TokenizerData]:
    """Trains one result per size (ascending), each with its run record; nothing is written."""
    started = datetime.now(timezone.utc)
    t0 = time.perf_counter()
    trainer = algorithms.trainer_for(options)
    wanted = sizes_of(options, sizes)
    if wanted[0] < 1:
        raise InputError(f"the vocabulary size must be at least 1, not {wanted[0]}")
    options = dataclasses.replace(options, vocab_size=wanted[-1])  # type: ignore[type-var]
    trainer.check(options, wanted)
    if counts is not None:
        if inputs:
            raise InputError("give either corpus inputs or --from-counts, not both")
        counted = from_counts(counts, options)
    else:
        counted = count(inputs, options, glob=glob, field=field, engine=engine, progress=progress)
    if len(counted.counts) == 0:
        raise InputError(
            f"no piece fits --memory-limit {counted.info.get('memory_limit', 0) >> 20}M for training; raise it"
        )
    t1 = time.perf_counter()
    datas, info = trainer.train_counts(counted.counts, options, wanted, progress)
    for data in datas:  # the same for every algorithm: a config key only when there is a template
        template.attach(data.config, template.parse(options.template))
    train_seconds = info.get("train_seconds", time.perf_counter() - t1)
    group = uuid.uuid4().hex[:16] if len(wanted) > 1 else None
    limit = counted.info.get("memory_limit", options.memory_limit)
    for size, data in zip(wanted, datas):
        recorded = dataclasses.replace(options, vocab_size=size, memory_limit=limit)  # type: ignore[type-var]
        data.run = {
            "config": {
                "algorithm": options.run_name,
                **recorded.to_json(),
                **info.get("extra_config", {}),
                **({"run_sizes": wanted} if len(wanted) > 1 else {}),
            },
            "corpus_fingerprint": counted.corpus["fingerprint"],
            "corpus_files": counted.corpus["files"],
            "corpus_bytes": sum(f["size"] for f in counted.corpus["files"]),
            "tokreg_version": __version__,
            "threads": options.threads or (os.cpu_count() or 1),
            "count_seconds": counted.seconds,
            "train_seconds": train_seconds,
            "total_seconds": time.perf_counter() - t0,
            "started_at": started,
            "run_group": group,
            "counting": {
                **counted.info,
                "distinct_pieces": info.get("distinct_pieces"),
                "vocab_sizes": wanted,
                "reproducible": counted.reproducible,
            },
        }
    return datas


def count_to_file(
    inputs: Sequence[Input],
    options: algorithms.TrainOptions,
    output: PathLike,
    *,
    glob: Optional[str] = None,
    field: Optional[str] = None,
    engine: Optional[str] = None,
    progress: Optional[algorithms.Progress] = None,
) -> dict[str, Any]:
    """Counts a corpus as `options` would train on it and writes every piece (no budget rule:
    that applies when training) to a counts file; returns its summary."""
    counted = count(inputs, options, glob=glob, field=field, engine=engine, progress=progress, keep=False)
    spec = algorithms.trainer_for(options).counting(options)
    counts_file.write(output, counted.counts, spec, counted.corpus)
    return _summary(output, counted.counts, counted.corpus, counted.seconds)


def merge_counts_files(paths: Sequence[PathLike], output: PathLike) -> dict[str, Any]:
    """Sums counts files counted alike (`tokreg count --merge`) into `output`."""
    t0 = time.perf_counter()
    counts, spec, corpus = counts_file.merge(paths)
    counts_file.write(output, counts, spec, corpus)
    return _summary(output, counts, corpus, time.perf_counter() - t0)


def _summary(output: PathLike, counts: Any, corpus: dict[str, Any], seconds: float) -> dict[str, Any]:
    s = counts.stats
    return {
        "output": os.fspath(output),
        "pieces": s["pieces"],
        "total": s["total"],
        "input_bytes": sum(f["size"] for f in corpus["files"]),
        "files": len(corpus["files"]),
        "fingerprint": corpus["fingerprint"],
        "seconds": round(seconds, 3),
    }
