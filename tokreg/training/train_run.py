"""A training run, from a `Corpus` to results ready to record: check the options, count the
corpus (here, on a Dask cluster, or from a counts file), train once for every vocabulary size
asked, and finish each size's data, with its template and the run record the registry stores
with it, into a `FinishedVersion` (content and hashes made once, in `data.finish`).

Several sizes from one run share one `run_group` (a random id) in their run records; each
size's record holds the options with its own `vocab_size` and, as `run_sizes`, all the sizes
of the run, which `reproduce` trains again to get that size (for BPE and WordPiece a size is
the same alone as in a run of several; a Unigram size below the largest is taken from the
pruning rounds of the larger ones, so only the run reproduces it).
"""

from __future__ import annotations

import dataclasses
import gc
import os
import threading
import time
import uuid
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable, Optional, Union

from .. import _core, algorithms
from ..algorithms import template
from ..data import FinishedVersion, TokenizerData, finish
from ..errors import InputError
from . import budget, counting_local, round_trip
from .corpus import Corpus

if TYPE_CHECKING:
    # Imported where used: the encoder only once a version is trained (`tokreg train` imports
    # it on the registry's thread while the core trains, cli/opening.py), the counts file and
    # the languages only by the runs that use them.
    from ..encoding.tokenizer import Tokenizer

PathLike = Union[str, os.PathLike[str]]  # not a string: typing would compile it at import


def sizes_of(options: algorithms.TrainOptions, sizes: Optional[Sequence[int]]) -> list[int]:
    out = sorted({int(s) for s in (sizes or [options.vocab_size])})
    if not out:
        raise InputError("give at least one --vocab-size")
    return out


def count(
    corpus: Corpus,
    options: algorithms.TrainOptions,
    *,
    progress: Optional[algorithms.Progress] = None,
    keep: bool = True,
) -> counting_local.Counted:
    """The counting phase for `options`' algorithm: here, or on the corpus' Dask scheduler."""
    trainer = algorithms.trainer_for(options)
    spec = trainer.counting(options)
    sources = corpus.sources()
    hint = trainer.utf8_hint(options)
    if corpus.engine is not None:
        # Dask is an optional extra: imported only when a run asks for a cluster.
        from . import counting_dask

        counted = counting_dask.count(
            corpus.engine, sources, spec, options, require_utf8=hint is not None, utf8_hint=hint or ""
        )
        return counting_local.apply_budget(counted, options.memory_limit) if keep else counted
    # The text the trained version is measured on (round_trip.py), within the memory budget:
    # plain files are read again after training rather than held in memory beside the trainer.
    keep_text = min(round_trip.KEEP_BYTES, budget.effective(options.memory_limit) // 8) if keep else 0
    files = options.sample_bytes == 0 and all(s.path is not None and s.format == "text" for s in sources)
    counted = counting_local.count_sources(
        sources,
        spec,
        threads=options.threads,
        memory_limit=options.memory_limit,
        sample_bytes=options.sample_bytes,
        require_utf8=hint is not None,
        utf8_hint=hint or "",
        progress=progress,
        keep=keep,
        keep_text=0 if files else keep_text,
    )
    if files and keep_text:
        counted = dataclasses.replace(counted, reread=lambda: round_trip.reread(sources, keep_text))
    return counted


def from_counts(path: PathLike, options: algorithms.TrainOptions) -> counting_local.Counted:
    """The counting phase read from a counts file, checked to be counted as `options` count."""
    from . import counts_file  # on use, as the languages and the encoder (top of the module)

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
    corpus: Corpus,
    options: algorithms.TrainOptions,
    sizes: Optional[Sequence[int]] = None,
    *,
    progress: Optional[algorithms.Progress] = None,
) -> list[FinishedVersion]:
    """Trains one version per size (ascending), each finished with its run record and measured
    on its corpus; nothing is written."""
    return train_unmeasured(corpus, options, sizes, progress=progress).measure()


@dataclasses.dataclass(frozen=True)
class Trained:
    """The versions of one run, trained and finished (content, hashes, run record: what the
    registry records) but not yet measured on their corpus, and how to measure them: the
    measure (round_trip.py) is not recorded, only shown, so `tokreg train` records while it is
    made (`measure_in_background`) instead of after it."""

    versions: tuple[FinishedVersion, ...]
    #: () -> `versions`, each with its `round_trip` (or as it is, where nothing measures it).
    measure: Callable[[], list[FinishedVersion]]

    def measure_in_background(self) -> Measuring:
        """Compiles each version's encoder, then runs `measure`, on a thread (the core lets go
        of the GIL while it compiles and encodes), while the caller records the versions;
        returns what waits for it (`Measuring`)."""
        # Each version's encoder is compiled here, once (tokenizer.py keeps it by hash): the
        # measure and the recorder's sample strings both need it, and on two threads at once
        # both would compile it; the recorder waits for it (`Measuring.compiled`) only when it
        # gets to the samples, after the rows.
        from ..encoding.tokenizer import Tokenizer  # on use (top of the module)

        measuring = Measuring()

        def run() -> None:
            try:
                for v in self.versions:
                    Tokenizer.of_finished(v, ref="trained")
                measuring.encoders.set()
                measuring.out.append(self.measure())
            except BaseException as e:  # handed to the waiting thread, which raises it
                measuring.failed.append(e)
            finally:
                measuring.encoders.set()

        measuring.thread = threading.Thread(target=run, name="tokreg-round-trip", daemon=True)
        measuring.thread.start()
        return measuring


class Measuring:
    """The measure of a run's versions under way on its thread (`Trained.measure_in_background`):
    called, it waits for the measured versions (or raises what the measure raised)."""

    def __init__(self) -> None:
        self.encoders = threading.Event()  # set once the versions' encoders are compiled (or failed)
        self.out: list[list[FinishedVersion]] = []
        self.failed: list[BaseException] = []
        self.thread: Optional[threading.Thread] = None

    def compiled(self) -> None:
        """Waits until every version's encoder is compiled (raises what compiling raised)."""
        self.encoders.wait()
        if self.failed and not self.out:
            raise self.failed[0]

    def __call__(self) -> list[FinishedVersion]:
        assert self.thread is not None
        self.thread.join()
        if self.failed:
            raise self.failed[0]
        return self.out[0]


def train_unmeasured(
    corpus: Corpus,
    options: algorithms.TrainOptions,
    sizes: Optional[Sequence[int]] = None,
    *,
    progress: Optional[algorithms.Progress] = None,
) -> Trained:
    """`train` up to the measure: one finished version per size (ascending), and what measures
    them (`Trained`)."""
    started = datetime.now(timezone.utc)
    t0 = time.perf_counter()
    trainer = algorithms.trainer_for(options)
    wanted = sizes_of(options, sizes)
    algorithms.check_vocab_size(wanted[0])
    options = dataclasses.replace(options, vocab_size=wanted[-1])  # type: ignore[type-var]
    trainer.check(options, wanted)
    plan = trainer.languages(options)
    if plan is not None:
        from . import languages  # on use (top of the module)
    if plan is not None and not corpus.inputs and corpus.counts is None:
        corpus = dataclasses.replace(corpus, inputs=tuple(p for paths in plan.train.values() for p in paths))
    if plan is not None and plan.field is None and corpus.counts is None:
        languages.label(corpus.sources(), plan)  # every input in one language, before reading any
    by_language: Optional[tuple[dict[str, _core.Counts], dict[str, _core.Counts]]] = None
    if corpus.counts is not None:
        if corpus.inputs:
            raise InputError("give either corpus inputs or --from-counts, not both")
        counted = from_counts(corpus.counts, options)
    elif plan is not None:
        if corpus.engine is not None:
            raise InputError(f"--dask does not apply to --algo {options.run_name}: it counts each language here")
        whole, train_counts, dev_counts = languages.count_corpus(corpus, plan, options, progress)
        by_language = (train_counts, dev_counts)
        counted = whole or count(corpus, options, progress=progress)  # --lang-field: the record counted apart
    else:
        counted = count(corpus, options, progress=progress)
    if len(counted.counts) == 0:
        raise InputError(
            f"no piece fits --memory-limit {counted.info.get('memory_limit', 0) >> 20}M for training; raise it"
        )
    t1 = time.perf_counter()
    # What follows the core's work makes the versions' rows (a 32k-token version: 64k objects
    # and as many tuples), none of which can form a cycle: Python's cyclic collector would
    # walk them again and again as they pile up (5-10% of a small corpus' run), for nothing.
    paused = gc.isenabled()
    gc.disable()
    try:
        return _trained(corpus, options, wanted, counted, by_language, trainer, started, t0, t1, progress)
    finally:
        if paused:
            gc.enable()


def _trained(
    corpus: Corpus,
    options: algorithms.TrainOptions,
    wanted: list[int],
    counted: counting_local.Counted,
    by_language: Optional[tuple[dict[str, _core.Counts], dict[str, _core.Counts]]],
    trainer: algorithms.Trainer,
    started: datetime,
    t0: float,
    t1: float,
    progress: Optional[algorithms.Progress],
) -> Trained:
    """`train_unmeasured` from its counts on: train every size and finish each version."""
    if by_language is not None:
        datas, info = trainer.train_languages(*by_language, options, wanted, progress)
    else:
        datas, info = trainer.train_counts(counted.counts, options, wanted, progress)
    parsed = template.parse(options.template)  # once for every size
    train_seconds = info.get("train_seconds", time.perf_counter() - t1)
    group = uuid.uuid4().hex[:16] if len(wanted) > 1 else None
    # Measured on the counted pieces when they stand for the lines (round_trip.py); else on
    # the text kept while counting, read once for every size, and only then.
    by_pieces = trainer.encodes_by_pieces(options) and (counted.text is not None or counted.reread is not None)
    text: list[Optional[tuple[list[bytes], bool]]] = []

    def kept_text() -> Optional[tuple[list[bytes], bool]]:
        if not text:
            text.append(counted.text if counted.reread is None else counted.reread())
        return text[0]

    limit = counted.info.get("memory_limit", options.memory_limit)
    # Here, not at the top: it reads the installed distribution's METADATA (package_version.py),
    # which only a run that gets this far needs.
    from ..package_version import __version__

    finished = []
    for size, data in zip(wanted, datas):
        recorded = dataclasses.replace(options, vocab_size=size, memory_limit=limit)  # type: ignore[type-var]
        run = {
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
        finished.append(_finish(data, parsed, run))
    pieces = counted.counts if by_pieces else None

    def measure() -> list[FinishedVersion]:
        return [_measured(v, pieces, kept_text, options.threads) for v in finished]

    return Trained(tuple(finished), measure)


def _measured(
    version: FinishedVersion,
    pieces: Optional[_core.Counts],
    read_kept: Callable[[], Optional[tuple[list[bytes], bool]]],
    threads: int,
) -> FinishedVersion:
    """`version` with what it loses of the corpus (round_trip.py): measured on the counted
    `pieces` when given and they stand for the lines, else on the text kept (`read_kept`, if any)."""
    from ..encoding.tokenizer import Tokenizer  # on use (top of the module)

    tok: Optional[Tokenizer] = None
    if pieces is not None:
        tok = Tokenizer.of_finished(version, ref="trained")
        measured = round_trip.measure_pieces(tok, pieces, threads=threads)
        if measured is not None:
            return dataclasses.replace(version, round_trip=measured)
    kept = read_kept()
    if kept is None:
        return version
    segments, whole = kept
    tok = tok or Tokenizer.of_finished(version, ref="trained")
    return dataclasses.replace(version, round_trip=round_trip.measure(tok, segments, whole=whole, threads=threads))


def _finish(data: TokenizerData, parsed: Optional[template.Template], run: dict[str, Any]) -> FinishedVersion:
    """A trainer's data finished the same way for every algorithm: the template in its config
    (a config key only when there is one) and the run record; then its content and hashes."""
    config = template.attach(dict(data.config), parsed)
    return finish(dataclasses.replace(data, config=config, run=run))


def count_to_file(
    corpus: Corpus,
    options: algorithms.TrainOptions,
    output: PathLike,
    *,
    progress: Optional[algorithms.Progress] = None,
) -> dict[str, Any]:
    """Counts a corpus as `options` would train on it and writes every piece (no budget rule:
    that applies when training) to a counts file; returns its summary."""
    from . import counts_file  # on use (top of the module)

    counted = count(corpus, options, progress=progress, keep=False)
    spec = algorithms.trainer_for(options).counting(options)
    counts_file.write(output, counted.counts, spec, counted.corpus)
    return _summary(output, counted.counts, counted.corpus, counted.seconds)


def merge_counts_files(paths: Sequence[PathLike], output: PathLike) -> dict[str, Any]:
    """Sums counts files counted alike (`tokreg count --merge`) into `output`."""
    from . import counts_file  # on use (top of the module)

    t0 = time.perf_counter()
    counts, spec, corpus = counts_file.merge(paths)
    counts_file.write(output, counts, spec, corpus)
    return _summary(output, counts, corpus, time.perf_counter() - t0)


def _summary(output: PathLike, counts: Any, corpus: dict[str, Any], seconds: float) -> dict[str, Any]:
    s = counts.stats
    return {
        "output": os.fspath(output),
        "pieces": s.pieces,
        "total": s.total,
        "input_bytes": sum(f["size"] for f in corpus["files"]),
        "files": len(corpus["files"]),
        "fingerprint": corpus["fingerprint"],
        "seconds": round(seconds, 3),
    }
