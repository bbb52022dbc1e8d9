"""`StreamDecoder`: text from token ids that arrive one at a time (a model generating), for every
algorithm.

    >>> dec = tok.decoder()
    >>> [dec.step(i) for i in tok.encode("naïve €")] + [dec.finish()]
    ['na', '', 'ïve', ' ', '', '', '€', '']

`step(id)` returns the text that id completes: the bytes of a character split over several
tokens (byte-level BPE, SentencePiece byte fallback) are held back until the character is whole,
and bytes that can never form a character become U+FFFD as soon as that is known. So the steps of
any id sequence followed by `finish()` concatenate to `tok.decode(ids)` (errors="replace"). Each
step costs two decodes of one or two ids (the core's `StreamDecoder`), whatever came before.
"""

from __future__ import annotations

from .. import _core
from ..errors import InputError


class StreamDecoder:
    """A streaming decoder of one tokenizer; make one per generated sequence (`Tokenizer.decoder()`)."""

    def __init__(self, decoder: _core.Decoder, ref: str):
        self._dec = decoder
        self._ref = ref

    def step(self, token_id: int) -> str:
        """The text `token_id` completes ('' while a character is incomplete)."""
        numpy_int = type(token_id).__name__.startswith(("int", "uint")) and hasattr(token_id, "__index__")
        if (not isinstance(token_id, int) or isinstance(token_id, bool)) and not numpy_int:
            raise InputError(f"a token id must be an int, not {type(token_id).__name__}")
        try:
            return self._dec.step(int(token_id))
        except InputError as e:
            raise InputError(f"cannot decode with {self._ref}: {e}") from None

    def finish(self) -> str:
        """The text still held back, an incomplete last character as U+FFFD; the decoder then
        starts a new line of text where it left off."""
        return self._dec.finish()

    @property
    def pending(self) -> bytes:
        """The bytes held back, waiting for the rest of their character."""
        return self._dec.pending
