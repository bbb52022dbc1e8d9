"""The seam every algorithm is reached through: `Algorithm`, one instance per module.

An algorithm module owns everything that differs between algorithms: its typed config (what
the content header stores and hashes), how that config compiles to the core's one `Encoder`
class, whether encoding is lossless, its training options and trainer, and its mapping to and
from other tools' files (Hugging Face `tokenizer.json`, SentencePiece, tiktoken). Code outside
`algorithms/` asks the registry (`algorithms/__init__.py`) for the algorithm of a version and
calls these methods; it never branches on an algorithm's name.

    >>> algo = algorithms.of("bpe", {"byte_level": True, "pattern": "..."})
    >>> algo.name, algo.title
    ('byte_bpe', 'byte-level BPE')
    >>> enc = algo.compile(content, algo.parse_config(config))
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Optional, Protocol, TypeVar, Union

from .. import _core
from ..data import TokenizerData
from ..errors import InputError
from .training import Progress, TrainOptions

if TYPE_CHECKING:
    from ..formats.sentencepiece_proto import Model as SpModel

PathLike = Union[str, "os.PathLike[str]"]


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


class Algorithm(ABC, Generic[C]):
    #: registry key, and the kind the core's Encoder reports
    name: ClassVar[str]
    #: `versions.algorithm` and the content header's "algorithm" (part of the hash, so fixed)
    stored_as: ClassVar[str]
    #: for people: "byte-level BPE"
    title: ClassVar[str]
    #: the options its trainer takes (None: this algorithm is imported, not trained)
    options_type: ClassVar[Optional[type[TrainOptions]]] = None
    #: what a token's score means, when tokens have one ("log prob")
    score_label: ClassVar[Optional[str]] = None
    #: the file formats `export` writes besides tokreg's own
    export_formats: ClassVar[tuple[str, ...]] = ()
    #: the kind a special token has in this algorithm's versions (SentencePiece's: "control")
    special_kind: ClassVar[str] = "special"
    #: SentencePiece ModelProto TrainerSpec.model_type this algorithm imports (1 UNIGRAM, 2 BPE)
    sentencepiece_model_type: ClassVar[Optional[int]] = None

    # -- identity and config ----------------------------------------------------------------

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

    # -- encoding -----------------------------------------------------------------------------

    @abstractmethod
    def compile(self, content: bytes, config: C) -> _core.Encoder:
        """The core's encoder for hash-checked canonical content."""

    @abstractmethod
    def lossless(self, config: C) -> bool:
        """Whether decode(encode(s)) == s for every string."""

    # -- training -----------------------------------------------------------------------------

    def trains(self, options: TrainOptions) -> bool:
        """Whether `options` are this algorithm's training options."""
        return self.options_type is not None and isinstance(options, self.options_type)

    def check(self, options: TrainOptions, sizes: Sequence[int]) -> None:
        """Refuses options (and vocabulary sizes) that cannot train, before the corpus is read."""
        raise InputError(f"{self.title} tokenizers are imported, not trained by tokreg")

    def counting(self, options: TrainOptions) -> dict[str, Any]:
        """How this algorithm counts a corpus with `options`: a counting spec (training/counting_local.py)."""
        raise InputError(f"{self.title} tokenizers are imported, not trained by tokreg")

    def utf8_hint(self, options: TrainOptions) -> Optional[str]:
        """When the corpus must be UTF-8: what to tell a user whose corpus is not; else None."""
        return None

    def train_counts(
        self, counts: _core.Counts, options: TrainOptions, sizes: Sequence[int], progress: Optional[Progress] = None
    ) -> tuple[list[TokenizerData], dict[str, Any]]:
        """Trains on counts: one TokenizerData per size in `sizes` (ascending), without their
        runs, and what the run records of the training (`train_seconds`, ...)."""
        raise InputError(f"{self.title} tokenizers are imported, not trained by tokreg")

    # -- extending ----------------------------------------------------------------------------

    def extend_counting(self, config: C) -> dict[str, Any]:
        """How a new corpus is counted to extend a version with `config`: as its trainer would
        count it (a counting spec, training/counting_local.py)."""
        raise InputError(f"{self.title} versions cannot be extended by training; add tokens with `tokreg add-tokens`")

    def extend(
        self,
        base: TokenizerData,
        counts: _core.Counts,
        add: int,
        *,
        keep: Sequence[bytes] = (),
        threads: int = 0,
        progress: Optional[Progress] = None,
    ) -> TokenizerData:
        """`base` plus up to `add` tokens learned from `counts`: every base token keeps its id,
        bytes, kind and score, every base merge its rank; new tokens take the ids after the
        base's highest. `keep`: the pieces (as `extend_counting` counts them) of a text whose
        encoding must not change: no new token may occur inside one of them. The caller
        refuses fewer than `add`."""
        raise InputError(f"{self.title} versions cannot be extended by training; add tokens with `tokreg add-tokens`")

    def add_tokens(self, base: TokenizerData, tokens: Sequence[str]) -> TokenizerData:
        """`base` plus ordinary (not special) tokens, with ids after the base's highest."""
        raise InputError(f"{self.title} versions take added tokens as special tokens only; add them with --special")

    # -- other tools' files -------------------------------------------------------------------

    def export(self, fmt: str, data: TokenizerData, ref: str) -> bytes:
        """`data` written in format `fmt` (one of `export_formats`)."""
        raise InputError(f"{ref} is {self.title}, which has no {fmt} form; export it with --format tokreg")

    def reads_hf(self, model_type: str, doc: Mapping[str, Any]) -> bool:
        """Whether this algorithm imports a tokenizer.json with this model type and pipeline."""
        return False

    def from_hf(self, doc: Mapping[str, Any], model: Mapping[str, Any], where: str) -> TokenizerData:
        raise InputError(f"{where}: {self.title} cannot be read from a tokenizer.json")

    def from_sentencepiece(self, model: SpModel, where: str) -> TokenizerData:
        raise InputError(f"{where}: {self.title} cannot be read from a SentencePiece model")
