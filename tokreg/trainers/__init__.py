"""Trainers: corpus + options -> `TokenizerData`. One module per algorithm; `train` dispatches
on the options' type, `options_from_json` rebuilds options from a recorded run."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, Optional, Union

from ..errors import InputError
from ..result import TokenizerData
from .bpe import BpeOptions, train_bpe
from .common import Progress
from .unigram import UnigramOptions, train_unigram
from .wordpiece import WordPieceOptions, train_wordpiece

Options = Union[BpeOptions, WordPieceOptions, UnigramOptions]

__all__ = ["BpeOptions", "WordPieceOptions", "UnigramOptions", "Options", "train", "options_from_json"]


def train(
    files: Sequence[str | os.PathLike[str]], options: Options, progress: Optional[Progress] = None
) -> TokenizerData:
    """Trains with the algorithm the options belong to; nothing is written."""
    if isinstance(options, BpeOptions):
        return train_bpe(files, options, progress)
    if isinstance(options, WordPieceOptions):
        return train_wordpiece(files, options, progress)
    if isinstance(options, UnigramOptions):
        return train_unigram(files, options, progress)
    raise InputError(f"unknown training options {type(options).__name__}")


def options_from_json(config: dict[str, Any]) -> Options:
    """The options of a recorded run (`training_runs.config`)."""
    d = dict(config)
    algorithm = d.pop("algorithm", "bpe")
    if algorithm == "bpe":
        d.pop("pattern_name", None)
        return BpeOptions.from_json(d)
    if algorithm == "wordpiece":
        return WordPieceOptions.from_json(d)
    if algorithm == "unigram":
        return UnigramOptions.from_json(d)
    raise InputError(f"cannot rebuild options of a {algorithm!r} run")
