"""The `Algorithm` bundles of wordpiece (see this package's docstring): which parts each has. Kept out
of the package's `__init__` so that importing the model alone (to load a version) does not
import the trainer and every file codec."""

from __future__ import annotations

from ..interfaces import Algorithm
from . import hf_pipe, model
from .extend import WordPieceExtender
from .hf import WordPieceHf
from .training import TRAINER
from .vocab_txt import WordPieceVocabTxt

WORDPIECE = Algorithm(
    model.WORDPIECE, trainer=TRAINER, extender=WordPieceExtender(), hf=WordPieceHf(), vocab_txt=WordPieceVocabTxt()
)

HF_PIPELINE = Algorithm(hf_pipe.HF_WORDPIECE, hf=hf_pipe.HfPipelineWordPieceHf())

__all__ = ["HF_PIPELINE", "WORDPIECE"]
