"""The `Algorithm` bundles of BPE (see this package's docstring): which parts each has. Kept out
of the package's `__init__` so that importing the model alone (to load a version) does not
import the trainer and every file codec."""

from __future__ import annotations

from ..interfaces import Algorithm
from . import hf_pipe, model
from .extend import ByteLevelExtender, CharLevelExtender
from .hf import ByteLevelHf, CharLevelHf
from .hf_sentencepiece import SpBpeHf
from .picky_model import PICKY as PICKY_MODEL
from .picky_model import NoHf as PickyNoHf
from .picky_model import NoTiktoken as PickyNoTiktoken
from .picky_training import TRAINER as PICKY_TRAINER
from .residue_free_model import RESIDUE_FREE as RESIDUE_FREE_MODEL
from .residue_free_model import NoHf as ResidueFreeNoHf
from .residue_free_model import NoTiktoken as ResidueFreeNoTiktoken
from .sentencepiece import SpBpeModelFile
from .superword_model import SUPERWORD as SUPERWORD_MODEL
from .superword_model import NoHf, NoTiktoken
from .superword_training import TRAINER as SUPERWORD_TRAINER
from .tiktoken import TiktokenRanks
from .training import TRAINER

BYTE_LEVEL = Algorithm(
    model.BYTE_LEVEL, trainer=TRAINER, extender=ByteLevelExtender(), hf=ByteLevelHf(), tiktoken=TiktokenRanks()
)
CHAR_LEVEL = Algorithm(model.CHAR_LEVEL, trainer=TRAINER, extender=CharLevelExtender(), hf=CharLevelHf())
SENTENCEPIECE = Algorithm(model.SENTENCEPIECE, hf=SpBpeHf(), sentencepiece=SpBpeModelFile())
HF_PIPELINE = Algorithm(hf_pipe.HF_BPE, hf=hf_pipe.HfPipelineBpeHf())
SUPERWORD = Algorithm(SUPERWORD_MODEL, trainer=SUPERWORD_TRAINER, hf=NoHf(), tiktoken=NoTiktoken())
PICKY = Algorithm(PICKY_MODEL, trainer=PICKY_TRAINER, hf=PickyNoHf(), tiktoken=PickyNoTiktoken())
RESIDUE_FREE = Algorithm(RESIDUE_FREE_MODEL, hf=ResidueFreeNoHf(), tiktoken=ResidueFreeNoTiktoken())

__all__ = ["BYTE_LEVEL", "CHAR_LEVEL", "HF_PIPELINE", "PICKY", "RESIDUE_FREE", "SENTENCEPIECE", "SUPERWORD"]
