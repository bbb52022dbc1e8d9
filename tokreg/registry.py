"""`Registry`: the library's front door. Every CLI command is one call on it.

>>> reg = Registry()                       # TOKREG_DB or the default SQLite file
>>> v = reg.train("gpt-mini", ["corpus/"], BpeOptions(vocab_size=32000))
>>> v.ref, v.content_hash
('gpt-mini@1', 'xxh3-128:9f2c…')
>>> reg.load("gpt-mini").encode("hello")
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, Optional, Union

from sqlalchemy import Engine
from sqlalchemy.engine import make_url

from . import algorithms, content_cache, diff, pins, reproduce, train_run, transfer, verify
from .corpus.sources import Input
from .data import TokenizerData
from .errors import IntegrityError, Interrupted
from .files import read_text, write_atomic
from .lockfile import FILENAME, Pin, new_pin
from .lockfile import write as write_lock
from .samples import SAMPLES, encode_all
from .store import aliases, migrate, reads, refs, writer
from .store.engine import open_registry, resolve_url
from .store.readonly_sql import run_query
from .store.reads import StoredVersion
from .store.refs import VersionInfo, check_name
from .tokenizer import Tokenizer

PathLike = Union[str, "os.PathLike[str]"]


class Registry:
    """A tokenizer registry in a SQLite file or any SQLAlchemy database URL."""

    def __init__(self, db: Optional[PathLike] = None):
        self.url = resolve_url(db)
        self.engine: Engine = open_registry(self.url)

    def __repr__(self) -> str:
        return f"<Registry {self.location}>"

    @property
    def location(self) -> str:
        """The registry's URL, with any password hidden."""
        return make_url(self.url).render_as_string(hide_password=True)

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> Registry:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

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
        return self.train_sizes(
            name,
            inputs,
            options,
            None,
            message=message,
            progress=progress,
            glob=glob,
            field=field,
            counts=counts,
            engine=engine,
        )[-1]

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
        reachable one, and is recorded once."""
        check_name(name)
        try:
            datas = train_run.train(
                inputs, options, sizes, glob=glob, field=field, counts=counts, engine=engine, progress=progress
            )
        except (KeyboardInterrupt, Interrupted):
            raise Interrupted("training interrupted; nothing was written to the registry") from None
        seen: set[str] = set()
        items = []
        for data in datas:
            h = data.hashes()[0]
            if h not in seen:
                seen.add(h)
                items.append((data, self._samples(data, name)))
        return writer.record_all(self.engine, name, items, message=message)

    def _samples(self, data: TokenizerData, name: str) -> list[tuple[str, list[int]]]:
        """The sample strings with their ids: compiling them proves the version can encode."""
        return list(zip(SAMPLES, encode_all(Tokenizer.from_data(data, name))))

    def add(self, name: str, data: TokenizerData, *, message: Optional[str] = None) -> VersionInfo:
        """Records an already trained or imported tokenizer as the next version of `name`. It is
        compiled first (a version that cannot encode is never written) and its sample strings
        are encoded and stored with it, for `verify`."""
        check_name(name)
        return writer.record(self.engine, name, data, message=message, samples=self._samples(data, name))

    def import_tiktoken(
        self,
        name: str,
        path: PathLike,
        *,
        pattern: str,
        specials: Optional[dict[str, int]] = None,
        expect_sha256: Optional[str] = None,
        message: Optional[str] = None,
    ) -> VersionInfo:
        """Registers a `.tiktoken` rank file as the next version of `name`."""
        check_name(name)
        data = transfer.read_tiktoken(path, pattern=pattern, specials=specials, expect_sha256=expect_sha256)
        return self.add(name, data, message=message or _imported(path))

    def import_hf(self, name: str, path: PathLike, *, message: Optional[str] = None) -> VersionInfo:
        """Registers a Hugging Face `tokenizer.json` (BPE, WordPiece, Unigram) as the next version of `name`."""
        check_name(name)
        return self.add(name, transfer.read_hf(path), message=message or _imported(path))

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
        data = transfer.read_wordpiece_vocab(path, options, specials)
        return self.add(name, data, message=message or _imported(path))

    def import_sentencepiece(self, name: str, path: PathLike, *, message: Optional[str] = None) -> VersionInfo:
        """Registers a SentencePiece `.model` file (Unigram or BPE, identity normalization) as the
        next version of `name`; it encodes with the same ids as the `sentencepiece` library."""
        check_name(name)
        return self.add(name, transfer.read_sentencepiece(path), message=message or _imported(path))

    # -- reading ------------------------------------------------------------------------------

    def resolve(self, ref: str, *, lock: pins.LockArg = False) -> VersionInfo:
        """The version `ref` names; with `lock` (a Lock, or None to find the project's
        tokreg.lock), a bare pinned name is the pinned version, its hash checked."""
        with self.engine.connect() as conn:
            return pins.resolve(conn, ref, pins.lock_of(lock))[0]

    def versions(self, name: Optional[str] = None) -> list[VersionInfo]:
        """Every version (of `name`, or of all names), by name then number."""
        with self.engine.connect() as conn:
            if name is not None:
                refs.resolve(conn, name)  # a clear error for an unknown name
            return refs.all_versions(conn, name)

    def stored(self, ref: str) -> StoredVersion:
        """A version's rows and canonical content, checked against its recorded hash."""
        with self.engine.connect() as conn:
            return reads.read_version(conn, refs.resolve(conn, ref))

    def load(self, ref: str, *, lock: pins.LockArg = None) -> Tokenizer:
        """The version `ref` names, ready to encode. A bare name pinned in the project's
        tokreg.lock (or in `lock`) is the pinned version. Its content comes from the on-disk
        cache when a verified copy is there, else from the rows; either way it must hash to
        the recorded (and pinned) hash."""
        with self.engine.connect() as conn:
            v, _ = pins.resolve(conn, ref, pins.lock_of(lock))
            raw = content_cache.get(v.content_hash)
            if raw is None:
                raw = reads.read_version(conn, v).content
                content_cache.put(v.content_hash, raw)
        return Tokenizer(raw, ref=v.ref, expect_hash=v.content_hash)

    def show(self, ref: str, *, merges: int = 10) -> dict[str, Any]:
        """A version's metadata, training run, token counts by kind, whether it is lossless, and
        its first merges (or, for scored vocabularies, its highest-scored pieces)."""
        with self.engine.connect() as conn:
            v = refs.with_same_run(conn, [refs.resolve(conn, ref)])[0]
            algo = algorithms.of(v.algorithm, v.config)
            summary = reads.summary(conn, v, merges=merges, top_scored=algo.score_label is not None)
            run = reads.training_run(conn, v)
        out = v.to_json()
        out.update(summary)
        out["title"] = algo.title
        out["score_label"] = algo.score_label
        out["lossless"] = algo.lossless(algo.parse_config(v.config))
        if run is not None:
            out["training_run"] = {k: (val.isoformat() if hasattr(val, "isoformat") else val) for k, val in run.items()}
        return out

    def history(self, ref: str) -> list[dict[str, Any]]:
        """The recorded rounds of an iterative training run (Unigram: vocab size and
        log-likelihood after each EM / prune round), oldest first."""
        with self.engine.connect() as conn:
            rounds = reads.rounds(conn, refs.resolve(conn, ref))
        return [
            {"round": r.round, "phase": r.phase, "vocab_size": r.vocab_size, "log_likelihood": r.log_likelihood}
            for r in rounds
        ]

    def sql(self, query: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Runs a read-only query; returns (column names, rows)."""
        return run_query(self.engine, query)

    # -- versions: aliases, diff, pin, verify, export, reproduce ---------------------------------

    def tag(self, ref: str, alias: str) -> dict[str, Any]:
        """Points `name@alias` at the version `ref` names (history kept in `tokreg log`)."""
        with self.engine.begin() as conn:
            return aliases.tag(conn, ref, alias)

    def untag(self, name: str, alias: str) -> int:
        """Deletes `name@alias`; returns the version number it pointed at."""
        with self.engine.begin() as conn:
            return aliases.untag(conn, name, alias)

    def aliases(self, name: str) -> dict[str, int]:
        """alias -> version number, for every alias of `name`."""
        with self.engine.connect() as conn:
            return refs.aliases_of(conn, name)

    def log(self, name: str) -> list[dict[str, Any]]:
        """Versions created and alias moves of `name`, oldest first."""
        with self.engine.connect() as conn:
            return aliases.log(conn, name)

    def remove(self, ref: str) -> VersionInfo:
        """Deletes a version no alias points at (its tokens, merges, run and samples too)."""
        with self.engine.begin() as conn:
            return aliases.remove(conn, ref)

    def diff(self, a: str, b: str, *, texts: Optional[Sequence[PathLike]] = None, top: int = 10) -> dict[str, Any]:
        """How version `b` differs from `a`; with `texts`, the effect on those files."""
        loaded = [(os.fspath(t), read_text(t, "--text file")) for t in texts or ()]
        sa, sb = self.stored(a), self.stored(b)
        out = diff.diff(sa, sb, top=top)
        if loaded:
            tok_a = Tokenizer(sa.content, ref=sa.info.ref, expect_hash=sa.info.content_hash)
            tok_b = Tokenizer(sb.content, ref=sb.info.ref, expect_hash=sb.info.content_hash)
            out["text"] = diff.text_effect(tok_a, tok_b, loaded, top=top)
        return out

    def pin(self, ref: str, folder: Optional[PathLike] = None) -> Pin:
        """Writes `ref` (a bare name: the latest) into `folder`/tokreg.lock; returns the Pin."""
        v = self.resolve(ref)
        p = new_pin(v.name, v.number, v.content_hash, v.sha256, self.location)
        write_lock(os.path.join(os.fspath(folder) if folder is not None else os.getcwd(), FILENAME), p)
        return p

    def verify(self, ref: Optional[str] = None) -> list[dict[str, Any]]:
        """Recomputes hashes from rows, builds each encoder and re-encodes the stored samples,
        for `ref` or every version. Reports problems; never raises for them."""
        with self.engine.connect() as conn:
            versions = [refs.resolve(conn, ref)] if ref is not None else refs.all_versions(conn)
            return [verify.check(reads.read_version(conn, v, check=False), reads.samples(conn, v)) for v in versions]

    def export(self, ref: str, fmt: str, path: PathLike) -> VersionInfo:
        """Writes `ref` to `path` in format `fmt` (`tokreg`, `hf`, `tiktoken`), whole or not at all."""
        try:
            stored = self.stored(ref)
        except IntegrityError as e:
            raise IntegrityError(
                f"{e}; refusing to export damaged content", expected=e.expected, actual=e.actual
            ) from None
        write_atomic(path, transfer.export(stored.data(), stored.info.ref, fmt))
        return stored.info

    def reproduce(self, ref: str, files: Optional[Sequence[PathLike]] = None) -> dict[str, Any]:
        """Retrains `ref` from its recorded run; says whether the hash is the stored one."""
        with self.engine.connect() as conn:  # closed before training, which can take long
            v = refs.resolve(conn, ref)
            run = reads.training_run(conn, v)
        return reproduce.reproduce(v, run, [os.fspath(f) for f in files] if files else None)

    # -- schema -------------------------------------------------------------------------------

    def schema_revision(self) -> tuple[Optional[str], Optional[str]]:
        """(current revision, newest revision) of the schema."""
        return migrate.current(self.engine), migrate.head()

    def upgrade(self) -> None:
        migrate.upgrade(self.engine)


def _imported(path: PathLike) -> str:
    return f"imported from {os.path.basename(os.fspath(path))}"


def load(ref: str, *, db: Optional[PathLike] = None) -> Tokenizer:
    """Loads a tokenizer by ref (`name` for the latest or the pinned version, `name@N`, or a hash
    prefix) from the registry at `db`, `TOKREG_DB`, the one the project's lockfile names for
    that tokenizer (when reachable), or the default location, in that order."""
    lock = pins.lock_of(None)
    if db is None and not os.environ.get("TOKREG_DB"):
        db = pins.registry_for(ref, lock)
    with Registry(db) as reg:
        return reg.load(ref, lock=lock if lock is not None else False)
