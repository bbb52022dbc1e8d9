"""A loaded version as another library's tokenizer object: `Tokenizer.to_hf()` (a
`tokenizers.Tokenizer`) and `Tokenizer.to_transformers()` (a `transformers.PreTrainedTokenizerFast`),
both giving tokreg's ids. They are built from the same `tokenizer.json` that
`tokreg export --format hf` writes (each algorithm's HF codec), and checked the same way
(export_check.py: the check texts with every special token, compared id for id), so the same
versions can be converted and the same ones are refused (character-level BPE with an
end-of-word suffix; SentencePiece BPE), with the reason.

Neither library is a dependency of tokreg: `pip install 'tokreg[hf]'` or `'tokreg[transformers]'`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .. import algorithms
from ..data import TokenizerData
from ..errors import InputError
from . import export_check

if TYPE_CHECKING:
    from .tokenizer import Tokenizer


def _module(name: str, extra: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError:
        raise InputError(f"this needs the {name} package: pip install 'tokreg[{extra}]'") from None


def hf_json(tok: Tokenizer) -> str:
    """The version as a Hugging Face tokenizer.json string."""
    data = TokenizerData.from_content(tok.content)
    algo = algorithms.of(data.algorithm, data.config)
    if algo.hf is None:
        raise InputError(f"{tok.ref} is {algo.model.title}, which has no Hugging Face tokenizer.json form")
    return algo.hf.write(data, tok.ref).decode("utf-8")


def to_hf(tok: Tokenizer) -> Any:
    """The `tokenizers.Tokenizer` of `export --format hf`'s file, checked as that export is
    (export_check.py): refused in one line if it would give other ids than tok."""
    tokenizers = _module("tokenizers", "hf")
    hf = tokenizers.Tokenizer.from_str(hf_json(tok))
    encode, framed = export_check.hf_encoder(hf, tok)
    judge = f"tokenizers {tokenizers.__version__}"
    export_check.compare(encode, tok, judge, "its tokenizers object would not give tokreg's ids", framed=framed)
    return hf


def to_transformers(tok: Tokenizer) -> Any:
    transformers = _module("transformers", "transformers")
    hf = to_hf(tok)
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=hf)
    # transformers learns which added tokens are special from these lists (skip_special_tokens).
    specials = [s for s in tok.special_tokens if s not in fast.all_special_tokens]
    if specials:
        fast.add_special_tokens({"additional_special_tokens": specials})
    return fast
