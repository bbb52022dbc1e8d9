"""The plain data of a tokenizer version, as trainers and importers produce it and as the
store reads it back: tokens, merges, training rounds, config and run; and a stored version as
the store hands it to the wings (`VersionInfo`), so that no wing needs the store to name one.
The typed values the store's reads hand up (`StoredVersion`, `Lineage`, `LogEntry`, `AliasMove`,
`StoredEvaluation`, `VersionSummary`) live in stored.py and are named here too, imported on
first use: frozen, each with `to_json()` giving the JSON that `--json` and `tokreg serve` print
(`json_of`, the one rule for that).

A trainer or importer returns a `TokenizerData`; `finish` makes it a `FinishedVersion` (its
canonical content, content.py, and both hashes of it, computed once); the store's writer records
that in one transaction, taking the hashes from it; `Tokenizer` compiles the content into the
core's encoder.

    trainer -> TokenizerData --finish--> FinishedVersion --writer--> VersionInfo
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, fields, is_dataclass
from datetime import datetime
from itertools import accumulate, repeat
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Callable, Generic, Optional, TypeVar, Union, cast, overload

from . import content as _content_format
from .content import digest, serialize_columns

#: `field(metadata=OMIT_NONE)`: the field is left out of `to_json()` when it is None (a key that
#: today's JSON has only sometimes, e.g. `merges` of a diff of two Unigram versions).
OMIT_NONE = {"omit_none": True}


def json_of(value: Any) -> Any:
    """`value` as JSON data: a dataclass by its `to_json()` (or, lacking one, its fields in
    order), tuples as lists, dicts and lists walked (new containers: the caller may change
    them). Datetimes and bytes stay as they are; each face's encoder writes them (ISO text,
    0x-hex)."""
    if is_dataclass(value) and not isinstance(value, type):
        to_json = getattr(value, "to_json", None)
        return to_json() if to_json is not None else fields_json(value)
    if isinstance(value, (list, tuple)):
        return [json_of(x) for x in value]
    if isinstance(value, dict):
        return {k: json_of(x) for k, x in value.items()}
    return value


def fields_json(value: Any) -> dict[str, Any]:
    """A dataclass's fields in declaration order, as `json_of` gives them (OMIT_NONE honoured)."""
    out = {}
    for f in fields(value):
        v = getattr(value, f.name)
        if v is None and f.metadata.get("omit_none"):
            continue
        out[f.name] = json_of(v)
    return out


class JsonValue:
    """A typed result whose JSON is its fields in order (see `json_of`)."""

    __slots__ = ()

    def to_json(self) -> dict[str, Any]:
        return fields_json(self)


@dataclass(frozen=True)
class TokenRow:
    id: int
    bytes: bytes
    kind: str  # byte | char | merged | special | normal | unknown | control | user_defined | unused
    count: Optional[int] = None  # uses in the final segmentation of the training corpus
    score: Optional[float] = None

    @property
    def text(self) -> Optional[str]:
        """The readable form: None when the bytes are not UTF-8 on their own, or hold a NUL
        (which PostgreSQL text cannot store; the bytes column always has the exact token)."""
        if b"\x00" in self.bytes:
            return None
        try:
            return self.bytes.decode("utf-8")
        except UnicodeDecodeError:
            return None


R = TypeVar("R")


class Rows(Sequence[R], Generic[R]):
    """The rows of one table kept as the columns a trainer hands over (field name -> values in
    row order; a field left out is None in every row), each row object made only when someone
    asks for rows. A 32k-token BPE run gives 64k rows; making them as frozen dataclasses cost
    more CPU than the merge loop on a small corpus, and the way to the store (content, hashes,
    the bulk INSERTs) reads the columns instead. It is a read-only sequence equal to the list
    of its rows.

        >>> rows = Rows(MergeRow, {"rank": range(2), "left": [97, 98], "right": [98, 99], "result": [256, 257]})
        >>> rows[1].result, rows.column("left"), rows.column("count")
        (257, [97, 98], [None, None])
    """

    __slots__ = ("_make", "_columns", "_n", "_rows")

    def __init__(self, make: Callable[..., R], columns: dict[str, Sequence[Any]]):
        lengths = {len(v) for v in columns.values()}
        assert len(lengths) == 1, "every column holds one value per row"
        # The rows are made positionally: the columns are the row type's first fields, in order.
        assert list(columns) == [f.name for f in fields(cast(Any, make))][: len(columns)], "columns in field order"
        self._make = make
        self._columns = columns
        self._n = lengths.pop()
        self._rows: Optional[list[R]] = None

    def column(self, name: str) -> Sequence[Any]:
        """One field's values in row order (None in every row for a field not given)."""
        values = self._columns.get(name)
        return [None] * self._n if values is None else values

    def given(self, name: str) -> bool:
        """Whether the field's values were given (else it is None in every row)."""
        return self._columns.get(name) is not None

    def _all(self) -> list[R]:
        if self._rows is None:
            self._rows = list(map(self._make, *self._columns.values()))
        return self._rows

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, i: int) -> R: ...

    @overload
    def __getitem__(self, i: slice) -> Rows[R]: ...

    def __getitem__(self, i: Union[int, slice]) -> Union[R, Rows[R]]:
        if isinstance(i, slice):  # a prefix of a run (a smaller size): columns sliced, no rows made
            return Rows(self._make, {k: v[i] for k, v in self._columns.items()})
        return self._all()[i]

    def __iter__(self) -> Iterator[R]:
        return iter(self._all())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and not isinstance(other, (str, bytes)) and self._all() == list(other)

    __hash__ = None  # type: ignore[assignment]  # like a list

    def __repr__(self) -> str:
        return repr(self._all())


def column(rows: Sequence[Any], name: str) -> Sequence[Any]:
    """One field of every row, in order: read from the columns of `Rows`, else from each row."""
    if isinstance(rows, Rows):
        return rows.column(name)
    return list(map(attrgetter(name), rows))


#: What makes a token's `text` None, once its bytes are decoded with "surrogateescape": a NUL,
#: or a byte that is not UTF-8 (decoded as a lone surrogate; real UTF-8 never decodes to one).
_NOT_TEXT = re.compile("[\x00\udc80-\udcff]")


def texts(tokens: Sequence[TokenRow]) -> list[Optional[str]]:
    """`[t.text for t in tokens]` (`texts_of` their bytes)."""
    return texts_of(column(tokens, "bytes"))


def texts_of(raws: Sequence[bytes]) -> list[Optional[str]]:
    """`TokenRow.text` of each of `raws`, a third of the time for 200k tokens: decoding never
    fails (an undecodable byte becomes a lone surrogate), and one regex search over the texts
    joined finds the texts that are None (each match's token found from the texts' end
    offsets), instead of a Python call and a caught exception per token (or a search per
    token: 1,000 tokens of a 21k-token version at a time, 6.7 -> 4.8 ms)."""
    strs: list[Optional[str]] = list(map(bytes.decode, raws, repeat("utf-8"), repeat("surrogateescape")))
    joined = "".join(cast("list[str]", strs))
    if _NOT_TEXT.search(joined) is None:
        return strs
    ends = list(accumulate(map(len, cast("list[str]", strs))))
    for match in _NOT_TEXT.finditer(joined):
        strs[bisect_right(ends, match.start())] = None
    return strs


@dataclass(frozen=True)
class MergeRow:
    rank: int
    left: int
    right: int
    result: int
    count: Optional[int] = None  # pair count when the merge was chosen
    score: Optional[float] = None
    left_count: Optional[int] = None  # WordPiece: the part counts behind the score
    right_count: Optional[int] = None
    stage: Optional[int] = None  # superword BPE: 1 (within pieces) or 2 (across them)


@dataclass(frozen=True)
class ParityRecord:
    """What a parity-aware BPE run records of one version beside its merges (algorithms/bpe/
    parity_training.py; tables parity_languages and parity_merges). `languages` in the order
    the trainer took them (sorted by code); the lists per merge are in rank order."""

    languages: tuple[str, ...]
    chosen: list[Optional[int]]  # per merge: index of the language it went to; None: a global merge
    gains: list[int]  # merges x languages, row by row: the pair's count in each language's training text
    train_bytes: list[int]  # per language
    train_tokens: list[int]  # per language, at this version's size
    dev_bytes: Optional[list[int]] = None  # per language of the parallel set; None without one
    dev_tokens: Optional[list[int]] = None


@dataclass(frozen=True)
class RemovalRow(JsonValue):
    """One PickyBPE removal event (Chizhov et al., arXiv 2409.04599): the `event`-th removal,
    right after merge rank `after`, took `token_id` out of the vocabulary (split back into its
    parents); `ios` was its Intersection over Self then, `count` its occurrences."""

    event: int
    after: int
    token_id: int
    ios: Optional[float] = None
    count: Optional[int] = None


@dataclass(frozen=True)
class RoundRow(JsonValue):
    """One recorded training round (`Registry.history`): {"round", "phase", "vocab_size",
    "log_likelihood"} as JSON."""

    round: int
    phase: str  # em | prune | final
    vocab_size: int
    log_likelihood: Optional[float] = None


@dataclass
class TokenizerData:
    algorithm: str  # the stored algorithm: bpe | wordpiece | unigram
    config: dict[str, Any]  # everything besides tokens and merges that changes encoding
    tokens: Sequence[TokenRow]  # in id order (a list, or `Rows` from a trainer's columns)
    merges: Sequence[MergeRow] = field(default_factory=list)  # in rank order
    run: Optional[dict[str, Any]] = None  # the training run, when trained
    rounds: list[RoundRow] = field(default_factory=list)  # Unigram: EM / prune history
    removals: list[RemovalRow] = field(default_factory=list)  # PickyBPE: removal events in order
    source: str = "train"
    # Where it came from, when derived from a version (`store/lineage.py`): {"parent_ref",
    # "parent_hash", "derivation", "details"}; None: trained or imported from outside.
    lineage: Optional[dict[str, Any]] = None
    #: Parity-aware BPE: the languages, each merge's language and gains, each language's costs.
    parity: Optional[ParityRecord] = None

    @classmethod
    def from_content(cls, raw: bytes, source: str = "content") -> TokenizerData:
        """The tokens and merges of hash-checked canonical content (no counts, no run)."""
        algorithm, config = _content_format.header(raw)
        tokens, merges = _content_format.rows(raw)
        return cls(
            algorithm,
            config,
            [TokenRow(tid, b, kind, score=score) for tid, kind, b, score in tokens],
            [MergeRow(rank, *m) for rank, m in enumerate(merges)],
            source=source,
        )

    def content(self) -> bytes:
        """The canonical content bytes (content.py): what the hash is computed over and what
        an encoder is compiled from. Made anew on every call (for a 200k-token version a
        noticeable cost): a version on its way to the store is made once, by `finish`."""
        t, m = self.tokens, self.merges
        return serialize_columns(
            self.algorithm,
            self.config,
            column(t, "id"),
            column(t, "kind"),
            column(t, "bytes"),
            column(t, "score"),
            merge_columns=(column(m, "left"), column(m, "right"), column(m, "result")),
        )

    def hashes(self) -> tuple[str, str]:
        """(xxh3-128 label, sha256 label) of the canonical content."""
        return digest(self.content())

    @property
    def vocab_size(self) -> int:
        """Tokens a segmentation can end with: all but those removed for good (kind `removed`:
        PickyBPE's, and a residue-free version's holes)."""
        return sum(k != "removed" for k in column(self.tokens, "kind"))

    @property
    def special_tokens(self) -> dict[str, int]:
        t = self.tokens
        rows = zip(column(t, "id"), column(t, "bytes"), column(t, "kind"))
        return {b.decode("utf-8"): i for i, b, k in rows if k == "special"}


@dataclass(frozen=True)
class RoundTrip(JsonValue):
    """How much of a text a version loses, measured (training/round_trip.py): every line, with
    its line break, encoded on its own and decoded back, compared byte for byte; and the
    unknown tokens among the ids. `whole` is False when only the text's first `bytes` bytes
    were measured; `skipped` counts lines that are not UTF-8 (byte-level corpora may hold them),
    which are not measured."""

    lines: int
    lost_lines: int  # lines whose decode(encode(line)) differs from the line
    tokens: int
    unknown: int  # unknown tokens ([UNK], <unk>) among `tokens`
    bytes: int
    whole: bool
    skipped: int = 0

    @property
    def lossless(self) -> bool:
        return self.lost_lines == 0 and self.unknown == 0

    @property
    def unknown_rate(self) -> float:
        return self.unknown / self.tokens if self.tokens else 0.0

    @property
    def lost_rate(self) -> float:
        return self.lost_lines / self.lines if self.lines else 0.0

    def to_json(self) -> dict[str, Any]:
        return {**fields_json(self), "lossless": self.lossless}


@dataclass(frozen=True)
class FinishedVersion:
    """A version ready to record, every derived value computed once: its data (tokens, merges,
    rounds, config with the template, run record, source, lineage), its canonical content, and
    the two hash labels of that content. The store's writer takes the hashes from here (it
    never hashes again), and the CLI prints a trained version from here (no read-back)."""

    data: TokenizerData
    content: bytes
    content_hash: str  # xxh3-128 label
    sha256: str  # sha256 label
    #: What the version loses of its own training corpus (a trained version whose corpus text
    #: was read here; None otherwise: imported, extended, or counted elsewhere).
    round_trip: Optional[RoundTrip] = None

    @property
    def algorithm(self) -> str:
        return self.data.algorithm

    @property
    def config(self) -> dict[str, Any]:
        return self.data.config

    @property
    def run(self) -> Optional[dict[str, Any]]:
        return self.data.run

    def same_run(self, written: Sequence[tuple[VersionInfo, FinishedVersion]]) -> tuple[str, ...]:
        """The refs, among `written` (the versions written before this one in its transaction,
        each with what it was written from), of those trained in this version's run."""
        group = (self.run or {}).get("run_group")
        if group is None:
            return ()
        return tuple(info.ref for info, v in written if (v.run or {}).get("run_group") == group)

    @property
    def vocab_size(self) -> int:
        return len(self.data.tokens)


def finish(data: TokenizerData) -> FinishedVersion:
    """`data` as a version ready to record: the one place its content is made and hashed. The
    data is the caller's no more: nothing may change it after this."""
    raw = data.content()
    content_hash, sha256 = digest(raw)
    return FinishedVersion(data, raw, content_hash, sha256)


@dataclass(frozen=True)
class Recorded:
    """A version just written: its row (`info`, as the writer made it) and what was written
    (`version`: data, run record, content, hashes), for a caller that shows it without
    reading it back."""

    info: VersionInfo
    version: FinishedVersion


@dataclass(frozen=True)
class VersionInfo:
    """One row of `versions` (store/refs.py resolves a ref to it)."""

    id: int
    name: str
    number: int
    algorithm: str
    config: dict[str, Any]
    vocab_size: int
    content_hash: str
    sha256: str
    source: str
    created_at: datetime
    message: Optional[str]
    #: refs of the other versions trained in the same run (several sizes), by number
    same_run: tuple[str, ...] = ()

    @property
    def ref(self) -> str:
        return f"{self.name}@{self.number}"

    def to_json(self) -> dict[str, Any]:
        return {
            "ref": self.ref,
            "name": self.name,
            "version": self.number,
            "algorithm": self.algorithm,
            "vocab_size": self.vocab_size,
            "hash": self.content_hash,
            "sha256": self.sha256,
            "source": self.source,
            "created_at": self.created_at.isoformat(),
            "message": self.message,
            "config": self.config,
            "same_run": list(self.same_run),
        }


# -- what the store's reads hand up: in stored.py, imported on first use (PEP 562) -------------
#: Ten more dataclasses cost a command that never reads the store back (`tokreg train`) about
#: 20 ms of CPU to define; `from tokreg.data import LogEntry` still works.
_STORED = frozenset(
    (
        "StoredVersion",
        "Lineage",
        "LineageEntry",
        "LogEntry",
        "AliasMove",
        "StoredEvaluation",
        "FirstMerge",
        "MergeStages",
        "TopPiece",
        "VersionSummary",
    )
)

if TYPE_CHECKING:
    from .stored import AliasMove as AliasMove
    from .stored import FirstMerge as FirstMerge
    from .stored import Lineage as Lineage
    from .stored import LineageEntry as LineageEntry
    from .stored import LogEntry as LogEntry
    from .stored import MergeStages as MergeStages
    from .stored import StoredEvaluation as StoredEvaluation
    from .stored import StoredVersion as StoredVersion
    from .stored import TopPiece as TopPiece
    from .stored import VersionSummary as VersionSummary


def __getattr__(name: str) -> Any:
    if name in _STORED:
        from . import stored  # on first use: see _STORED

        return getattr(stored, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
