"""The values the store's reads hand up to the wings (`StoredVersion`, `Lineage`, `LogEntry`,
`AliasMove`, `StoredEvaluation`, `VersionSummary`, ...): frozen, each with `to_json()` giving the
JSON that `--json` and `tokreg serve` print (`data.json_of`). Apart from data.py so that a
command that never reads a version back (`tokreg train`) does not define them; data.py names
them too (imported on first use), so `from tokreg.data import LogEntry` works.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Optional

from .data import OMIT_NONE, JsonValue, MergeRow, TokenizerData, TokenRow, VersionInfo, json_of


@dataclass
class StoredVersion:
    """A version read back with its canonical content (store/reads.py, `read_version`)."""

    info: VersionInfo
    content: bytes  # canonical content: the rows' (read with rows=True), else the stored copy
    hash: str  # what `content` hashes to (== info.content_hash unless read with check=False)
    tokens: list[TokenRow] = field(default_factory=list)  # id order (rows=True only)
    merges: list[MergeRow] = field(default_factory=list)  # rank order (rows=True only)
    stored: Optional[bytes] = None  # the content stored with the version (None: none stored)

    def data(self) -> TokenizerData:
        return TokenizerData(
            algorithm=self.info.algorithm,
            config=self.info.config,
            tokens=self.tokens,
            merges=self.merges,
            source=self.info.source,
        )


# -- what the store's reads hand up ------------------------------------------------------------


@dataclass(frozen=True)
class Lineage(JsonValue):
    """Where a version came from (store/lineage.py): its derivation (trained, imported,
    reimported, extended, added_tokens) and parent. `recorded` is False for a version written
    before lineage was kept: it reads as its source, and its JSON is {"derivation", "parent"}."""

    derivation: str
    parent: Optional[str]  # the parent's ref (as recorded, if it was removed since)
    parent_hash: Optional[str] = None
    parent_exists: bool = False
    parent_id: Optional[int] = None
    details: Optional[dict[str, Any]] = None  # what the derivation recorded (a JSON document)
    recorded: bool = True

    def to_json(self) -> dict[str, Any]:
        if not self.recorded:
            return {"derivation": self.derivation, "parent": self.parent}
        return {
            "derivation": self.derivation,
            "parent": self.parent,
            "parent_hash": self.parent_hash,
            "parent_exists": self.parent_exists,
            "parent_id": self.parent_id,
            "details": json_of(self.details),
        }


@dataclass(frozen=True)
class LineageEntry(JsonValue):
    """A version of a lineage chain (`Registry.lineage`, `show`): its ref and hash, and its lineage."""

    ref: str
    hash: str
    lineage: Lineage

    def to_json(self) -> dict[str, Any]:
        return {"ref": self.ref, "hash": self.hash, **self.lineage.to_json()}


@dataclass(frozen=True)
class LogEntry(JsonValue):
    """One event of a name's history (`Registry.log`): a version created (with its lineage), or
    an alias moved (`old` -> `new` version numbers; None: created, deleted)."""

    at: datetime
    event: str  # version | alias
    ref: str
    hash: Optional[str]  # the version's; None for an alias move
    detail: str
    lineage: Optional[Lineage] = None  # version events
    old: Optional[int] = None  # alias events
    new: Optional[int] = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "at": self.at,
            "event": self.event,
            "ref": self.ref,
            "hash": self.hash,
            "detail": self.detail,
        }
        if self.event == "alias":
            out.update(old=self.old, new=self.new)
        elif self.lineage is not None:
            out["lineage"] = self.lineage.to_json()
        return out


@dataclass(frozen=True)
class AliasMove(JsonValue):
    """What `Registry.tag` did: `alias` (`name@alias`) pointed at `ref`, from version `old`
    (None: a new alias) to `new`; `moved` False when it pointed there already. `ref` is None
    (and left out of the JSON) for a deletion, whose `new` is None."""

    ref: Optional[str] = field(metadata=OMIT_NONE)
    alias: str
    old: Optional[int]
    new: Optional[int]
    moved: bool


@dataclass(frozen=True)
class StoredEvaluation(JsonValue):
    """The stored results of `tokreg eval` for a version on one text (`Registry.evaluations`)."""

    text: str  # the text's name
    language: Optional[str]
    fingerprint: str
    bytes: int
    metrics: dict[str, float]  # metric -> value
    computed_at: datetime  # the latest of its metrics'


@dataclass(frozen=True)
class FirstMerge(JsonValue):
    """A merge as `show` lists it: its rank and readable parts."""

    rank: int
    left: Optional[str]
    right: Optional[str]
    result: Optional[str]
    count: Optional[int]
    score: Optional[float]


@dataclass(frozen=True)
class MergeStages(JsonValue):
    """A superword version's two stages (SuperBPE), from `merges.stage`: the transition point t
    (the tokens when stage 2 began), each stage's number of merges, and stage 2's first merges."""

    transition: Optional[int]
    stage1_merges: int
    stage2_merges: int
    first_stage2: tuple[FirstMerge, ...]


@dataclass(frozen=True)
class TopPiece(JsonValue):
    """A piece of a scored vocabulary as `show` lists it (highest score first)."""

    id: int
    text: Optional[str]
    score: Optional[float]


@dataclass(frozen=True)
class VersionSummary(JsonValue):
    """What `show` says of a version's rows (store/reads.py, `summary`): token counts by kind,
    how many merges and the first of them, and for scored vocabularies the top pieces (None
    when not asked for: then not in the JSON)."""

    tokens_by_kind: dict[str, int]
    merges: int
    first_merges: tuple[FirstMerge, ...]
    top_pieces: Optional[tuple[TopPiece, ...]] = field(default=None, metadata=OMIT_NONE)
    stages: Optional[MergeStages] = field(default=None, metadata=OMIT_NONE)  # superword BPE only
