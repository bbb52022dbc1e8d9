"""Unigram LM (SentencePiece style), as an `Algorithm` of the parts it has: trained, extended,
and read and written as tokenizer.json and SentencePiece `.model` files.

By job: model.py (config, and the core encoder it compiles to), training.py (options and
trainer), extend.py (growing a version, ids kept), hf.py and sentencepiece.py (other tools'
files).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ... import lazy

if TYPE_CHECKING:
    from .bundles import UNIGRAM
    from .training import UnigramOptions

#: Imported on first use (PEP 562): loading a version imports `model` alone.
_LAZY = {
    "UNIGRAM": "bundles",
    "UnigramOptions": "training",
}

__all__ = ["UNIGRAM", "UnigramOptions"]


__getattr__ = lazy.attributes(__name__, _LAZY, globals())
