"""Unigram LM (SentencePiece style), as an `Algorithm` of the parts it has: trained, extended,
and read and written as tokenizer.json and SentencePiece `.model` files.

By job: model.py (config, and the core encoder it compiles to), training.py (options and
trainer), extend.py (growing a version, ids kept), hf.py and sentencepiece.py (other tools'
files).
"""

from __future__ import annotations

from ..interfaces import Algorithm
from . import model
from .extend import UnigramExtender
from .hf import UnigramHf
from .sentencepiece import UnigramModelFile
from .training import TRAINER, UnigramOptions

UNIGRAM = Algorithm(
    model.UNIGRAM, trainer=TRAINER, extender=UnigramExtender(), hf=UnigramHf(), sentencepiece=UnigramModelFile()
)

__all__ = ["UNIGRAM", "UnigramOptions"]
