"""The `Algorithm` bundles of unigram (see this package's docstring): which parts each has. Kept out
of the package's `__init__` so that importing the model alone (to load a version) does not
import the trainer and every file codec."""

from __future__ import annotations

from ..interfaces import Algorithm
from . import model
from .extend import UnigramExtender
from .hf import UnigramHf
from .sentencepiece import UnigramModelFile
from .training import TRAINER

UNIGRAM = Algorithm(
    model.UNIGRAM, trainer=TRAINER, extender=UnigramExtender(), hf=UnigramHf(), sentencepiece=UnigramModelFile()
)

__all__ = ["UNIGRAM"]
