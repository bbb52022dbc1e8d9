"""The registry's schema: SQLAlchemy 2.0 models of every table. The Alembic migrations
(migrations/) create exactly these tables; tests/test_store.py fails if the two ever drift.

Tokens are stored as raw bytes plus a readable `text` column (NULL when the bytes are not valid
UTF-8 on their own); the canonical content those rows serialize to is stored beside them once
(`version_contents`), so a load reads one value instead of every row. Views for hand-written
SQL (`vocab`, `merges_view`, `evaluations_view`, `audit_view`) are made by the migrations only.
Alias history keeps version *numbers*, not row ids, so it still reads right after `tokreg rm`
has removed a version it mentions.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Optional, cast

from sqlalchemy import (
    JSON,
    BigInteger,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


def table(model: type[Base]) -> Table:
    """The Core table of a model, typed as such (for bulk inserts and plain selects)."""
    return cast(Table, model.__table__)


class Version(Base):
    """One immutable tokenizer version, `name@number`."""

    __tablename__ = "versions"
    __table_args__ = (UniqueConstraint("name", "number"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), index=True)
    number: Mapped[int] = mapped_column(Integer)
    algorithm: Mapped[str] = mapped_column(String(32))
    # Everything that changes encoding besides tokens and merges (pattern, flags, ...).
    config: Mapped[dict[str, Any]] = mapped_column(JSON)
    vocab_size: Mapped[int] = mapped_column(Integer)
    content_hash: Mapped[str] = mapped_column(String(80), index=True)
    sha256: Mapped[str] = mapped_column(String(80))
    source: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    message: Mapped[Optional[str]] = mapped_column(Text, nullable=True)


class VersionContent(Base):
    """A version's canonical content (content.py), stored once when it is written: loading reads
    this one value and checks it against `versions.content_hash`, instead of reading and
    re-serializing every token and merge row."""

    __tablename__ = "version_contents"

    version_id: Mapped[int] = mapped_column(ForeignKey("versions.id", ondelete="CASCADE"), primary_key=True)
    content: Mapped[bytes] = mapped_column(LargeBinary)


class Token(Base):
    __tablename__ = "tokens"

    version_id: Mapped[int] = mapped_column(ForeignKey("versions.id", ondelete="CASCADE"), primary_key=True)
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    bytes: Mapped[bytes] = mapped_column(LargeBinary)
    text: Mapped[Optional[str]] = mapped_column(Text, nullable=True)
    kind: Mapped[str] = mapped_column(String(16))
    count: Mapped[Optional[int]] = mapped_column(BigInteger, nullable=True)
    score: Mapped[Optional[float]] = mapped_column(Float, nullable=True)


class Merge(Base):
    __tablename__ = "merges"

    version_id: Mapped[int] = mapped_column(ForeignKey("versions.id", ondelete="CASCADE"), primary_key=True)
    rank: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    left_id: Mapped[int] = mapped_column(Integer)
    right_id: Mapped[int] = mapped_column(Integer)
    result_id: Mapped[int] = mapped_column(Integer)
    count: Mapped[Optional[int]] = mapped_column(BigInteger, nullable=True)
    score: Mapped[Optional[float]] = mapped_column(Float, nullable=True)
    # WordPiece: the counts of the two parts behind score = count / (left_count * right_count).
    left_count: Mapped[Optional[int]] = mapped_column(BigInteger, nullable=True)
    right_count: Mapped[Optional[int]] = mapped_column(BigInteger, nullable=True)


class TrainingRound(Base):
    """One round of an iterative trainer (Unigram: an EM pass or a prune), for training curves."""

    __tablename__ = "training_rounds"

    version_id: Mapped[int] = mapped_column(ForeignKey("versions.id", ondelete="CASCADE"), primary_key=True)
    round: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    phase: Mapped[str] = mapped_column(String(16))
    vocab_size: Mapped[int] = mapped_column(Integer)
    log_likelihood: Mapped[Optional[float]] = mapped_column(Float, nullable=True)


class VersionNumber(Base):
    """The highest version number a name has used: numbers only grow, even after `tokreg rm`."""

    __tablename__ = "version_numbers"

    name: Mapped[str] = mapped_column(String(200), primary_key=True)
    last_number: Mapped[int] = mapped_column(Integer)


class TrainingRun(Base):
    """What produced a trained version: enough to retrain it and check the inputs."""

    __tablename__ = "training_runs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    version_id: Mapped[int] = mapped_column(ForeignKey("versions.id", ondelete="CASCADE"), unique=True)
    config: Mapped[dict[str, Any]] = mapped_column(JSON)
    corpus_fingerprint: Mapped[str] = mapped_column(String(80))
    corpus_files: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    corpus_bytes: Mapped[int] = mapped_column(BigInteger)
    tokreg_version: Mapped[str] = mapped_column(String(32))
    threads: Mapped[int] = mapped_column(Integer)
    count_seconds: Mapped[float] = mapped_column(Float)
    train_seconds: Mapped[float] = mapped_column(Float)
    total_seconds: Mapped[float] = mapped_column(Float)
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    # Versions of several sizes trained in one run share this id (NULL: a run of one size).
    run_group: Mapped[Optional[str]] = mapped_column(String(32), nullable=True, index=True)
    # How the corpus was counted: memory limit, what the budget rule dropped, sample, engine.
    counting: Mapped[Optional[dict[str, Any]]] = mapped_column(JSON, nullable=True)


class Alias(Base):
    """`name@alias` -> one version of `name`. A version an alias points at cannot be removed."""

    __tablename__ = "aliases"
    __table_args__ = (UniqueConstraint("name", "alias"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    alias: Mapped[str] = mapped_column(String(100))
    version_id: Mapped[int] = mapped_column(ForeignKey("versions.id", ondelete="RESTRICT"), index=True)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class AliasEvent(Base):
    """One move of an alias: from version `old_version` (NULL: newly created) to `new_version`
    (NULL: deleted)."""

    __tablename__ = "alias_events"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), index=True)
    alias: Mapped[str] = mapped_column(String(100))
    old_version: Mapped[Optional[int]] = mapped_column(Integer, nullable=True)
    new_version: Mapped[Optional[int]] = mapped_column(Integer, nullable=True)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class Sample(Base):
    """A fixed string encoded when the version was created, and the ids it gave then."""

    __tablename__ = "samples"

    version_id: Mapped[int] = mapped_column(ForeignKey("versions.id", ondelete="CASCADE"), primary_key=True)
    position: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    text: Mapped[str] = mapped_column(Text)
    ids: Mapped[list[Any]] = mapped_column(JSON)


class EvalText(Base):
    """A text versions were evaluated on, identified like a training corpus (xxh3-128 over its
    name, size and the xxh3-128 of its bytes), or a set of parallel texts (`parts` lists their
    fingerprints, in order; the set's own fingerprint is the corpus fingerprint of all of them)."""

    __tablename__ = "eval_texts"

    fingerprint: Mapped[str] = mapped_column(String(80), primary_key=True)
    name: Mapped[str] = mapped_column(Text)
    language: Mapped[Optional[str]] = mapped_column(String(35), nullable=True)
    bytes: Mapped[int] = mapped_column(BigInteger)
    characters: Mapped[int] = mapped_column(BigInteger)
    words: Mapped[int] = mapped_column(BigInteger)
    parts: Mapped[Optional[list[str]]] = mapped_column(JSON(none_as_null=True), nullable=True)


class Evaluation(Base):
    """One metric of one version on one text (tokreg/metrics.py defines each). `reference` is
    the fingerprint of the text a relative metric (premium, spread) is measured against."""

    __tablename__ = "evaluations"

    version_id: Mapped[int] = mapped_column(ForeignKey("versions.id", ondelete="CASCADE"), primary_key=True)
    text_fingerprint: Mapped[str] = mapped_column(
        ForeignKey("eval_texts.fingerprint", ondelete="CASCADE"), primary_key=True, index=True
    )
    metric: Mapped[str] = mapped_column(String(40), primary_key=True)
    value: Mapped[float] = mapped_column(Float)
    reference: Mapped[Optional[str]] = mapped_column(String(80), nullable=True)
    computed_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    tokreg_version: Mapped[str] = mapped_column(String(32))


class Audit(Base):
    """That a version's tokens were audited, when, and with which threshold for "rare"."""

    __tablename__ = "audits"

    version_id: Mapped[int] = mapped_column(ForeignKey("versions.id", ondelete="CASCADE"), primary_key=True)
    rare_below: Mapped[int] = mapped_column(Integer)
    computed_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    tokreg_version: Mapped[str] = mapped_column(String(32))


class AuditToken(Base):
    """One token's audit: its category (reachable, reachable_in_context, unreachable,
    undecodable, special), why it is under-trained if it is (unused, rare, rare_merge), what
    its text re-encodes to when that is not itself, and the merge that created it."""

    __tablename__ = "audit_tokens"

    version_id: Mapped[int] = mapped_column(ForeignKey("audits.version_id", ondelete="CASCADE"), primary_key=True)
    token_id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    category: Mapped[str] = mapped_column(String(24))
    under_trained: Mapped[Optional[str]] = mapped_column(String(16), nullable=True)
    # none_as_null: None is SQL NULL (not the JSON text 'null'), so `WHERE reencoded IS NULL` works
    reencoded: Mapped[Optional[list[int]]] = mapped_column(JSON(none_as_null=True), nullable=True)
    merge_rank: Mapped[Optional[int]] = mapped_column(Integer, nullable=True)
    merge_count: Mapped[Optional[int]] = mapped_column(BigInteger, nullable=True)
