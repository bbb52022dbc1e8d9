"""The `Algorithm` bundles of BPE (see this package's docstring): which parts each has. Kept out
of the package's `__init__` so that importing the model alone (to load a version) does not
import the trainer and every file codec."""

from __future__ import annotations

from ..interfaces import Algorithm
from . import hf_pipe, model, sp_model
from .extend import ByteLevelExtender, CharLevelExtender
from .hf import ByteLevelHf, CharLevelHf
from .hf_sentencepiece import SpBpeHf
from .no_export import NoHf, NoTiktoken
from .parity_training import TRAINER as PARITY_TRAINER
from .picky_model import PICKY as PICKY_MODEL
from .picky_model import refusal as picky_refusal
from .picky_training import TRAINER as PICKY_TRAINER
from .residue_free_model import RESIDUE_FREE as RESIDUE_FREE_MODEL
from .residue_free_model import refusal as residue_free_refusal
from .sentencepiece import SpBpeModelFile
from .superword_model import SUPERWORD as SUPERWORD_MODEL
from .superword_model import refusal as superword_refusal
from .superword_training import TRAINER as SUPERWORD_TRAINER
from .tiktoken import TiktokenRanks
from .training import TRAINER

BYTE_LEVEL = Algorithm(
    model.BYTE_LEVEL, trainer=TRAINER, extender=ByteLevelExtender(), hf=ByteLevelHf(), tiktoken=TiktokenRanks()
)
CHAR_LEVEL = Algorithm(model.CHAR_LEVEL, trainer=TRAINER, extender=CharLevelExtender(), hf=CharLevelHf())
SENTENCEPIECE = Algorithm(sp_model.SENTENCEPIECE, hf=SpBpeHf(), sentencepiece=SpBpeModelFile())
HF_PIPELINE = Algorithm(hf_pipe.HF_BPE, hf=hf_pipe.HfPipelineBpeHf())
# Parity-aware BPE trains plain byte-level versions: byte-level BPE's model and codecs, its own trainer.
PARITY = Algorithm(model.BYTE_LEVEL, trainer=PARITY_TRAINER, hf=ByteLevelHf(), tiktoken=TiktokenRanks())
SUPERWORD = Algorithm(
    SUPERWORD_MODEL, trainer=SUPERWORD_TRAINER, hf=NoHf(superword_refusal), tiktoken=NoTiktoken(superword_refusal)
)
PICKY = Algorithm(PICKY_MODEL, trainer=PICKY_TRAINER, hf=NoHf(picky_refusal), tiktoken=NoTiktoken(picky_refusal))
RESIDUE_FREE = Algorithm(RESIDUE_FREE_MODEL, hf=NoHf(residue_free_refusal), tiktoken=NoTiktoken(residue_free_refusal))

__all__ = ["BYTE_LEVEL", "CHAR_LEVEL", "HF_PIPELINE", "PARITY", "PICKY", "RESIDUE_FREE", "SENTENCEPIECE", "SUPERWORD"]
