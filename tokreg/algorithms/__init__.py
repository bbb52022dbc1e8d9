"""The algorithms, a folder per family (bpe/, wordpiece/, unigram/), and the one place that finds
the algorithm of a version, of training options, or of another tool's file.

Each family's folder is split by job: model.py (what a version is and how it encodes),
training.py, extend.py, and a module per other tool's file format; its `__init__.py` bundles
the parts each algorithm has as an `Algorithm` (interfaces.py). What the families share sits
beside them: options.py (the training options' base), template.py (post-processing
templates), sentencepiece_text.py and sentencepiece_model.py (SentencePiece's text handling
and `.model` files, for Unigram and SentencePiece BPE).

Adding an algorithm: write its folder, its encoder in the core, and one line in `ALGORITHMS`.

    >>> algo = algorithms.of("unigram", config)
    >>> algo.model.title, algo.trainer is not None, algo.tiktoken is None
    ('Unigram', True, True)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Optional

from ..errors import InputError
from . import bpe, unigram, wordpiece
from .bpe import BpeOptions, SuperwordOptions
from .interfaces import (
    Algorithm,
    Extender,
    HfCodec,
    Model,
    SentencePieceCodec,
    TiktokenCodec,
    Trainer,
    VocabTxtCodec,
    Writer,
)
from .options import Progress, TrainOptions, check_vocab_size
from .unigram import UnigramOptions
from .wordpiece import WordPieceOptions

if TYPE_CHECKING:
    from ..data import VersionInfo

#: Every algorithm tokreg encodes. Their models' `owns` tests never overlap (five are stored as
#: "bpe": byte-level, character-level, SentencePiece, HF-pipeline and superword BPE, told apart by
#: their config).
ALGORITHMS: tuple[Algorithm, ...] = (
    bpe.BYTE_LEVEL,
    bpe.CHAR_LEVEL,
    wordpiece.WORDPIECE,
    unigram.UNIGRAM,
    bpe.SENTENCEPIECE,
    bpe.HF_PIPELINE,
    wordpiece.HF_PIPELINE,
    bpe.SUPERWORD,
)

__all__ = [
    "ALGORITHMS",
    "Algorithm",
    "BpeOptions",
    "Extender",
    "HfCodec",
    "Model",
    "Progress",
    "SentencePieceCodec",
    "SuperwordOptions",
    "TiktokenCodec",
    "TrainOptions",
    "Trainer",
    "UnigramOptions",
    "VocabTxtCodec",
    "WordPieceOptions",
    "Writer",
    "check_vocab_size",
    "hf_reader",
    "of",
    "option_types",
    "options_from_run",
    "sentencepiece_reader",
    "tiktoken_codec",
    "trainer_for",
    "version_json",
    "vocab_txt_codec",
]


def of(stored_as: str, config: Mapping[str, Any]) -> Algorithm:
    """The algorithm of a stored version (`versions.algorithm` and its raw config)."""
    for algo in ALGORITHMS:
        if algo.model.stored_as == stored_as and algo.model.owns(config):
            return algo
    raise InputError(f"this tokreg cannot encode {stored_as!r} tokenizers with this config; upgrade tokreg")


def trainer_for(options: TrainOptions) -> Trainer:
    """The trainer that trains with `options`."""
    for algo in ALGORITHMS:
        if algo.trainer is not None and isinstance(options, algo.trainer.options_type):
            return algo.trainer
    raise InputError(f"no algorithm trains with {type(options).__name__}")


def option_types() -> list[type[TrainOptions]]:
    """The training options classes, once each, in registration order."""
    seen: list[type[TrainOptions]] = []
    for algo in ALGORITHMS:
        if algo.trainer is not None and algo.trainer.options_type not in seen:
            seen.append(algo.trainer.options_type)
    return seen


def options_from_run(config: Mapping[str, Any]) -> TrainOptions:
    """The options of a recorded run (`training_runs.config`: {"algorithm": run_name, ...})."""
    d = dict(config)
    run_name = d.pop("algorithm", "bpe")
    for cls in option_types():
        if cls.run_name == run_name:
            return cls.from_json(d)
    raise InputError(f"cannot rebuild the options of a {run_name!r} run; upgrade tokreg")


def hf_reader(model_type: str, doc: Mapping[str, Any]) -> Optional[HfCodec]:
    """The codec that reads a tokenizer.json with this model type and pipeline, if any."""
    return next((a.hf for a in ALGORITHMS if a.hf is not None and a.hf.reads(model_type, doc)), None)


def sentencepiece_reader(model_type: int) -> Optional[SentencePieceCodec]:
    """The codec that reads SentencePiece models of this `model_type`, if any."""
    return next(
        (
            a.sentencepiece
            for a in ALGORITHMS
            if a.sentencepiece is not None and a.sentencepiece.model_type == model_type
        ),
        None,
    )


def tiktoken_codec() -> TiktokenCodec:
    """The codec of tiktoken's rank files (byte-level BPE's)."""
    return next(a.tiktoken for a in ALGORITHMS if a.tiktoken is not None)


def vocab_txt_codec() -> VocabTxtCodec:
    """The codec of BERT's vocab.txt (WordPiece's)."""
    return next(a.vocab_txt for a in ALGORITHMS if a.vocab_txt is not None)


def version_json(v: VersionInfo) -> dict[str, Any]:
    """A version as JSON for people and scripts (`list --json`, `show`, the web app): its config
    as `display_config` gives it, so a normalizer's rules (hundreds of KB) appear as their rule
    name and hash. The stored config itself is in the `versions` table and in exports."""
    out = v.to_json()
    out["config"] = of(v.algorithm, v.config).model.display_config(v.config)
    return out
