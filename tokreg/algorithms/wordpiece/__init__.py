"""WordPiece (BERT), as an `Algorithm` of the parts it has: trained, extended, read and written
as tokenizer.json, and read from a bare vocab.txt.

By job: model.py (config, and the core encoder it compiles to), training.py (options and
trainer), extend.py (growing a version, ids kept), hf.py and vocab_txt.py (other tools' files).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ... import lazy

if TYPE_CHECKING:
    from .bundles import HF_PIPELINE, WORDPIECE
    from .training import WordPieceOptions

#: Imported on first use (PEP 562): loading a version imports `model` alone.
_LAZY = {
    "HF_PIPELINE": "bundles",
    "WORDPIECE": "bundles",
    "WordPieceOptions": "training",
}

__all__ = ["HF_PIPELINE", "WORDPIECE", "WordPieceOptions"]


__getattr__ = lazy.attributes(__name__, _LAZY, globals())
