"""BPE, in three flavours, each an `Algorithm` of the parts it has:

    BYTE_LEVEL     trained (GPT-2 style), extended; tokenizer.json and .tiktoken both ways
    CHAR_LEVEL     trained (`--char-level`, Sennrich et al.), extended; tokenizer.json both ways
    SENTENCEPIECE  imported from and written as SentencePiece `.model` files (Llama style), and
                   written as tokenizer.json where HF can hold it (hf_sentencepiece.py)
    SUPERWORD      trained (`--algo superbpe`, SuperBPE: superword_model.py, superword_training.py);
                   exported as tokreg files only
    HF_PIPELINE    imported from tokenizer.json files whose HF pipeline tokreg runs step by step
                   (hf_pipe.py), and written back as they came

By job: model.py (configs, and the core encoder each compiles to), training.py (options and the
one trainer of both trained flavours), extend.py (growing a version, ids kept), hf.py,
tiktoken.py and sentencepiece.py (other tools' files).
"""

from __future__ import annotations

from ..interfaces import Algorithm
from . import hf_pipe, model
from .extend import ByteLevelExtender, CharLevelExtender
from .hf import ByteLevelHf, CharLevelHf
from .hf_sentencepiece import SpBpeHf
from .sentencepiece import SpBpeModelFile
from .superword_model import SUPERWORD as SUPERWORD_MODEL
from .superword_model import NoHf, NoTiktoken
from .superword_training import TRAINER as SUPERWORD_TRAINER
from .superword_training import SuperwordOptions
from .tiktoken import TiktokenRanks
from .training import TRAINER, BpeOptions

BYTE_LEVEL = Algorithm(
    model.BYTE_LEVEL, trainer=TRAINER, extender=ByteLevelExtender(), hf=ByteLevelHf(), tiktoken=TiktokenRanks()
)
CHAR_LEVEL = Algorithm(model.CHAR_LEVEL, trainer=TRAINER, extender=CharLevelExtender(), hf=CharLevelHf())
SENTENCEPIECE = Algorithm(model.SENTENCEPIECE, hf=SpBpeHf(), sentencepiece=SpBpeModelFile())
HF_PIPELINE = Algorithm(hf_pipe.HF_BPE, hf=hf_pipe.HfPipelineBpeHf())
SUPERWORD = Algorithm(SUPERWORD_MODEL, trainer=SUPERWORD_TRAINER, hf=NoHf(), tiktoken=NoTiktoken())

__all__ = ["BYTE_LEVEL", "CHAR_LEVEL", "HF_PIPELINE", "SENTENCEPIECE", "SUPERWORD", "BpeOptions", "SuperwordOptions"]
