"""The registry's schema: SQLAlchemy 2.0 models of every table. The Alembic migrations
(migrations/) create exactly these tables; tests/test_store.py fails if the two ever drift.

Tokens are stored as raw bytes plus a readable `text` column (NULL when the bytes are not valid
UTF-8 on their own); the canonical content those rows serialize to is stored beside them once
(`version_contents`), so a load reads one value instead of every row. Views for hand-written
SQL (`vocab`, `merges_view`, `evaluations_view`, `audit_view`, `datasets_view`, `shards`) are made by
the migrations only.
Alias history keeps version *numbers*, not row ids, so it still reads right after `tokreg rm`
has removed a version it mentions.
"""

from __future__ import annotations

# Core tables, not ORM models: nothing in tokreg maps rows to objects, and declaring models
# imported sqlalchemy.orm and evaluated every annotation at start-up, about a third of the
# import time of every `tokreg` command.
from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Float,
    ForeignKey,
    ForeignKeyConstraint,
    Integer,
    LargeBinary,
    MetaData,
    SmallInteger,
    String,
    Table,
    Text,
    UniqueConstraint,
)

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

metadata = MetaData(naming_convention=NAMING_CONVENTION)


class Base:
    """Every table of the registry, as `Base.metadata` (what the migrations and the read-only
    SQL's table list compare against)."""

    metadata = metadata


def table(t: Table) -> Table:
    """A table (kept so that call sites read `table(Version)` as before)."""
    return t


# One immutable tokenizer version, `name@number`.
Version = Table(
    "versions",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String(200), index=True, nullable=False),
    Column("number", Integer, nullable=False),
    Column("algorithm", String(32), nullable=False),
    # Everything that changes encoding besides tokens and merges (pattern, flags, ...).
    Column("config", JSON, nullable=False),
    Column("vocab_size", Integer, nullable=False),
    Column("content_hash", String(80), index=True, nullable=False),
    Column("sha256", String(80), nullable=False),
    Column("source", String(64), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("message", Text, nullable=True),
    UniqueConstraint("name", "number"),
)


# A version's canonical content (content.py), stored once when it is written: loading reads
# this one value and checks it against `versions.content_hash`, instead of reading and
# re-serializing every token and merge row.
VersionContent = Table(
    "version_contents",
    metadata,
    Column("version_id", ForeignKey("versions.id", ondelete="CASCADE"), primary_key=True),
    Column("content", LargeBinary, nullable=False),
)

# Where a version came from: its parent (NULL when it was trained or imported from outside, or
# when the parent was removed: `parent_ref` and `parent_hash` still name it), how it was derived
# from it (trained | imported | reimported | extended | added_tokens), and what the derivation
# recorded (`details`: tokens added, ids kept, changed lines of a check text).
Lineage = Table(
    "lineage",
    metadata,
    Column("version_id", ForeignKey("versions.id", ondelete="CASCADE"), primary_key=True),
    Column("parent_id", ForeignKey("versions.id", ondelete="SET NULL"), nullable=True, index=True),
    Column("parent_ref", String(220), nullable=True),
    Column("parent_hash", String(80), nullable=True),
    Column("derivation", String(32), nullable=False),
    Column("details", JSON(none_as_null=True), nullable=True),
)


# Where a version copied from another registry came from (`tokreg copy`): the source registry
# (password hidden), its `name@N` and hash there, and when. No row: not copied.
Origin = Table(
    "origins",
    metadata,
    Column("version_id", ForeignKey("versions.id", ondelete="CASCADE"), primary_key=True),
    Column("registry", Text, nullable=False),
    Column("ref", String(220), nullable=False),
    Column("content_hash", String(80), nullable=False),
    Column("copied_at", DateTime(timezone=True), nullable=False),
)


Token = Table(
    "tokens",
    metadata,
    Column("version_id", ForeignKey("versions.id", ondelete="CASCADE"), primary_key=True),
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("bytes", LargeBinary, nullable=False),
    Column("text", Text, nullable=True),
    Column("kind", String(16), nullable=False),
    Column("count", BigInteger, nullable=True),
    Column("score", Float, nullable=True),
    # One B-tree clustered on the key, not a rowid table plus the key's index (migration 0014).
    sqlite_with_rowid=False,
)


Merge = Table(
    "merges",
    metadata,
    Column("version_id", ForeignKey("versions.id", ondelete="CASCADE"), primary_key=True),
    Column("rank", Integer, primary_key=True, autoincrement=False),
    Column("left_id", Integer, nullable=False),
    Column("right_id", Integer, nullable=False),
    Column("result_id", Integer, nullable=False),
    Column("count", BigInteger, nullable=True),
    Column("score", Float, nullable=True),
    # WordPiece: the counts of the two parts behind score = count / (left_count * right_count).
    Column("left_count", BigInteger, nullable=True),
    Column("right_count", BigInteger, nullable=True),
    # Superword BPE (SuperBPE): 1 for a merge within the pieces of the pattern, 2 for one across them.
    Column("stage", SmallInteger, nullable=True),
    sqlite_with_rowid=False,
)


# One round of an iterative trainer (Unigram: an EM pass or a prune), for training curves.
TrainingRound = Table(
    "training_rounds",
    metadata,
    Column("version_id", ForeignKey("versions.id", ondelete="CASCADE"), primary_key=True),
    Column("round", Integer, primary_key=True, autoincrement=False),
    Column("phase", String(16), nullable=False),
    Column("vocab_size", Integer, nullable=False),
    Column("log_likelihood", Float, nullable=True),
)


# PickyBPE (Chizhov et al., arXiv 2409.04599): each removal event, in order; right after the
# merge of rank `after`, `token_id` left the vocabulary, split back into its parents; `ios` was
# its Intersection over Self (NULL: it left by the residue rule) and `count` its occurrences then.
Removal = Table(
    "removals",
    metadata,
    Column("version_id", ForeignKey("versions.id", ondelete="CASCADE"), primary_key=True),
    Column("event", Integer, primary_key=True, autoincrement=False),
    Column("after_rank", Integer, nullable=False),
    Column("token_id", Integer, nullable=False),
    Column("ios", Float, nullable=True),
    Column("count", BigInteger, nullable=True),
)


# The highest version number a name has used: numbers only grow, even after `tokreg rm`.
VersionNumber = Table(
    "version_numbers",
    metadata,
    Column("name", String(200), primary_key=True),
    Column("last_number", Integer, nullable=False),
)


# What produced a trained version: enough to retrain it and check the inputs.
TrainingRun = Table(
    "training_runs",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("version_id", ForeignKey("versions.id", ondelete="CASCADE"), unique=True, nullable=False),
    Column("config", JSON, nullable=False),
    Column("corpus_fingerprint", String(80), nullable=False),
    Column("corpus_files", JSON, nullable=False),
    Column("corpus_bytes", BigInteger, nullable=False),
    Column("tokreg_version", String(32), nullable=False),
    Column("threads", Integer, nullable=False),
    Column("count_seconds", Float, nullable=False),
    Column("train_seconds", Float, nullable=False),
    Column("total_seconds", Float, nullable=False),
    Column("started_at", DateTime(timezone=True), nullable=False),
    # Versions of several sizes trained in one run share this id (NULL: a run of one size).
    Column("run_group", String(32), nullable=True, index=True),
    # How the corpus was counted: memory limit, what the budget rule dropped, sample, engine.
    Column("counting", JSON, nullable=True),
)


# `name@alias` -> one version of `name`. A version an alias points at cannot be removed.
Alias = Table(
    "aliases",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String(200), nullable=False),
    Column("alias", String(100), nullable=False),
    Column("version_id", ForeignKey("versions.id", ondelete="RESTRICT"), index=True, nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    UniqueConstraint("name", "alias"),
)


# One move of an alias: from version `old_version` (NULL: newly created) to `new_version`
# (NULL: deleted).
AliasEvent = Table(
    "alias_events",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String(200), index=True, nullable=False),
    Column("alias", String(100), nullable=False),
    Column("old_version", Integer, nullable=True),
    Column("new_version", Integer, nullable=True),
    Column("at", DateTime(timezone=True), nullable=False),
)


# A fixed string encoded when the version was created, and the ids it gave then.
Sample = Table(
    "samples",
    metadata,
    Column("version_id", ForeignKey("versions.id", ondelete="CASCADE"), primary_key=True),
    Column("position", Integer, primary_key=True, autoincrement=False),
    Column("text", Text, nullable=False),
    Column("ids", JSON, nullable=False),
)


# A text versions were evaluated on, identified like a training corpus (xxh3-128 over its
# name, size and the xxh3-128 of its bytes), or a set of parallel texts (`parts` lists their
# fingerprints, in order; the set's own fingerprint is the corpus fingerprint of all of them).
EvalText = Table(
    "eval_texts",
    metadata,
    Column("fingerprint", String(80), primary_key=True),
    Column("name", Text, nullable=False),
    Column("language", String(35), nullable=True),
    Column("bytes", BigInteger, nullable=False),
    Column("characters", BigInteger, nullable=False),
    Column("words", BigInteger, nullable=False),
    Column("parts", JSON(none_as_null=True), nullable=True),
)


# One metric of one version on one text (tokreg/evaluation/metrics.py defines each). `reference` is
# the fingerprint of the text a relative metric (premium, spread) is measured against.
Evaluation = Table(
    "evaluations",
    metadata,
    Column("version_id", ForeignKey("versions.id", ondelete="CASCADE"), primary_key=True),
    Column("text_fingerprint", ForeignKey("eval_texts.fingerprint", ondelete="CASCADE"), primary_key=True, index=True),
    Column("metric", String(40), primary_key=True),
    Column("value", Float, nullable=False),
    Column("reference", String(80), nullable=True),
    Column("computed_at", DateTime(timezone=True), nullable=False),
    Column("tokreg_version", String(32), nullable=False),
)


# That a version's tokens were audited, when, and with which threshold for "rare".
Audit = Table(
    "audits",
    metadata,
    Column("version_id", ForeignKey("versions.id", ondelete="CASCADE"), primary_key=True),
    Column("rare_below", Integer, nullable=False),
    Column("computed_at", DateTime(timezone=True), nullable=False),
    Column("tokreg_version", String(32), nullable=False),
)


# One token's audit: its category (reachable, reachable_in_context, unreachable,
# undecodable, special), why it is under-trained if it is (unused, rare, rare_merge), what
# its text re-encodes to when that is not itself, and the merge that created it.
AuditToken = Table(
    "audit_tokens",
    metadata,
    Column("version_id", ForeignKey("audits.version_id", ondelete="CASCADE"), primary_key=True),
    Column("token_id", Integer, primary_key=True, autoincrement=False),
    Column("category", String(24), nullable=False),
    Column("under_trained", String(16), nullable=True),
    # none_as_null: None is SQL NULL (not the JSON text 'null'), so `WHERE reencoded IS NULL` works
    Column("reencoded", JSON(none_as_null=True), nullable=True),
    Column("merge_rank", Integer, nullable=True),
    Column("merge_count", BigInteger, nullable=True),
)


# LiteToken's residue measure of a version on a text (`tokreg audit --residues`,
# tokreg/evaluation/residues.py): when it was measured ...
ResidueRun = Table(
    "residue_runs",
    metadata,
    Column("version_id", ForeignKey("versions.id", ondelete="CASCADE"), primary_key=True),
    Column("text_fingerprint", ForeignKey("eval_texts.fingerprint", ondelete="CASCADE"), primary_key=True),
    Column("computed_at", DateTime(timezone=True), nullable=False),
    Column("tokreg_version", String(32), nullable=False),
)


# ... and, for each token BPE's merge loop formed on that text, how often it was emitted (final)
# and merged into a longer token (intermediate): a residue has final / (final + intermediate) near 0.
ResidueToken = Table(
    "residue_tokens",
    metadata,
    Column("version_id", Integer, primary_key=True),
    Column("text_fingerprint", String(80), primary_key=True),
    Column("token_id", Integer, primary_key=True, autoincrement=False),
    Column("final", BigInteger, nullable=False),
    Column("intermediate", BigInteger, nullable=False),
    ForeignKeyConstraint(
        ["version_id", "text_fingerprint"],
        ["residue_runs.version_id", "residue_runs.text_fingerprint"],
        ondelete="CASCADE",
    ),
)


# Parity-aware BPE (`--algo parity-bpe`, arXiv 2508.04796): each language of a version's run,
# its training text's bytes and tokens at the version's size, and (with a parallel set, else
# NULL) its development text's bytes and tokens, the cost the trainer compared across languages.
ParityLanguage = Table(
    "parity_languages",
    metadata,
    Column("version_id", ForeignKey("versions.id", ondelete="CASCADE"), primary_key=True),
    Column("language", String(64), primary_key=True),
    Column("train_bytes", BigInteger, nullable=False),
    Column("train_tokens", BigInteger, nullable=False),
    Column("dev_bytes", BigInteger, nullable=True),
    Column("dev_tokens", BigInteger, nullable=True),
)


# ... and per merge and language: the pair's count in that language's training text when the
# merge was made (its gain there, in tokens), and whether the merge went to that language (no
# row is chosen for a merge made by the count over all languages, `--global-merges`).
ParityMerge = Table(
    "parity_merges",
    metadata,
    Column("version_id", Integer, primary_key=True),
    Column("rank", Integer, primary_key=True, autoincrement=False),
    Column("language", String(64), primary_key=True),
    Column("gain", BigInteger, nullable=False),
    Column("chosen", Boolean, nullable=False),
    ForeignKeyConstraint(
        ["version_id", "language"],
        ["parity_languages.version_id", "parity_languages.language"],
        ondelete="CASCADE",
    ),
)


# A token dataset `tokreg tokenize` wrote (tokreg/datasets/): where, by which tokenizer (its
# hash is kept when the version is removed), what it holds, and its whole manifest.
Dataset = Table(
    "datasets",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("dataset_hash", String(80), index=True, nullable=False),
    Column("folder", Text, nullable=False),
    Column("tokenizer_ref", String(220), nullable=False),
    Column("tokenizer_hash", String(80), index=True, nullable=False),
    Column("version_id", ForeignKey("versions.id", ondelete="SET NULL"), nullable=True, index=True),
    Column("format", String(16), nullable=False),
    Column("dtype", String(16), nullable=False),
    Column("shards", Integer, nullable=False),
    Column("tokens", BigInteger, nullable=False),
    Column("documents", BigInteger, nullable=False),
    Column("skipped", BigInteger, nullable=False),
    Column("shard_of", String(32), nullable=True),
    Column("manifest", JSON, nullable=False),
    Column("tokreg_version", String(32), nullable=False),
    Column("recorded_at", DateTime(timezone=True), nullable=False),
    UniqueConstraint("dataset_hash", "folder"),
)


# One shard of a dataset: its files (name -> bytes, xxh3-128), counts, and the hash of its ids file.
DatasetShard = Table(
    "dataset_shards",
    metadata,
    Column("dataset_id", ForeignKey("datasets.id", ondelete="CASCADE"), primary_key=True),
    Column("position", Integer, primary_key=True, autoincrement=False),
    Column("name", String(200), nullable=False),
    Column("tokens", BigInteger, nullable=False),
    Column("documents", BigInteger, nullable=False),
    Column("skipped", BigInteger, nullable=False),
    Column("data_xxh3", String(80), nullable=False),
    Column("files", JSON, nullable=False),
)
