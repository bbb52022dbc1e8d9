"""WordPiece (BERT), as an `Algorithm` of the parts it has: trained, extended, read and written
as tokenizer.json, and read from a bare vocab.txt.

By job: model.py (config, and the core encoder it compiles to), training.py (options and
trainer), extend.py (growing a version, ids kept), hf.py and vocab_txt.py (other tools' files).
"""

from __future__ import annotations

from ..interfaces import Algorithm
from . import hf_pipe, model
from .extend import WordPieceExtender
from .hf import WordPieceHf
from .training import TRAINER, WordPieceOptions
from .vocab_txt import WordPieceVocabTxt

WORDPIECE = Algorithm(
    model.WORDPIECE, trainer=TRAINER, extender=WordPieceExtender(), hf=WordPieceHf(), vocab_txt=WordPieceVocabTxt()
)

HF_PIPELINE = Algorithm(hf_pipe.HF_WORDPIECE, hf=hf_pipe.HfPipelineWordPieceHf())

__all__ = ["HF_PIPELINE", "WORDPIECE", "WordPieceOptions"]
