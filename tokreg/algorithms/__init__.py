"""The algorithms, one module each, and the one place that finds the module of a version.

Adding an algorithm: write its module (an `Algorithm` subclass and its `ALGORITHM` instance,
see base.py), its encoder in the core, and one line in `ALGORITHMS` below.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from . import byte_bpe, char_bpe, sp_bpe, unigram, wordpiece
from .base import Algorithm
from .bpe_training import BpeOptions
from .training import Progress, TrainOptions
from .unigram import UnigramOptions
from .wordpiece import WordPieceOptions

if TYPE_CHECKING:
    from ..data import VersionInfo

#: Every algorithm tokreg encodes. Their `owns` tests never overlap (three are stored as "bpe":
#: byte-level, character-level and SentencePiece BPE, told apart by their config).
ALGORITHMS: tuple[Algorithm[Any], ...] = (
    byte_bpe.ALGORITHM,
    char_bpe.ALGORITHM,
    wordpiece.ALGORITHM,
    unigram.ALGORITHM,
    sp_bpe.ALGORITHM,
)

__all__ = [
    "ALGORITHMS",
    "Algorithm",
    "BpeOptions",
    "Progress",
    "TrainOptions",
    "UnigramOptions",
    "WordPieceOptions",
    "of",
    "version_json",
    "for_options",
    "option_types",
    "options_from_run",
]


def of(stored_as: str, config: Mapping[str, Any]) -> Algorithm[Any]:
    """The algorithm of a stored version (`versions.algorithm` and its raw config)."""
    for algo in ALGORITHMS:
        if algo.stored_as == stored_as and algo.owns(config):
            return algo
    raise InputError(f"this tokreg cannot encode {stored_as!r} tokenizers with this config; upgrade tokreg")


def for_options(options: TrainOptions) -> Algorithm[Any]:
    """The algorithm that trains with `options`."""
    for algo in ALGORITHMS:
        if algo.trains(options):
            return algo
    raise InputError(f"no algorithm trains with {type(options).__name__}")


def option_types() -> list[type[TrainOptions]]:
    """The training options classes, once each, in registration order."""
    seen: list[type[TrainOptions]] = []
    for algo in ALGORITHMS:
        if algo.options_type is not None and algo.options_type not in seen:
            seen.append(algo.options_type)
    return seen


def options_from_run(config: Mapping[str, Any]) -> TrainOptions:
    """The options of a recorded run (`training_runs.config`: {"algorithm": run_name, ...})."""
    d = dict(config)
    run_name = d.pop("algorithm", "bpe")
    for cls in option_types():
        if cls.run_name == run_name:
            return cls.from_json(d)
    raise InputError(f"cannot rebuild the options of a {run_name!r} run; upgrade tokreg")


def version_json(v: VersionInfo) -> dict[str, Any]:
    """A version as JSON for people and scripts (`list --json`, `show`, the web app): its config
    as `display_config` gives it, so a normalizer's rules (hundreds of KB) appear as their rule
    name and hash. The stored config itself is in the `versions` table and in exports."""
    out = v.to_json()
    out["config"] = of(v.algorithm, v.config).display_config(v.config)
    return out
