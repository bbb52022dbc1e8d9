"""`Registry`: the library's front door. Every CLI command is one call on it.

>>> reg = Registry()                       # TOKREG_DB or the default SQLite file
>>> v = reg.train("gpt-mini", ["corpus/"], BpeOptions(vocab_size=32000))
>>> v.ref, v.content_hash
('gpt-mini@1', 'xxh3-128:9f2c…')
>>> reg.load("gpt-mini").encode("hello")

A REF is a string (`name`, `name@N`, `name@ALIAS`, a hash prefix) or a `VersionInfo` this
registry returned, which is taken as already resolved: a caller that uses one version in
several calls resolves it once (`resolve`) and hands the value on.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import os
from collections.abc import Iterator, Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable, Optional, Union

from sqlalchemy import Connection, Engine
from sqlalchemy.engine import make_url

from . import algorithms
from .content import check_header
from .data import (
    AliasMove,
    FinishedVersion,
    LineageEntry,
    LogEntry,
    Recorded,
    RoundRow,
    StoredEvaluation,
    StoredVersion,
    TokenizerData,
    TokenRow,
    VersionInfo,
    finish,
)
from .encoding import content_cache
from .encoding.tokenizer import Tokenizer
from .errors import InputError, IntegrityError, Interrupted, TokregError
from .files import write_atomic
from .store import aliases, by_hash, engine, lineage, migrate, probe, reads, refs, writable, writer
from .store import datasets as dataset_rows
from .store.names import check_name
from .store.readonly_sql import DEFAULT_TIMEOUT, Rows, grant_read, query_rows
from .training import train_run
from .training.corpus import Corpus
from .training.corpus.sources import Input
from .versions import import_export, lockfile, samples
from .versions.samples import SAMPLES, Sample, encode_all

# What only some methods need is imported in them (`evaluate`, `audit`, `diff`, `show`, `verify`,
# `extend`, `reproduce`…): a fresh `tokreg train` process pays for every import.
if TYPE_CHECKING:
    from .evaluation.audit import AuditReport
    from .evaluation.evaluate import Evaluation
    from .evaluation.residues import ResidueReport
    from .training.reproduce import Reproduction
    from .versions.ancestry import TokenInfo
    from .versions.copy import Copied
    from .versions.details import VersionDetails
    from .versions.diff import VersionDiff
    from .versions.verify import Verification

PathLike = Union[str, os.PathLike[str]]  # not a string: typing would compile it at import
#: A ref as the methods take it: a string to resolve, or a version already resolved here.
Ref = Union[str, VersionInfo]


class Registry:
    """A tokenizer registry in a SQLite file or a PostgreSQL database.

    Opening one never creates it: reads of a location where no registry is raise
    NotFoundError saying so, and the first write (train, add, import_*) creates it
    (`created` is then True). `create=True` creates it at once. An existing registry of an
    older schema is upgraded on open. `read_only=True`: see `Registry.read_only`.

    Pins: inside a project whose `tokreg.lock` pins `name` (versions/lockfile.py), a bare
    `name` means the version here holding the pinned hash (the hash is the pin; a `name@N` that
    differs from the recorded one is a `PinLabelWarning`), in every method that takes a REF:
    `resolve`, `load`, `stored`, `show`, `history`, `samples`, `tokens`, `token`, `lineage`,
    `evaluations`, `diff`, `verify`, `export`, `reproduce`, `evaluate`, `audit`, `tag`,
    `remove`, and the base of `extend`, `add_tokens` and `drop_residues`. The one exception is `pin` itself,
    which writes the pin: a bare name pins the latest version, so re-pinning moves it.
    `name@N`, aliases and hash prefixes are never affected. `lock` says
    which lockfile: None (the default) finds the project's (or `TOKREG_LOCK`) once per call,
    False applies none, a `lockfile.Lock` is used as it is."""

    def __init__(
        self,
        db: Optional[PathLike] = None,
        *,
        create: bool = False,
        read_only: bool = False,
        lock: lockfile.LockArg = None,
    ):
        self._where = engine.locate(db)
        self._lock = lock
        self.url = self._where.url
        #: Whether this object created the registry (its first write found nothing there).
        self.created = False
        #: What to say if the caller is interrupted: set around each write (see `interruption`).
        self._pending: Optional[Callable[[], Interrupted]] = None
        if read_only:
            from .store.readonly_engine import open_read_only

            self.engine: Engine = open_read_only(self.url)
            self._exists = True
            return
        self.engine = engine.create(self._where)
        self._exists = self._open()
        if create:
            self._ensure()

    @classmethod
    def read_only(cls, db: Optional[PathLike] = None, *, lock: lockfile.LockArg = False) -> Registry:
        """The registry opened for reading only (as `tokreg serve` opens it): SQLite through a
        read-only URI, PostgreSQL in read-only transactions. It is never created or upgraded;
        every writing method fails on it. It applies no lockfile unless given `lock`: a server
        names the versions each request names, wherever it was started."""
        return cls(db, read_only=True, lock=lock)

    def __repr__(self) -> str:
        return f"<Registry {self.location}>"

    @property
    def location(self) -> str:
        """The registry's URL, with any password hidden."""
        return make_url(self.url).render_as_string(hide_password=True)

    @property
    def where(self) -> str:
        """The registry's file, or its URL with any password hidden: what messages name."""
        return self._where.shown

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> Registry:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- opening, creating, checking --------------------------------------------------------------

    def _open(self) -> bool:
        """Whether a registry is there; upgrades an older schema (which needs it writable)."""
        found = probe.probe(self.engine, self._where)
        if not found.exists:
            return False
        if found.revision not in migrate.KNOWN:
            raise TokregError(
                f"the registry at {self.where} has schema revision {found.revision!r}, which this tokreg "
                f"(newest {migrate.HEAD}) does not know: it was made by a newer tokreg; upgrade tokreg"
            )
        if found.revision != migrate.HEAD:
            try:
                writable.check_writable(self.engine, self._where, True)
            except TokregError as e:
                raise type(e)(
                    f"the registry at {self.where} needs a schema upgrade ({found.revision} -> {migrate.HEAD}), "
                    f"but: {e}"
                ) from None
            with engine.database_errors(self._where):
                engine.use_wal(self.engine)
                migrate.upgrade(self.engine)
        return True

    def _ensure(self) -> None:
        """Creates the registry when there is none yet (after checking it can be written)."""
        if self._exists or probe.probe(self.engine, self._where).exists:
            self._exists = True
            return
        writable.check_writable(self.engine, self._where, False)
        writable.prepare_folder(self._where)
        with engine.database_errors(self._where):
            engine.use_wal(self.engine)
            started = migrate.upgrade(self.engine)
        self.created = started is None
        self._exists = True

    def check_writable(self) -> None:
        """Raises ReadOnlyError, saying why in one line, unless a version could be written here
        now (or, when there is no registry yet, created): file and folder permissions, read-only
        media, a read-only PostgreSQL role or server. Creates nothing."""
        if not self._exists:
            self._exists = probe.probe(self.engine, self._where).exists
        writable.check_writable(self.engine, self._where, self._exists)

    @contextlib.contextmanager
    def _reading(self) -> Iterator[Connection]:
        if not self._exists and not probe.probe(self.engine, self._where).exists:
            raise probe.no_registry(self._where)
        self._exists = True
        with engine.database_errors(self._where), self.engine.connect() as conn:
            yield conn

    @contextlib.contextmanager
    def _writing(self) -> Iterator[Connection]:
        self._ensure()
        with engine.database_errors(self._where), engine.write_transaction(self.engine) as conn:
            yield conn

    def _versions(self, conn: Connection, refs_: Sequence[Ref], lock: lockfile.LockArg = None) -> list[VersionInfo]:
        """The versions `refs_` name, each resolved once: the one way a method that reads
        versions turns its REF arguments into them. Pins apply (the lockfile read once, here,
        for all of them, and only when a string needs it); a `VersionInfo` is taken as it is."""
        if all(isinstance(r, VersionInfo) for r in refs_):
            return [r for r in refs_ if isinstance(r, VersionInfo)]
        found = lockfile.lock_of(self._lock if lock is None else lock)
        return [r if isinstance(r, VersionInfo) else lockfile.resolve(conn, r, found, where=self.where) for r in refs_]

    def _version(self, conn: Connection, ref: Ref, lock: lockfile.LockArg = None) -> VersionInfo:
        return self._versions(conn, [ref], lock)[0]

    def interruption(self) -> Interrupted:
        """The one true line for a Ctrl-C that stopped whoever used this registry: which write, if
        any, was completed, asked of the database. Nothing attempted: nothing was written."""
        said = (
            Interrupted("interrupted; nothing was written to the registry")
            if self._pending is None
            else self._pending()
        )
        if self.created:
            return Interrupted(f"{said} (a new registry was created at {self.where})")
        return said

    def _journal(self, what: Callable[[], Interrupted]) -> None:
        self._pending = what

    # -- writing ------------------------------------------------------------------------------

    def train(
        self,
        name: str,
        inputs: Sequence[Input],
        options: algorithms.TrainOptions,
        *,
        message: Optional[str] = None,
        progress: Optional[algorithms.Progress] = None,
        glob: Optional[str] = None,
        field: Optional[str] = None,
        counts: Optional[PathLike] = None,
        engine: Optional[str] = None,
    ) -> VersionInfo:
        """Trains on `inputs` (files, folders, `-`, iterables of str; see tokreg/corpus) with the
        algorithm of `options` (BpeOptions, WordPieceOptions, UnigramOptions) and records the
        result as the next version of `name`. `counts` trains from a counts file instead;
        `engine` counts on a Dask scheduler (an address such as tcp://host:8786)."""
        corpus = Corpus.of(inputs, glob=glob, field=field, counts=counts, engine=engine)
        return self.train_corpus(name, corpus, options, None, message=message, progress=progress)[-1].info

    def train_sizes(
        self,
        name: str,
        inputs: Sequence[Input],
        options: algorithms.TrainOptions,
        sizes: Optional[Sequence[int]],
        *,
        message: Optional[str] = None,
        progress: Optional[algorithms.Progress] = None,
        glob: Optional[str] = None,
        field: Optional[str] = None,
        counts: Optional[PathLike] = None,
        engine: Optional[str] = None,
    ) -> list[VersionInfo]:
        """Like `train`, for several vocabulary sizes from one run (`options.vocab_size` when
        `sizes` is None): one version per size, smallest first, linked as one run, written in
        one transaction. A size the corpus cannot reach gives the same content as the largest
        reachable one, and is recorded once. Whether the registry can be written is checked
        before the training starts."""
        corpus = Corpus.of(inputs, glob=glob, field=field, counts=counts, engine=engine)
        return [r.info for r in self.train_corpus(name, corpus, options, sizes, message=message, progress=progress)]

    def train_corpus(
        self,
        name: str,
        corpus: Corpus,
        options: algorithms.TrainOptions,
        sizes: Optional[Sequence[int]] = None,
        *,
        message: Optional[str] = None,
        progress: Optional[algorithms.Progress] = None,
    ) -> list[Recorded]:
        """`train_sizes` for a `Corpus` made by the caller, returning each version written with
        what was trained (its data, content and hashes, run record), so a caller shows it
        without reading it back; `.version.round_trip` says what it loses of its own corpus
        (training/round_trip.py)."""
        check_name(name)
        self.check_writable()
        try:
            unmeasured = train_run.train_unmeasured(corpus, options, sizes, progress=progress)
        except (KeyboardInterrupt, Interrupted):
            raise Interrupted("training interrupted; nothing was written to the registry") from None
        # As `tokreg train` does: each version's measure on its corpus is made on a thread while
        # its rows are written; the write waits for it before it commits (what it raises rolls
        # the write back), and the samples wait for the encoders it compiles.
        measured = unmeasured.measure_in_background()
        measured.compiled()
        recorded = self.record_trained(name, unmeasured.versions, message=message, ready=measured)
        by_hash = {v.content_hash: v for v in measured()}
        return [dataclasses.replace(r, version=by_hash[r.version.content_hash]) for r in recorded]

    def record_trained(
        self,
        name: str,
        trained: Sequence[FinishedVersion],
        *,
        message: Optional[str] = None,
        ready: Optional[Callable[[], object]] = None,
    ) -> list[Recorded]:
        """Records the versions of one training run (`training.train_run.train`, several sizes
        smallest first) as the next versions of `name`, all or none, a size that gave the same
        content as a smaller one once: the second half of `train_corpus`, for a caller that
        trained while this registry was being opened (`tokreg train`). `ready` is called after
        the rows are written and before they are committed (what it raises rolls them back):
        `tokreg train` waits there for the measure of the versions made meanwhile."""
        check_name(name)
        seen: set[str] = set()
        unique = []
        for v in trained:
            if v.content_hash not in seen:
                seen.add(v.content_hash)
                unique.append(v)
        return self._record(name, unique, message, ready)

    def add(self, name: str, data: TokenizerData, *, message: Optional[str] = None) -> VersionInfo:
        """Records an already trained or imported tokenizer as the next version of `name`. It is
        compiled first (a version that cannot encode is never written) and its sample strings
        are encoded and stored with it, for `verify`."""
        check_name(name)
        return self._record(name, [finish(data)], message)[0].info

    def _record(
        self,
        name: str,
        versions: Sequence[FinishedVersion],
        message: Optional[str],
        ready: Optional[Callable[[], object]] = None,
    ) -> list[Recorded]:
        """Writes `versions` as the next versions of `name`, all or none. Each is compiled and
        its sample strings encoded first: a version that cannot encode is never written."""
        created_at = datetime.now(timezone.utc)
        try:
            last = versions[-1].content_hash
            self._journal(lambda: writer.interrupted(self.engine, name, last, created_at))
            items = [(v, list(zip(SAMPLES, encode_all(Tokenizer.of_finished(v, ref=name))))) for v in versions]
            self._ensure()
            with engine.database_errors(self._where):
                infos = writer.record_all(self.engine, name, items, message=message, created_at=created_at, ready=ready)
        except KeyboardInterrupt:
            raise self.interruption() from None
        return [Recorded(info, v) for info, v in zip(infos, versions)]

    def extend(
        self,
        base: Ref,
        name: str,
        inputs: Sequence[Input],
        add: int,
        *,
        renumber_specials: bool = False,
        keep_text: Optional[PathLike] = None,
        check_text: Optional[PathLike] = None,
        threads: int = 0,
        memory_limit: Optional[int] = None,
        glob: Optional[str] = None,
        field: Optional[str] = None,
        message: Optional[str] = None,
        progress: Optional[algorithms.Progress] = None,
        objective: Optional[str] = None,
    ) -> VersionInfo:
        """Continues training `base` on `inputs` and records `base` + `add` new tokens as the
        next version of `name` (tokreg/training/extend.py): every id of the base is kept, new tokens
        follow the base's highest id. `keep_text`: a text whose encoding must not change (no
        token that would change it is learned); `check_text`: a text whose changed lines are
        counted. Both are recorded with the version's lineage. `objective` (WordPiece): what
        ranks the new merges; None: the base's own (`extend.base_objective` has the rule)."""
        stored = self._derivable(base, name)
        from .training import extend as extending  # on use: see the note at the top-level imports

        if objective is None:
            with self._reading() as conn:
                objective = extending.base_objective(
                    stored.info, reads.training_run(conn, stored.info), lineage.of(conn, stored.info)
                )
        try:
            extended = extending.extend(
                stored,
                Corpus.of(inputs, glob=glob, field=field),
                add,
                objective=objective,
                renumber_specials=renumber_specials,
                keep_text=keep_text,
                check_text=check_text,
                threads=threads,
                memory_limit=memory_limit,
                progress=progress,
            )
        except (KeyboardInterrupt, Interrupted):
            raise Interrupted("extension interrupted; nothing was written to the registry") from None
        return self._record(name, [extended], message or f"extended {stored.info.ref} with {add:,} tokens")[0].info

    def add_tokens(
        self,
        base: Ref,
        name: str,
        tokens: Sequence[str],
        *,
        special: bool = False,
        check_text: Optional[PathLike] = None,
        message: Optional[str] = None,
    ) -> VersionInfo:
        """Records `base` + `tokens` (special tokens with `special`, else ordinary tokens of
        the algorithm) as the next version of `name`, the new ids after the base's."""
        stored = self._derivable(base, name)
        from .training import extend as extending  # on use: see the note at the top-level imports

        added = extending.add_tokens(stored, tokens, special=special, check_text=check_text)
        kind = ("special token" if special else "token") + ("s" if len(tokens) > 1 else "")
        return self._record(name, [added], message or f"added {len(tokens)} {kind} to {stored.info.ref}")[0].info

    def drop_residues(
        self,
        base: Ref,
        name: str,
        text: PathLike,
        *,
        below: Optional[float] = None,
        min_seen: Optional[int] = None,
        budget: Optional[float] = None,
        budget_version: str = "all",
        fewer: Optional[float] = None,
        folds: str = "trained",
        refill: float = 0.0,
        rejudge: int = 0,
        threads: int = 0,
        message: Optional[str] = None,
    ) -> VersionInfo:
        """Records `base` (byte-level BPE) without the residues measured on `text` as the next
        version of `name` (versions/no_residues.py): each residue (LiteToken, arXiv
        2602.04706; `residues` has the measure) is split into its parents where it would be
        emitted (PickyBPE's removal, arXiv 2409.04599); every other id is kept, the removed
        ones are holes.

        With `budget` (a share of tokens per byte, 0.008 for 0.8%), `text` is BASE's training
        text and the version is BPE N + k trained on it less k tokens, k the largest within the
        budget on a check part of `text` (versions/residue_budget.py); `budget_version` "checked":
        the fit part's version whose cost was checked instead (BASE's ids not kept). With `fewer`
        as well (5.0: five times fewer), the folds rule: k the smallest with that many times fewer
        residues within `budget` on every fold of `text` (each quarter judged on the rest); `folds`
        "unseen": each fold measured by a BPE trained without it, k midway between the fewest
        meeting the goal and the most within `budget`, both on average over the folds; `refill`
        R (with "unseen"): round(R k) of the freed slots learned again after the removals
        (residue_budget.refilled_version), every k measured so; `rejudge` ROUNDS (with `refill`):
        the refill's own residues judged on the text's parts, their tokens refused and the refill
        learned again, up to that many rounds (residue_budget.refused_refill)."""
        stored = self._derivable(base, name)
        from .evaluation import evaluate, residues  # on use: see the note at the top-level imports
        from .versions import no_residues, residue_budget

        if fewer is not None and budget is None:
            raise InputError("--fewer needs --budget (the cost allowed on each fold, e.g. 1%)")
        if folds != "trained" and fewer is None:
            raise InputError("--folds is for the folds rule: give --budget PCT --fewer X with it")
        if refill and folds != "unseen":
            raise InputError("--refill is measured on unseen folds: give --budget PCT --fewer X --folds unseen with it")
        if not 0 <= refill <= 1:
            raise InputError(f"--refill is a share of k from 0 (off) to 1, not {refill:g}")
        if rejudge and not refill:
            raise InputError("--rejudge judges the refill's own residues: give --refill R with it")
        if not 0 <= rejudge <= residue_budget.MAX_REJUDGE:
            raise InputError(
                f"--rejudge is a number of rounds from 0 (off) to {residue_budget.MAX_REJUDGE}, not {rejudge}"
            )
        if budget is not None:
            derived = residue_budget.drop_with_budget(
                stored,
                os.fspath(text),
                margin=budget,
                below=residues.BELOW if below is None else below,
                min_seen=residues.MIN_SEEN if min_seen is None else min_seen,
                threads=threads,
                version=budget_version,
                fewer=fewer,
                folds=folds,
                refill=refill,
                rejudge=rejudge,
            )
            k = derived.data.lineage["details"]["removed"] if derived.data.lineage else 0
            note = f"BPE +{k:,} less {k:,} residues of {stored.info.ref}, k within {100 * budget:g}% on a check part"
            if fewer is not None:
                met = derived.data.lineage["details"]["budget"]["goal_met"] if derived.data.lineage else False
                note = (
                    f"BPE +{k:,} less {k:,} residues of {stored.info.ref}, k by folds: "
                    + (f"{fewer:g}x fewer" if met else f"{fewer:g}x fewer NOT reached")
                    + (
                        f" within {100 * budget:g}% on average over unseen folds"
                        if folds == "unseen"
                        else f" within {100 * budget:g}% on every fold"
                    )
                )
            return self._record(name, [derived], message or note)[0].info
        (loaded,) = evaluate.read_texts([text])
        derived = no_residues.drop_residues(
            stored,
            loaded,
            below=residues.BELOW if below is None else below,
            min_seen=residues.MIN_SEEN if min_seen is None else min_seen,
        )
        n = derived.data.lineage["details"]["removed"] if derived.data.lineage else 0
        return self._record(name, [derived], message or f"dropped {n:,} residues of {stored.info.ref}")[0].info

    def _derivable(self, base: Ref, name: str) -> StoredVersion:
        """The base version (pins apply), read and hash-checked, once `name` is known to be free
        for it and the registry writable: checked before any work."""
        check_name(name)
        self.check_writable()
        with self._reading() as conn:
            stored = reads.read_version(conn, self._version(conn, base))
            lineage.check_derived_name(conn, name, stored.info)
        return stored

    def lineage(self, ref: Ref) -> list[LineageEntry]:
        """`ref` and its ancestors, nearest first: each with its derivation (trained, imported,
        reimported, extended, added_tokens), parent and recorded details."""
        with self._reading() as conn:
            return lineage.chain(conn, self._version(conn, ref))

    def import_tiktoken(
        self,
        name: str,
        path: PathLike,
        *,
        pattern: Optional[str] = None,
        specials: Optional[dict[str, int]] = None,
        preset: Optional[str] = None,
        expect_sha256: Optional[str] = None,
        message: Optional[str] = None,
    ) -> VersionInfo:
        """Registers a `.tiktoken` rank file (plain or gzip/xz/zstd) as the next version of
        `name`. The file holds ranks only: `preset` ("cl100k_base", "o200k_base", "p50k_base",
        "p50k_edit", "r50k_base", "gpt2", "llama3") gives the pattern and the special tokens at
        their official ids, and is refused on another encoding's file; `pattern` replaces its
        pattern, and `specials` ({token: id}) add to it or replace its token of that name or id."""
        check_name(name)
        self.check_writable()
        data = import_export.read_tiktoken(
            path, pattern=pattern, specials=specials, preset=preset, expect_sha256=expect_sha256
        )
        return self.add(name, data, message=message or _imported(path))

    def import_hf(self, name: str, path: PathLike, *, message: Optional[str] = None) -> VersionInfo:
        """Registers a Hugging Face `tokenizer.json` (BPE, WordPiece, Unigram), or the one in the
        directory `path`, as the next version of `name`, with the transformers settings of the
        tokenizer_config.json / special_tokens_map.json beside it (a `NotCarried` warning names
        what it does not carry)."""
        check_name(name)
        self.check_writable()
        return self.add(name, import_export.read_hf(path), message=message or _imported(path))

    def import_tekken(self, name: str, path: PathLike, *, message: Optional[str] = None) -> VersionInfo:
        """Registers a Mistral `tekken.json` as the next version of `name`."""
        check_name(name)
        self.check_writable()
        return self.add(name, import_export.read_tekken(path), message=message or _imported(path))

    def import_tokreg(self, name: str, path: PathLike, *, message: Optional[str] = None) -> VersionInfo:
        """Registers a file written by `tokreg export --format tokreg` (its hash checked) as the
        next version of `name`; the version has the file's hash."""
        check_name(name)
        self.check_writable()
        return self.add(name, import_export.read_tokreg(path), message=message or _imported(path))

    def import_wordpiece(
        self,
        name: str,
        path: PathLike,
        options: algorithms.WordPieceOptions,
        *,
        specials: Sequence[str] = (),
        message: Optional[str] = None,
    ) -> VersionInfo:
        """Registers a bare WordPiece `vocab.txt` with the normalizer settings in `options`."""
        check_name(name)
        self.check_writable()
        data = import_export.read_wordpiece_vocab(path, options, specials)
        return self.add(name, data, message=message or _imported(path))

    def import_sentencepiece(
        self, name: str, path: PathLike, *, bos: bool = False, eos: bool = False, message: Optional[str] = None
    ) -> VersionInfo:
        """Registers a SentencePiece `.model` file (Unigram or BPE, identity normalization) as the
        next version of `name`; it encodes with the same ids as the `sentencepiece` library.
        `bos`/`eos`: `encode(..., add_special_tokens=True)` adds the model's BOS/EOS piece, as
        sentencepiece's `encode(..., add_bos=True, add_eos=True)` does."""
        check_name(name)
        self.check_writable()
        data = import_export.read_sentencepiece(path, bos=bos, eos=eos)
        return self.add(name, data, message=message or _imported(path))

    # -- reading ------------------------------------------------------------------------------

    def resolve(self, ref: Ref, *, lock: lockfile.LockArg = None) -> VersionInfo:
        """The version `ref` names, pins applied (a bare pinned name is the pinned version, its
        hash checked): the value to hand to several calls that use one version. `lock`: the
        lockfile for this call instead of the registry's (False: none)."""
        with self._reading() as conn:
            return self._version(conn, ref, lock)

    def versions(self, name: Optional[str] = None) -> list[VersionInfo]:
        """Every version (of `name`, or of all names), by name then number."""
        with self._reading() as conn:
            if name is not None:
                refs.resolve(conn, name)  # a clear error for an unknown name
            return refs.all_versions(conn, name)

    def stored(self, ref: Ref) -> StoredVersion:
        """A version's rows and canonical content, checked against its recorded hash."""
        with self._reading() as conn:
            return reads.read_version(conn, self._version(conn, ref))

    def load(self, ref: Ref, *, lock: lockfile.LockArg = None) -> Tokenizer:
        """The version `ref` names, ready to encode. A bare name pinned in the project's
        tokreg.lock (or in `lock`, for this call) is the pinned version. Its content comes from
        the on-disk cache when a verified copy is there, else from the content stored with the
        version (one value, no row is read); either way it must hash to the recorded (and
        pinned) hash, and the version row's algorithm and config must be the hashed ones."""
        with self._reading() as conn:
            v = self._version(conn, ref, lock)
            raw = content_cache.get(v.content_hash)
            if raw is None:
                raw = reads.read_version(conn, v, rows=False).content
                content_cache.put(v.content_hash, raw)
        check_header(raw, v.algorithm, v.config, v.content_hash, v.ref)
        return Tokenizer(raw, ref=v.ref, expect_hash=v.content_hash, _cache=True)

    def show(self, ref: Ref, *, merges: int = 10) -> VersionDetails:
        """A version's metadata, training run, token counts by kind, whether it is lossless, its
        lineage (it and its ancestors, nearest first) and the versions derived from it, and its
        first merges (or, for scored vocabularies, its highest-scored pieces)."""
        with self._reading() as conn:
            from .versions import details  # on use: see the note at the top-level imports

            return details.details(conn, self._version(conn, ref), merges=merges)

    def history(self, ref: Ref) -> list[RoundRow]:
        """The recorded rounds of an iterative training run (Unigram: vocab size and
        log-likelihood after each EM / prune round), oldest first."""
        with self._reading() as conn:
            return reads.rounds(conn, self._version(conn, ref))

    def samples(self, ref: Ref) -> list[Sample]:
        """The sample strings stored with a version, the ids they encoded to then, and the bytes
        of those tokens as stored (read from the rows: nothing is compiled)."""
        with self._reading() as conn:
            return samples.stored(conn, self._version(conn, ref))

    # -- token datasets (tokreg/datasets/) -------------------------------------------------------

    def record_dataset(self, manifest: dict[str, Any], folder: str) -> tuple[int, bool]:
        """Records a complete dataset (its manifest, at `folder`) and its shards: (row id, whether
        it was new). The same dataset at the same folder again changes nothing."""
        with self._writing() as conn:
            return dataset_rows.record(conn, manifest, folder)

    def datasets(self, tokenizer_hash: Optional[str] = None) -> list[dict[str, Any]]:
        """The recorded datasets (of one tokenizer hash prefix), oldest first."""
        with self._reading() as conn:
            return dataset_rows.listing(conn, tokenizer_hash)

    def find_datasets(self, key: str) -> list[dict[str, Any]]:
        """The recorded datasets whose hash starts with `key` or whose folder is `key`, with manifests."""
        with self._reading() as conn:
            return dataset_rows.find(conn, key)

    def aliases_by_ref(self) -> dict[str, list[str]]:
        """`name@N` -> the aliases pointing at it, for every version that has one."""
        with self._reading() as conn:
            by_id = reads.aliases_by_version(conn)
            return {v.ref: by_id[v.id] for v in refs.all_versions(conn) if v.id in by_id}

    def tokens(
        self,
        ref: Ref,
        *,
        contains: Optional[str] = None,
        kind: Optional[str] = None,
        order: str = "id",
        offset: int = 0,
        limit: int = 100,
    ) -> tuple[int, list[TokenRow]]:
        """(how many tokens match, a page of them): the tokens of `ref` whose text contains
        `contains` (or whose id it is), of `kind`, ordered by `order` (id, count, score, length)."""
        if order not in reads.TOKEN_ORDERS:
            raise InputError(f"cannot order tokens by {order!r}; use one of {', '.join(reads.TOKEN_ORDERS)}")
        if offset < 0 or not 1 <= limit <= 10_000:
            raise InputError(f"a page of tokens needs offset >= 0 and 1 <= limit <= 10000, not {offset}, {limit}")
        with self._reading() as conn:
            v = self._version(conn, ref)
            return reads.token_page(conn, v, contains=contains, kind=kind, order=order, offset=offset, limit=limit)

    def token(self, ref: Ref, token_id: int) -> TokenInfo:
        """One token of `ref`: its row, its merge ancestry down to base tokens (versions/ancestry.py), and
        every version (this one included) holding a token with the same bytes."""
        with self._reading() as conn:
            from .versions import ancestry  # on use: see the note at the top-level imports

            return ancestry.token_info(conn, self._version(conn, ref), token_id)

    def sql(
        self, query: str, *, timeout: Optional[float] = DEFAULT_TIMEOUT, limit: Optional[int] = None
    ) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Runs one read-only statement; returns (column names, rows), at most `limit` rows.
        `timeout`: seconds of database time before it is stopped (None: no limit)."""
        with self.sql_rows(query, timeout=timeout) as rows:
            return rows.columns, list(itertools.islice(rows, limit))

    @contextlib.contextmanager
    def sql_rows(self, query: str, *, timeout: Optional[float] = DEFAULT_TIMEOUT) -> Iterator[Rows]:
        """`sql`, streamed: the open result (its `columns`, and its rows as an iterator fetched a
        batch at a time), so any number of rows takes bounded memory."""
        if not self._exists and not probe.probe(self.engine, self._where).exists:
            raise probe.no_registry(self._where)
        self._exists = True
        with engine.database_errors(self._where), query_rows(self.engine, query, timeout=timeout) as rows:
            yield rows

    # -- versions: aliases, diff, pin, verify, export, reproduce ---------------------------------

    def tag(self, ref: Ref, alias: str) -> AliasMove:
        """Points `name@alias` at the version `ref` names (history kept in `tokreg log`)."""
        v = self.resolve(ref)
        self._journal(
            lambda: self._asked(
                lambda c: refs.alias_target(c, v.name, alias) == v.id,
                f"{v.name}@{alias} was pointed at {v.ref}",
                f"{v.name}@{alias} was not changed",
            )
        )
        with self._writing() as conn:
            return aliases.tag(conn, v, alias)

    def untag(self, name: str, alias: str) -> int:
        """Deletes `name@alias`; returns the version number it pointed at."""
        bare = name.partition("@")[0]
        self._journal(
            lambda: self._asked(
                lambda c: refs.alias_target(c, bare, alias) is None,
                f"{bare}@{alias} was deleted",
                f"{bare}@{alias} was not deleted",
            )
        )
        with self._writing() as conn:
            return aliases.untag(conn, name, alias)

    def aliases(self, name: str) -> dict[str, int]:
        """alias -> version number, for every alias of `name`."""
        with self._reading() as conn:
            return refs.aliases_of(conn, name)

    def log(self, name: str) -> list[LogEntry]:
        """Versions created (each with its lineage: derivation and parent) and alias moves of
        `name`, oldest first."""
        with self._reading() as conn:
            return aliases.log(conn, name)

    def remove(self, ref: Ref) -> VersionInfo:
        """Deletes a version no alias points at (its tokens, merges, run and samples too)."""
        v = self.resolve(ref)
        self._journal(
            lambda: self._asked(
                lambda c: refs.by_id(c, v.id) is None, f"{v.ref} was removed", f"{v.ref} was not removed"
            )
        )
        with self._writing() as conn:
            return aliases.remove(conn, v)

    def _asked(self, done: Callable[[Connection], bool], did: str, did_not: str) -> Interrupted:
        """The interruption line for a small write, asked of the database on a new connection."""
        probe = engine.fresh(self.engine)
        try:
            with probe.connect() as conn:
                happened = done(conn)
        except Exception:  # the registry cannot be asked right now; say what is certain
            return Interrupted(f"interrupted; either {did} or {did_not} (a write is all-or-nothing)")
        finally:
            probe.dispose()
        return Interrupted(f"interrupted after {did}" if happened else f"interrupted; {did_not}, nothing was written")

    def diff(self, a: Ref, b: Ref, *, texts: Optional[Sequence[PathLike]] = None, top: int = 10) -> VersionDiff:
        """How version `b` differs from `a`; with `texts`, the effect on those files: the
        metrics of `evaluate` for both, and B - A."""
        from .evaluation import evaluate  # on use: see the note at the top-level imports
        from .versions import diff  # on use: see the note at the top-level imports

        loaded = evaluate.read_texts(texts) if texts else []
        with self._reading() as conn:
            va, vb = self._versions(conn, [a, b])
            sa, sb = reads.read_version(conn, va), reads.read_version(conn, vb)
        return diff.diff_stored(sa, sb, loaded, top=top)

    # -- evaluating -----------------------------------------------------------------------------

    def evaluate(
        self,
        refs: Union[Ref, Sequence[Ref]],
        texts: Union[PathLike, Sequence[PathLike]],
        *,
        languages: Optional[Sequence[Optional[str]]] = None,
        parallel: bool = False,
        reference: Optional[str] = None,
        recompute: bool = False,
    ) -> Evaluation:
        """Measures each version of `refs` on each file of `texts` (compression, fertility,
        Rényi efficiency, vocabulary use, unknown rate: tokreg/evaluation/metrics.py) and stores the
        results beside the versions. A version already measured on the same text is read from
        the registry instead, unless `recompute`. `languages` labels the texts (one code per
        text); with `parallel` the texts hold the same content in different languages, and
        each version gets its premium per language relative to `reference` (default: the
        first text's language) and their spread. Bad input raises before anything is stored."""
        from .evaluation import evaluate  # on use: see the note at the top-level imports

        refs = [refs] if isinstance(refs, (str, VersionInfo)) else list(refs)  # one ref or one path alone is fine too
        texts = [texts] if isinstance(texts, (str, os.PathLike)) else list(texts)
        if not refs:
            raise InputError("no versions to evaluate; name at least one ref, e.g. ['gpt-mini@1', 'gpt-mini@2']")
        if reference is not None and not parallel:
            raise InputError("--reference names the reference language of --parallel texts; add --parallel")
        with self._reading() as conn:
            versions = list({v.id: v for v in self._versions(conn, refs)}.values())
        loaded = evaluate.read_texts(texts, languages)
        ref_lang = evaluate.check_parallel(loaded, reference) if parallel else None
        return evaluate.run(
            self.engine,
            versions,
            loaded,
            load=self.load,
            reference=ref_lang,
            recompute=recompute,
        )

    def evaluations(self, ref: Ref) -> list[StoredEvaluation]:
        """Every stored evaluation of a version, one per text it was measured on (see `evaluate`)."""
        from .store import evaluations  # on use: see the note at the top-level imports

        with self._reading() as conn:
            return evaluations.of_version(conn, self._version(conn, ref).id)

    def audit(self, ref: Ref, *, rare_below: Optional[int] = None, recompute: bool = False) -> AuditReport:
        """Every token of a version with its category (reachable, reachable in context,
        unreachable, undecodable, special: tokreg/evaluation/audit.py) and, for a trained version, whether
        it is under-trained (used or merged fewer than `rare_below` times in training; None:
        `audit.RARE_BELOW`). Stored beside the version; read back unless `recompute` or another
        `rare_below` is asked for."""
        from .evaluation import audit  # on use: see the note at the top-level imports

        rare_below = audit.RARE_BELOW if rare_below is None else rare_below

        audit.check_rare(rare_below)
        v = self.resolve(ref)
        return audit.run(
            self.engine,
            v,
            lambda: self.stored(v),
            lambda: self.load(v),
            rare_below=rare_below,
            recompute=recompute,
        )

    def residues(
        self,
        ref: Ref,
        text: PathLike,
        *,
        below: Optional[float] = None,
        min_seen: Optional[int] = None,
        recompute: bool = False,
    ) -> ResidueReport:
        """LiteToken's intermediate merge residues of a BPE version on `text` (arXiv 2602.04706;
        tokreg/evaluation/residues.py): the tokens BPE's merge loop forms there that are emitted
        in fewer than `below` (default 0.1) of the times they are formed, among those formed at
        least `min_seen` (default 10) times. The counts are stored beside the version and read
        back unless `recompute`."""
        from .evaluation import evaluate, residues  # on use: see the note at the top-level imports

        v = self.resolve(ref)
        (loaded,) = evaluate.read_texts([text])
        return residues.run(
            self.engine,
            v,
            loaded,
            lambda: self.load(v),
            below=residues.BELOW if below is None else below,
            min_seen=residues.MIN_SEEN if min_seen is None else min_seen,
            recompute=recompute,
        )

    def pin(self, ref: Ref, folder: Optional[PathLike] = None, *, vendor: bool = False) -> lockfile.Pin:
        """Writes `ref` (a bare name: the latest, whatever is pinned now) into
        `folder`/tokreg.lock; returns the Pin. `vendor`: also stores its content, compressed
        and checked, in `folder`/tokreg.vendor/ (versions/vendor.py), to commit with the project."""
        v = self.resolve(ref, lock=False)
        p = lockfile.new_pin(v.name, v.number, v.content_hash, v.sha256, self.location)
        where = os.fspath(folder) if folder is not None else os.getcwd()
        if vendor:
            from .versions import vendor as vendoring  # on use: see the note at the top-level imports

            raw = self.content(v.content_hash)
            assert raw is not None  # v holds it
            vendoring.put(where, v.content_hash, raw)
        lockfile.write(os.path.join(where, lockfile.FILENAME), p)
        return p

    def content(self, content_hash: str) -> Optional[bytes]:
        """The canonical content of a version holding exactly `content_hash`, checked against
        it (the cache's verified copy first), or None when no version here holds it."""
        with self._reading() as conn:
            if not by_hash.versions_with(conn, content_hash):
                return None
            raw = content_cache.get(content_hash)
            return raw if raw is not None else by_hash.content(conn, content_hash)

    def copy_to(
        self, dst: Registry, refs: Sequence[str] = (), *, parents: bool = True, aliases: bool = False
    ) -> list[Copied]:
        """Copies the versions `refs` name (every version when none; with their ancestors unless
        not `parents`) into the registry `dst` (created when absent), with their rows, lineage,
        runs, evaluations and audits, and with `aliases` their aliases; one transaction per
        version, idempotent (versions/copy.py). Pins do not apply: REFs name this registry's."""
        if self.url == dst.url:
            raise InputError(f"source and destination are the same registry ({self.where}); name two registries")
        with self._reading():  # a clear error when there is no registry here
            pass
        dst.check_writable()
        dst._ensure()
        from .versions import copy as copying  # on use: see the note at the top-level imports

        return copying.copy(self.engine, self.location, dst.engine, dst._where, refs, parents=parents, aliases=aliases)

    def verify(self, ref: Optional[Ref] = None) -> list[Verification]:
        """Recomputes hashes from rows and from the stored content, builds each encoder,
        re-encodes the stored samples and checks the on-disk compiled cache, for `ref` or every
        version. Reports problems; never raises for them."""
        with self._reading() as conn:
            versions = [self._version(conn, ref)] if ref is not None else refs.all_versions(conn)
            from .versions import verify  # on use: see the note at the top-level imports

            return verify.check_all(conn, versions)

    def export(self, ref: Ref, fmt: str, path: PathLike) -> VersionInfo:
        """Writes `ref` to `path` in format `fmt` (`tokreg`, `hf`, `tiktoken`, `sentencepiece`),
        whole or not at all, once the library that reads the format gives tokreg's ids on the
        version's samples and mixed text with its special tokens (else nothing is written).
        `hf` to an existing directory writes tokenizer.json and tokenizer_config.json there."""
        with self._reading() as conn:
            v = self._version(conn, ref)  # a pin that does not match is refused as such, not as damage
            try:
                stored = reads.read_version(conn, v)
            except IntegrityError as e:
                raise IntegrityError(
                    f"{e}; refusing to export damaged content", expected=e.expected, actual=e.actual
                ) from None
            samples = [text for text, _ in reads.samples(conn, v)]
        if fmt == "hf" and os.path.isdir(path):  # save_pretrained's layout, which AutoTokenizer loads
            files = import_export.export_hf_directory(stored.data(), stored.info.ref, samples=samples)
            for file_name, raw in files.items():
                write_atomic(os.path.join(path, file_name), raw)
        else:
            write_atomic(path, import_export.export(stored.data(), stored.info.ref, fmt, samples=samples))
            if fmt == "hf":
                from .formats import hf_settings  # on use: see the note at the top-level imports

                hf_settings.warn_file_only(stored.info.config, os.fspath(path))
        return stored.info

    def reproduce(self, ref: Ref, files: Optional[Sequence[PathLike]] = None) -> Reproduction:
        """Retrains `ref` from its recorded run; says whether the hash is the stored one."""
        with self._reading() as conn:  # closed before training, which can take long
            v = self._version(conn, ref)
            run = reads.training_run(conn, v)
        from .training import reproduce

        return reproduce.reproduce(v, run, [os.fspath(f) for f in files] if files else None)

    def grant_read(self, role: str) -> list[str]:
        """PostgreSQL: lets the existing role `role` read tokreg's tables and views (SELECT, and
        nothing else): the role to give `tokreg sql` for the strongest read-only guarantee.
        Returns the tables and views granted."""
        with self._writing() as conn:
            return grant_read(conn, role)

    # -- schema -------------------------------------------------------------------------------

    def schema_revision(self) -> tuple[Optional[str], Optional[str]]:
        """(current revision, newest revision) of the schema."""
        with self._reading():
            return migrate.current(self.engine), migrate.head()

    def upgrade(self) -> None:
        """Creates the registry, or brings its schema to the newest revision (also done on open)."""
        self._ensure()
        with engine.database_errors(self._where):
            migrate.upgrade(self.engine)


def _imported(path: PathLike) -> str:
    return f"imported from {os.path.basename(os.fspath(path))}"


def load(ref: str, *, db: Optional[PathLike] = None, lock: Optional[lockfile.Lock]) -> Tokenizer:
    """`tokreg.load` past its cached path (loading.py), with the lock it read: the version `ref`
    names (pins applied) from the registry at `db`, `TOKREG_DB`, the one `lock` names for that
    tokenizer (when reachable), or the default location, in that order."""
    if db is None and not os.environ.get("TOKREG_DB"):
        db = lockfile.registry_for(ref, lock)
    with Registry(db, lock=lock if lock is not None else False) as reg:
        return reg.load(ref)
