"""The algorithms, a folder per family (bpe/, wordpiece/, unigram/), and the one place that finds
the algorithm of a version, of training options, or of another tool's file.

Each family's folder is split by job: model.py (what a version is and how it encodes),
training.py, extend.py, and a module per other tool's file format; its `__init__.py` bundles
the parts each algorithm has as an `Algorithm` (interfaces.py). What the families share sits
beside them: options.py (the training options' base), template.py (post-processing
templates), sentencepiece_text.py and sentencepiece_model.py (SentencePiece's text handling
and `.model` files, for Unigram and SentencePiece BPE).

Adding an algorithm: write its folder, its encoder in the core, and one line in `_REGISTERED`.
Everything here is imported on first use (PEP 562), so loading a version imports its model
module alone (`model_of`).

    >>> algo = algorithms.of("unigram", config)
    >>> algo.model.title, algo.trainer is not None, algo.tiktoken is None
    ('Unigram', True, True)
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from functools import cache
from typing import TYPE_CHECKING, Any, Optional

from ..errors import InputError

if TYPE_CHECKING:
    from ..data import VersionInfo
    from . import bpe, unigram, wordpiece
    from .bpe import BpeOptions, ParityOptions, PickyOptions, SuperwordOptions
    from .interfaces import (
        Algorithm,
        Extender,
        HfCodec,
        LanguagePlan,
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

    ALGORITHMS: tuple[Algorithm, ...]

#: Every algorithm tokreg encodes, registered once each: (the module and name of its `Algorithm`,
#: the module and name of its `Model`, the module whose `TRAINER` is its trainer, None when it
#: trains nothing). Their models' `owns` tests never overlap (five are stored
#: as "bpe": byte-level, character-level, SentencePiece, HF-pipeline, superword, PickyBPE and
#: residue-free BPE, told apart
#: by their config). The model's own place is named so that loading a version imports its model module
#: alone (`model_of`), not the trainers and file codecs an `Algorithm` bundles; the trainer's, so
#: that training (and `tokreg train`'s options) imports the trainers alone (`option_types`,
#: `trainer_for`).
_REGISTERED = (
    ("bpe.bundles", "BYTE_LEVEL", "bpe.model", "BYTE_LEVEL", "bpe.training"),
    ("bpe.bundles", "CHAR_LEVEL", "bpe.model", "CHAR_LEVEL", "bpe.training"),
    ("wordpiece.bundles", "WORDPIECE", "wordpiece.model", "WORDPIECE", "wordpiece.training"),
    ("unigram.bundles", "UNIGRAM", "unigram.model", "UNIGRAM", "unigram.training"),
    ("bpe.bundles", "SENTENCEPIECE", "bpe.sp_model", "SENTENCEPIECE", None),
    ("bpe.bundles", "HF_PIPELINE", "bpe.hf_pipe", "HF_BPE", None),
    ("wordpiece.bundles", "HF_PIPELINE", "wordpiece.hf_pipe", "HF_WORDPIECE", None),
    ("bpe.bundles", "SUPERWORD", "bpe.superword_model", "SUPERWORD", "bpe.superword_training"),
    # Parity-aware BPE's versions are byte-level BPE's (its model owns them first): registered
    # for its trainer.
    ("bpe.bundles", "PARITY", "bpe.model", "BYTE_LEVEL", "bpe.parity_training"),
    ("bpe.bundles", "PICKY", "bpe.picky_model", "PICKY", "bpe.picky_training"),
    ("bpe.bundles", "RESIDUE_FREE", "bpe.residue_free_model", "RESIDUE_FREE", None),
)

#: Public names imported on first use (PEP 562): name -> (module, attribute; None for the module).
_LAZY: dict[str, tuple[str, Optional[str]]] = {
    "bpe": ("bpe", None),
    "unigram": ("unigram", None),
    "wordpiece": ("wordpiece", None),
    "BpeOptions": ("bpe.training", "BpeOptions"),
    "SuperwordOptions": ("bpe.superword_training", "SuperwordOptions"),
    "ParityOptions": ("bpe.parity_training", "ParityOptions"),
    "PickyOptions": ("bpe.picky_training", "PickyOptions"),
    "UnigramOptions": ("unigram.training", "UnigramOptions"),
    "WordPieceOptions": ("wordpiece.training", "WordPieceOptions"),
    "Progress": ("options", "Progress"),
    "TrainOptions": ("options", "TrainOptions"),
    "check_vocab_size": ("options", "check_vocab_size"),
    **{
        name: ("interfaces", name)
        for name in (
            "Algorithm",
            "Extender",
            "HfCodec",
            "LanguagePlan",
            "Model",
            "SentencePieceCodec",
            "TiktokenCodec",
            "Trainer",
            "VocabTxtCodec",
            "Writer",
        )
    },
}


def _attr(module: str, name: Optional[str]) -> Any:
    mod = importlib.import_module(f".{module}", __name__)
    return mod if name is None else getattr(mod, name)


@cache
def _algorithms() -> tuple[Algorithm, ...]:
    return tuple(_attr(module, name) for module, name, _, _, _ in _REGISTERED)


def __getattr__(name: str) -> Any:
    if name == "ALGORITHMS":
        return _algorithms()
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = _attr(*_LAZY[name])
    globals()[name] = value
    return value


__all__ = [
    "ALGORITHMS",
    "Algorithm",
    "BpeOptions",
    "Extender",
    "HfCodec",
    "LanguagePlan",
    "Model",
    "ParityOptions",
    "Progress",
    "SentencePieceCodec",
    "SuperwordOptions",
    "PickyOptions",
    "TiktokenCodec",
    "TrainOptions",
    "Trainer",
    "UnigramOptions",
    "VocabTxtCodec",
    "WordPieceOptions",
    "Writer",
    "bpe",
    "check_vocab_size",
    "hf_reader",
    "model_of",
    "of",
    "option_types",
    "options_type",
    "options_from_run",
    "sentencepiece_reader",
    "tiktoken_codec",
    "trainer_for",
    "unigram",
    "version_json",
    "vocab_txt_codec",
    "wordpiece",
]


def of(stored_as: str, config: Mapping[str, Any]) -> Algorithm:
    """The algorithm of a stored version (`versions.algorithm` and its raw config)."""
    for algo in _algorithms():
        if algo.model.stored_as == stored_as and algo.model.owns(config):
            return algo
    raise InputError(f"this tokreg cannot encode {stored_as!r} tokenizers with this config; upgrade tokreg")


def model_of(stored_as: str, config: Mapping[str, Any]) -> Model[Any]:
    """`of(stored_as, config).model`, importing only the model modules it tries (what loading a
    version needs), in registration order."""
    for _, _, module, name, _ in _REGISTERED:
        model: Model[Any] = _attr(module, name)
        if model.stored_as == stored_as and model.owns(config):
            return model
    raise InputError(f"this tokreg cannot encode {stored_as!r} tokenizers with this config; upgrade tokreg")


@cache
def _trainers() -> tuple[Trainer, ...]:
    """The registered trainers, once each, in registration order (their modules alone)."""
    return tuple(_each_trainer())


def _each_trainer() -> Iterator[Trainer]:
    """The registered trainers in registration order, each module imported only when reached:
    a search that stops at byte-level BPE's (the first) imports no other trainer."""
    for m in dict.fromkeys(m for *_, m in _REGISTERED if m is not None):
        yield _attr(m, "TRAINER")


def trainer_for(options: TrainOptions) -> Trainer:
    """The trainer that trains with `options`."""
    for trainer in _each_trainer():
        if isinstance(options, trainer.options_type):
            return trainer
    raise InputError(f"no algorithm trains with {type(options).__name__}")


def options_type(run_name: str) -> type[TrainOptions]:
    """The training options class of the algorithm `run_name` (`--algo`)."""
    for trainer in _each_trainer():
        if trainer.options_type.run_name == run_name:
            return trainer.options_type
    raise InputError(f"no algorithm is called {run_name!r}")


def option_types() -> list[type[TrainOptions]]:
    """The training options classes, once each, in registration order."""
    return list(dict.fromkeys(t.options_type for t in _trainers()))


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
    return next((a.hf for a in _algorithms() if a.hf is not None and a.hf.reads(model_type, doc)), None)


def sentencepiece_reader(model_type: int) -> Optional[SentencePieceCodec]:
    """The codec that reads SentencePiece models of this `model_type`, if any."""
    return next(
        (
            a.sentencepiece
            for a in _algorithms()
            if a.sentencepiece is not None and a.sentencepiece.model_type == model_type
        ),
        None,
    )


def tiktoken_codec() -> TiktokenCodec:
    """The codec of tiktoken's rank files (byte-level BPE's)."""
    return next(a.tiktoken for a in _algorithms() if a.tiktoken is not None)


def vocab_txt_codec() -> VocabTxtCodec:
    """The codec of BERT's vocab.txt (WordPiece's)."""
    return next(a.vocab_txt for a in _algorithms() if a.vocab_txt is not None)


def version_json(v: VersionInfo) -> dict[str, Any]:
    """A version as JSON for people and scripts (`list --json`, `show`, the web app): its config
    as `display_config` gives it, so a normalizer's rules (hundreds of KB) appear as their rule
    name and hash. The stored config itself is in the `versions` table and in exports."""
    out = v.to_json()
    out["config"] = model_of(v.algorithm, v.config).display_config(v.config)
    return out
