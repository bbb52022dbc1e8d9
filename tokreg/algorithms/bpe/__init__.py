"""BPE, in seven flavours, each an `Algorithm` of the parts it has (bundles.py):

    BYTE_LEVEL     trained (GPT-2 style), extended; tokenizer.json and .tiktoken both ways
    CHAR_LEVEL     trained (`--char-level`, Sennrich et al.), extended; tokenizer.json both ways
    SENTENCEPIECE  imported from and written as SentencePiece `.model` files (Llama style), and
                   written as tokenizer.json where HF can hold it (hf_sentencepiece.py)
    SUPERWORD      trained (`--algo superbpe`, SuperBPE: superword_model.py, superword_training.py);
                   exported as tokreg files only
    PARITY         trained (`--algo parity-bpe`, parity-aware BPE: parity_training.py) as plain
                   byte-level versions (BYTE_LEVEL's model and codecs), with a record per language
    PICKY          trained (`--algo picky`, PickyBPE: picky_model.py, picky_training.py);
                   exported as tokreg files only
    RESIDUE_FREE   derived from byte-level BPE by `tokreg drop-residues` (residue_free_model.py,
                   versions/no_residues.py); exported as tokreg files only
    HF_PIPELINE    imported from tokenizer.json files whose HF pipeline tokreg runs step by step
                   (hf_pipe.py), and written back as they came

By job: model.py (configs, and the core encoder each compiles to), training.py (options and the
one trainer of both trained flavours), extend.py (growing a version, ids kept), hf.py,
tiktoken.py and sentencepiece.py (other tools' files).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ... import lazy

if TYPE_CHECKING:
    from .bundles import BYTE_LEVEL, CHAR_LEVEL, HF_PIPELINE, PARITY, PICKY, RESIDUE_FREE, SENTENCEPIECE, SUPERWORD
    from .parity_training import ParityOptions
    from .picky_training import PickyOptions
    from .superword_training import SuperwordOptions
    from .training import BpeOptions

#: Imported on first use (PEP 562): loading a version imports `model` alone.
_LAZY = {
    "BYTE_LEVEL": "bundles",
    "CHAR_LEVEL": "bundles",
    "HF_PIPELINE": "bundles",
    "SENTENCEPIECE": "bundles",
    "SUPERWORD": "bundles",
    "PARITY": "bundles",
    "PICKY": "bundles",
    "RESIDUE_FREE": "bundles",
    "PickyOptions": "picky_training",
    "BpeOptions": "training",
    "SuperwordOptions": "superword_training",
    "ParityOptions": "parity_training",
}

__all__ = [
    "BYTE_LEVEL",
    "BpeOptions",
    "CHAR_LEVEL",
    "HF_PIPELINE",
    "PARITY",
    "ParityOptions",
    "PICKY",
    "PickyOptions",
    "RESIDUE_FREE",
    "SENTENCEPIECE",
    "SUPERWORD",
    "SuperwordOptions",
]


__getattr__ = lazy.attributes(__name__, _LAZY, globals())
