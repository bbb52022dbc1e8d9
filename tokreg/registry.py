"""`Registry`: the library's front door. Every CLI command is one call on it.

>>> reg = Registry()                       # TOKREG_DB or the default SQLite file
>>> v = reg.train("gpt-mini", ["corpus.txt"], BpeOptions(vocab_size=32000))
>>> v.ref, v.content_hash
('gpt-mini@1', 'xxh3-128:9f2c…')
>>> reg.load("gpt-mini").encode("hello")
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, Optional

from sqlalchemy import Engine, select

from . import compiled, lockfile
from .hashing import content_bytes, digest
from .record import record
from .result import TokenizerData
from .sql import run_query
from .store import migrate
from .store.engine import open_registry, resolve_url
from .store.models import Merge, Token, TrainingRound, TrainingRun, table
from .tokenizer import Tokenizer, is_lossless
from .trainers import Options, WordPieceOptions, train
from .trainers.common import Progress
from .versions import VersionInfo, all_versions, check_name, load_rows, resolve

PathLike = str | os.PathLike[str]


class Registry:
    """A tokenizer registry in a SQLite file or any SQLAlchemy database URL."""

    def __init__(self, db: Optional[PathLike] = None):
        self.url = resolve_url(db)
        self.engine: Engine = open_registry(self.url)

    def __repr__(self) -> str:
        return f"<Registry {self.engine.url!r}>"

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
        files: Sequence[PathLike],
        options: Options,
        *,
        message: Optional[str] = None,
        progress: Optional[Progress] = None,
    ) -> VersionInfo:
        """Trains on `files` with the algorithm of `options` (BpeOptions, WordPieceOptions, ...)
        and records the result as the next version of `name`."""
        check_name(name)
        data = train(files, options, progress=progress)
        return self.add(name, data, message=message)

    def add(self, name: str, data: TokenizerData, *, message: Optional[str] = None) -> VersionInfo:
        """Records an already trained or imported tokenizer as the next version of `name`."""
        return record(self.engine, name, data, message)

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
        from .formats import tiktoken_file

        check_name(name)
        data = tiktoken_file.read(path, pattern=pattern, specials=specials, expect_sha256=expect_sha256)
        return self.add(name, data, message=message or f"imported from {os.path.basename(path)}")

    def import_wordpiece(
        self,
        name: str,
        path: PathLike,
        options: WordPieceOptions,
        *,
        specials: Sequence[str] = (),
        message: Optional[str] = None,
    ) -> VersionInfo:
        """Registers a bare WordPiece `vocab.txt` with the normalizer settings in `options`."""
        from .formats import wordpiece_vocab

        check_name(name)
        data = wordpiece_vocab.read(path, options, specials)
        return self.add(name, data, message=message or f"imported from {os.path.basename(path)}")

    def import_sentencepiece(self, name: str, path: PathLike, *, message: Optional[str] = None) -> VersionInfo:
        """Registers a SentencePiece `.model` file (Unigram or BPE, identity normalization) as the
        next version of `name`; it encodes with the same ids as the `sentencepiece` library."""
        from .formats import sentencepiece_model

        check_name(name)
        data = sentencepiece_model.read(path)
        return self.add(name, data, message=message or f"imported from {os.path.basename(path)}")

    # -- reading ------------------------------------------------------------------------------

    def resolve(self, ref: str) -> VersionInfo:
        with self.engine.connect() as conn:
            return resolve(conn, ref)

    def versions(self, name: Optional[str] = None) -> list[VersionInfo]:
        """Every version (of `name`, or of all names), by name then number."""
        with self.engine.connect() as conn:
            if name is not None:
                resolve(conn, name)  # a clear error for an unknown name
            return all_versions(conn, name)

    def load(self, ref: str) -> Tokenizer:
        """The version `ref` names, ready to encode. Its content comes from the compiled cache
        when a verified copy is there, else from the rows (which must hash to the recorded hash)."""
        with self.engine.connect() as conn:
            v = resolve(conn, ref)
            content = compiled.get(v.content_hash)
            if content is None:
                tokens, merges = load_rows(conn, v.id)
                content = content_bytes(
                    v.algorithm, v.config, ((i, k, b, s) for i, b, k, s in tokens), merges
                )
                if digest(content)[0] == v.content_hash:
                    compiled.put(v.content_hash, content)
        return Tokenizer(v.ref, v.content_hash, v.algorithm, v.config, content)

    def show(self, ref: str, *, merges: int = 10) -> dict[str, Any]:
        """A version's metadata, training run, token counts by kind and its first merges."""
        with self.engine.connect() as conn:
            v = resolve(conn, ref)
            tt, mt, rt = table(Token), table(Merge), table(TrainingRun)
            kinds: dict[str, int] = {}
            for (kind,) in conn.execute(select(tt.c.kind).where(tt.c.version_id == v.id)):
                kinds[kind] = kinds.get(kind, 0) + 1
            n_merges = conn.execute(
                select(mt.c.rank).where(mt.c.version_id == v.id).order_by(mt.c.rank.desc()).limit(1)
            ).scalar()
            text = {
                r[0]: (r[1] if r[1] is not None else repr(bytes(r[2])))
                for r in conn.execute(select(tt.c.id, tt.c.text, tt.c.bytes).where(tt.c.version_id == v.id))
            }
            first = [
                {
                    "rank": r.rank,
                    "left": text[r.left_id],
                    "right": text[r.right_id],
                    "result": text[r.result_id],
                    "count": r.count,
                    "score": r.score,
                }
                for r in conn.execute(
                    select(mt).where(mt.c.version_id == v.id).order_by(mt.c.rank).limit(merges)
                )
            ]
            run = conn.execute(select(rt).where(rt.c.version_id == v.id)).mappings().first()
        out = v.to_json()
        out["tokens_by_kind"] = kinds
        out["merges"] = 0 if n_merges is None else n_merges + 1
        out["first_merges"] = first
        out["lossless"] = is_lossless(v.algorithm, v.config)
        if v.algorithm == "unigram":
            with self.engine.connect() as conn:
                tt = table(Token)
                out["top_pieces"] = [
                    {"id": r.id, "text": r.text, "score": r.score}
                    for r in conn.execute(
                        select(tt.c.id, tt.c.text, tt.c.score)
                        .where(tt.c.version_id == v.id, tt.c.kind == "normal")
                        .order_by(tt.c.score.desc(), tt.c.id)
                        .limit(merges)
                    )
                ]
        if run is not None:
            out["training_run"] = {
                k: (val.isoformat() if hasattr(val, "isoformat") else val)
                for k, val in run.items()
                if k not in ("id", "version_id")
            }
        return out

    def history(self, ref: str) -> list[dict[str, Any]]:
        """The recorded rounds of an iterative training run (Unigram: vocab size and
        log-likelihood after each EM / prune round), oldest first."""
        with self.engine.connect() as conn:
            v = resolve(conn, ref)
            t = table(TrainingRound)
            rows = conn.execute(select(t).where(t.c.version_id == v.id).order_by(t.c.round)).mappings()
            return [{k: r[k] for k in ("round", "phase", "vocab_size", "log_likelihood")} for r in rows]

    def sql(self, query: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Runs a read-only query; returns (column names, rows)."""
        return run_query(self.engine, query)

    # -- versions: aliases, diff, pin, verify, export, reproduce ---------------------------------

    def tag(self, ref: str, alias: str) -> dict[str, Any]:
        """Points `name@alias` at the version `ref` names (history kept in `tokreg log`)."""
        from . import aliases

        with self.engine.begin() as conn:
            return aliases.tag(conn, ref, alias)

    def untag(self, name: str, alias: str) -> int:
        """Deletes `name@alias`; returns the version number it pointed at."""
        from . import aliases

        with self.engine.begin() as conn:
            return aliases.untag(conn, name, alias)

    def aliases(self, name: str) -> dict[str, int]:
        """alias -> version number, for every alias of `name`."""
        from . import aliases

        with self.engine.connect() as conn:
            return aliases.aliases_of(conn, name)

    def log(self, name: str) -> list[dict[str, Any]]:
        """Versions created and alias moves of `name`, oldest first."""
        from . import aliases

        with self.engine.connect() as conn:
            return aliases.log(conn, name)

    def remove(self, ref: str) -> VersionInfo:
        """Deletes a version no alias points at (its tokens, merges, run and samples too)."""
        from . import aliases

        with self.engine.begin() as conn:
            return aliases.remove(conn, ref)

    def diff(
        self, a: str, b: str, *, texts: Optional[Sequence[PathLike]] = None, top: int = 10
    ) -> dict[str, Any]:
        """How version `b` differs from `a`; with `texts`, the effect on those files."""
        from .diff import compare

        return compare(self, a, b, texts=[str(t) for t in texts or ()], top=top)

    def pin(self, ref: str, folder: Optional[PathLike] = None) -> Any:
        """Writes `ref` (a bare name: the latest) into `folder`/tokreg.lock; returns the Pin."""
        with self.engine.connect() as conn:
            return lockfile.pin(conn, ref, self.url, folder)[1]

    def verify(self, ref: Optional[str] = None) -> list[dict[str, Any]]:
        """Recomputes hashes from rows and re-encodes stored samples, for `ref` or every version."""
        from .verify import verify

        with self.engine.connect() as conn:
            return verify(conn, ref)

    def export(self, ref: str, fmt: str, path: PathLike) -> VersionInfo:
        """Writes `ref` to `path` in format `fmt` (`tokreg`, `hf`, `tiktoken`)."""
        from . import formats

        with self.engine.connect() as conn:
            v, raw = formats.export(conn, ref, fmt)
        formats.write_file(path, raw)
        return v

    def import_hf(self, name: str, path: PathLike, *, message: Optional[str] = None) -> VersionInfo:
        """Registers a Hugging Face `tokenizer.json` (BPE) as the next version of `name`."""
        from .formats import hf

        check_name(name)
        return self.add(name, hf.read(path), message=message or f"imported from {os.path.basename(path)}")

    def reproduce(self, ref: str, files: Optional[Sequence[PathLike]] = None) -> dict[str, Any]:
        """Retrains `ref` from its recorded run; says whether the hash is the stored one."""
        from .reproduce import reproduce

        return reproduce(self.engine, ref, [str(f) for f in files] if files else None)

    # -- schema -------------------------------------------------------------------------------

    def schema_revision(self) -> tuple[Optional[str], Optional[str]]:
        """(current revision, newest revision) of the schema."""
        return migrate.current(self.engine), migrate.head()

    def upgrade(self) -> None:
        migrate.upgrade(self.engine)


def load(ref: str, *, db: Optional[PathLike] = None) -> Tokenizer:
    """Loads a tokenizer by ref (`name` for the latest or the pinned version, `name@N`, or a hash
    prefix) from the registry at `db`, `TOKREG_DB`, the one the project's lockfile names for
    that tokenizer (when reachable), or the default location, in that order."""
    if db is None and not os.environ.get("TOKREG_DB"):
        db = lockfile.registry_for(ref)
    reg = Registry(db)
    try:
        return reg.load(ref)
    finally:
        reg.close()
