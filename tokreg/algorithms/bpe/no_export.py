"""The file codecs of a BPE flavour that tokenizer.json and .tiktoken cannot express (superword
BPE, PickyBPE, residue-free BPE): reading never claims a file, writing refuses in one line, the
flavour saying why (`refusal(ref or file, format name)`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Callable

from ...data import TokenizerData
from ...errors import InputError
from ..interfaces import HfCodec, TiktokenCodec

Refusal = Callable[[str, str], InputError]


class NoHf(HfCodec):
    """tokenizer.json: refused in one line."""

    writes = False

    def __init__(self, refusal: Refusal):
        self.refusal = refusal

    def reads(self, model_type: str, doc: Mapping[str, Any]) -> bool:
        return False

    def read(self, doc: Mapping[str, Any], model: Mapping[str, Any], where: str) -> TokenizerData:
        raise self.refusal(where, "tokenizer.json")

    def write(self, data: TokenizerData, ref: str) -> bytes:
        raise self.refusal(ref, "tokenizer.json")


class NoTiktoken(TiktokenCodec):
    """.tiktoken: refused in one line."""

    writes = False

    def __init__(self, refusal: Refusal):
        self.refusal = refusal

    def read(
        self, ranks: dict[bytes, int], where: str, *, pattern: str, specials: dict[str, int] | None = None
    ) -> TokenizerData:
        raise self.refusal(where, ".tiktoken")

    def write(self, data: TokenizerData, ref: str) -> bytes:
        raise self.refusal(ref, ".tiktoken")
