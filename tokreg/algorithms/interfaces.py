"""The seams every algorithm is reached through: small interfaces, one job each, and the
`Algorithm` that bundles one algorithm's implementations of them.

Every algorithm has a `Model`: what a version is (its typed config, what the content header
stores and hashes), how that config compiles to the core's one `Encoder` class, and whether
encoding is lossless. Everything else an algorithm has, it has as an interface of its own; what
it lacks is `None` in its `Algorithm`, so a caller asks "does it have one?" instead of calling
a method that refuses:

    Trainer             training options -> the core's trainer -> one TokenizerData per size
    Extender            a version + a new corpus, or + ordinary tokens -> a larger version, ids kept
    HfCodec             Hugging Face tokenizer.json, read and written
    SentencePieceCodec  SentencePiece .model, read and written
    TiktokenCodec       a .tiktoken rank map read, a .tiktoken file written
    VocabTxtCodec       a BERT vocab.txt read (it holds no normalizer, so it is not written)

Code outside `algorithms/` asks the registry (`algorithms/__init__.py`) for the algorithm of a
version; it never branches on an algorithm's name.

    >>> algo = algorithms.of("bpe", {"byte_level": True, "pattern": "..."})
    >>> algo.model.title, algo.export_formats, algo.sentencepiece
    ('byte-level BPE', ('hf', 'tiktoken'), None)
    >>> enc = algo.model.compile(content, algo.model.parse_config(config))
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Optional, Protocol, TypeVar

from .. import _core
from ..errors import InputError

if TYPE_CHECKING:
    from ..data import TokenizerData
    from ..formats.sentencepiece_proto import Model as SpModel
    from .options import Progress, TrainOptions


def exact_keys(raw: Mapping[str, Any], keys: set[str], title: str, optional: frozenset[str] = frozenset()) -> None:
    """Refuses a stored config with missing keys, or with keys this tokreg does not know: those
    come from a newer tokreg and would change encoding, so ignoring them would be a lie.
    `optional` keys may be absent (settings stored only when used, so older hashes stay)."""
    missing, unknown = sorted(keys - set(raw)), sorted(set(raw) - keys - optional)
    if unknown:
        raise InputError(
            f"this {title} version's config has settings this tokreg does not know ({', '.join(unknown)}); "
            "upgrade tokreg to load it"
        )
    if missing:
        raise InputError(f"this {title} version's config lacks {', '.join(missing)}; the version is damaged")


class Config(Protocol):
    """A typed, frozen config; `to_json()` is exactly the dict stored and hashed."""

    def to_json(self) -> dict[str, Any]: ...


C = TypeVar("C", bound=Config)


class Model(ABC, Generic[C]):
    """What a version of this algorithm is and how it encodes."""

    #: registry key, and the kind the core's Encoder reports
    name: ClassVar[str]
    #: `versions.algorithm` and the content header's "algorithm" (part of the hash, so fixed)
    stored_as: ClassVar[str]
    #: for people: "byte-level BPE"
    title: ClassVar[str]
    #: what a token's score means, when tokens have one ("log prob")
    score_label: ClassVar[Optional[str]] = None
    #: the kind a special token has in this algorithm's versions (SentencePiece's: "control")
    special_kind: ClassVar[str] = "special"

    @abstractmethod
    def owns(self, config: Mapping[str, Any]) -> bool:
        """Whether a stored version of `stored_as` with this raw config is this algorithm's."""

    @abstractmethod
    def parse_config(self, raw: Mapping[str, Any]) -> C:
        """The typed config of a stored raw config; refuses keys it does not know (a newer
        tokreg wrote them, and they would change encoding)."""

    def display_config(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        """A stored config as people read it (`show`, `diff`): the same settings, with anything
        too large to read (a normalizer's rules) replaced by what identifies it."""
        return dict(raw)

    @abstractmethod
    def compile(self, content: bytes, config: C) -> _core.Encoder:
        """The core's encoder for hash-checked canonical content."""

    @abstractmethod
    def lossless(self, config: C) -> bool:
        """Whether decode(encode(s)) == s for every string."""

    def lossy_by_design(self, config: C) -> Optional[str]:
        """Why a version of this config does not give every text back by design, for people
        ("decoding joins words with single spaces"); None when it does (`lossless`)."""
        return None if self.lossless(config) else "its decoding does not give every text back"


@dataclass(frozen=True)
class LanguagePlan:
    """Which inputs are in which language, for a trainer that counts each language apart
    (`Trainer.languages`): code -> the paths (files, or folders holding them) of its training
    text, and code -> the path of its development text (empty without a parallel set); or,
    with `field`, each JSON Lines record's language in that field (`train` then empty)."""

    train: dict[str, tuple[str, ...]]
    dev: dict[str, str]
    field: Optional[str] = None


def check_languages(train: Collection[str], dev: Collection[str]) -> None:
    """Two or more languages, and a parallel text for each of them (or none at all)."""
    if len(train) < 2:
        raise InputError(
            "parity-aware BPE needs inputs in two or more languages: give --lang CODE=PATH for each "
            "(or --lang-field for JSON Lines records)"
        )
    if dev and set(dev) != set(train):
        missing = sorted(set(train) - set(dev)) or sorted(set(dev) - set(train))
        raise InputError(
            f"--parallel needs one text for each language trained on, and the same languages: "
            f"{', '.join(missing)} is not in both"
        )


class Trainer(ABC):
    """Trains versions of an algorithm from a counted corpus. The run around it (reading,
    counting, the run record) is the training wing's."""

    #: the options it trains with (one trainer per options class)
    options_type: ClassVar[type[TrainOptions]]

    @abstractmethod
    def check(self, options: TrainOptions, sizes: Sequence[int]) -> None:
        """Refuses options (and vocabulary sizes) that cannot train, before the corpus is read."""

    @abstractmethod
    def counting(self, options: TrainOptions) -> dict[str, Any]:
        """How a corpus is counted for `options`: a counting spec (training/counting_local.py)."""

    @abstractmethod
    def utf8_hint(self, options: TrainOptions) -> Optional[str]:
        """When the corpus must be UTF-8: what to tell a user whose corpus is not; else None."""

    @abstractmethod
    def train_counts(
        self, counts: _core.Counts, options: TrainOptions, sizes: Sequence[int], progress: Optional[Progress] = None
    ) -> tuple[list[TokenizerData], dict[str, Any]]:
        """Trains on counts: one TokenizerData per size in `sizes` (ascending), config set,
        without their runs, and what the run records of the training (`train_seconds`, ...)."""

    def languages(self, options: TrainOptions) -> Optional[LanguagePlan]:
        """For a trainer that counts each language apart (parity-aware BPE): which inputs are in
        which language. None (every other trainer): the corpus is counted as one."""
        return None

    def train_languages(
        self,
        train: dict[str, _core.Counts],
        dev: dict[str, _core.Counts],
        options: TrainOptions,
        sizes: Sequence[int],
        progress: Optional[Progress] = None,
    ) -> tuple[list[TokenizerData], dict[str, Any]]:
        """`train_counts` for a trainer with `languages`: the counts of each language's training
        text and (with a parallel set) development text, by language code."""
        raise InputError(f"{type(self).__name__} trains on one corpus; it has no languages")

    def encodes_by_pieces(self, options: TrainOptions) -> bool:
        """Whether a version trained with `options` encodes a line as its counted pieces, each
        on its own, as counting cut them: then what it loses of its corpus is measured on the
        distinct pieces rather than on every line (training/round_trip.py)."""
        return False


class Extender(ABC, Generic[C]):
    """Grows a version of an algorithm: by training on a new corpus (`tokreg extend`), or by
    ordinary tokens (`tokreg add-tokens`). Every base token keeps its id, bytes, kind and
    score, every base merge its rank; new tokens take the ids after the base's highest."""

    #: What can rank the new merges (`tokreg extend --objective`); empty: one ranking only.
    objectives: ClassVar[tuple[str, ...]] = ()

    @abstractmethod
    def counting(self, config: C) -> dict[str, Any]:
        """How a new corpus is counted to extend a version with `config`: as its trainer would
        count it (a counting spec, training/counting_local.py)."""

    @abstractmethod
    def extend(
        self,
        base: TokenizerData,
        counts: _core.Counts,
        add: int,
        *,
        keep: Sequence[bytes] = (),
        threads: int = 0,
        progress: Optional[Progress] = None,
        objective: Optional[str] = None,
    ) -> TokenizerData:
        """`base` plus up to `add` tokens learned from `counts`. `keep`: the pieces (as
        `counting` counts them) of a text whose encoding must not change: no new token may
        occur inside one of them. `objective`: what ranks the new merges, one of `objectives`
        (None: the algorithm's default; the caller passes the base's own). The caller refuses
        fewer than `add`."""

    @abstractmethod
    def add_tokens(self, base: TokenizerData, tokens: Sequence[str]) -> TokenizerData:
        """`base` plus ordinary (not special) tokens, with ids after the base's highest."""


class Writer(ABC):
    """A codec that writes a version as another tool's file."""

    #: the `export --format` it answers to
    format: ClassVar[str]
    #: False for a codec that only reads: its format cannot hold the algorithm's versions
    #: exactly, and `write` refuses, saying why
    writes: ClassVar[bool] = True

    @abstractmethod
    def write(self, data: TokenizerData, ref: str) -> bytes:
        """`data` as the file's bytes; refuses (naming `ref`) what the format cannot hold."""


class HfCodec(Writer):
    """Hugging Face `tokenizer.json`."""

    format = "hf"

    @abstractmethod
    def reads(self, model_type: str, doc: Mapping[str, Any]) -> bool:
        """Whether this codec imports a tokenizer.json with this model type and pipeline."""

    @abstractmethod
    def read(self, doc: Mapping[str, Any], model: Mapping[str, Any], where: str) -> TokenizerData:
        """The version of a tokenizer.json; refuses what tokreg would encode differently."""


class SentencePieceCodec(Writer):
    """SentencePiece `.model` files (the protobuf is parsed by formats/sentencepiece_proto.py)."""

    format = "sentencepiece"
    #: the ModelProto TrainerSpec.model_type it reads (1 UNIGRAM, 2 BPE)
    model_type: ClassVar[int]

    @abstractmethod
    def read(self, model: SpModel, where: str) -> TokenizerData: ...


class TiktokenCodec(Writer):
    """tiktoken's rank files (`.tiktoken`, and the ranks of Mistral's tekken.json)."""

    format = "tiktoken"

    @abstractmethod
    def read(
        self, ranks: dict[bytes, int], where: str, *, pattern: str, specials: Optional[dict[str, int]] = None
    ) -> TokenizerData:
        """A rank map (token bytes -> rank = id) with its pattern and special tokens."""


class VocabTxtCodec(ABC):
    """A BERT `vocab.txt`, read only: it holds no normalizer settings, so the reader is given
    them, and a version is written as a tokenizer.json instead."""

    @abstractmethod
    def read(self, raw: bytes, where: str, options: TrainOptions, specials: Sequence[str] = ()) -> TokenizerData: ...


@dataclass(frozen=True)
class Algorithm:
    """One algorithm: its model, and whichever of the other interfaces it implements."""

    model: Model[Any]
    trainer: Optional[Trainer] = None
    extender: Optional[Extender[Any]] = None
    hf: Optional[HfCodec] = None
    sentencepiece: Optional[SentencePieceCodec] = None
    tiktoken: Optional[TiktokenCodec] = None
    vocab_txt: Optional[VocabTxtCodec] = None

    @property
    def writers(self) -> dict[str, Writer]:
        """The codecs that write, by format name, in the order `export_formats` lists them."""
        return {w.format: w for w in self.codecs.values() if w.writes}

    @property
    def codecs(self) -> dict[str, Writer]:
        """The codecs of other tools' files, by format name, those that only read included."""
        return {w.format: w for w in (self.hf, self.tiktoken, self.sentencepiece) if w is not None}

    @property
    def export_formats(self) -> tuple[str, ...]:
        """The file formats `export` writes besides tokreg's own."""
        return tuple(self.writers)
