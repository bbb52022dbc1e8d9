"""Seeded stochastic encodings: one option shape (`dropout=p`, `seed`, `method`) for every
algorithm, checked once into a frozen `Draw` that `Tokenizer.encode`/`encode_batch` and
`tokreg tokenize` hand to the core (src/encode/stochastic.rs), and that a dataset's manifest
records (`recorded()`).

Methods (`METHODS`), each citing its paper:

- ``bpe-dropout``: BPE-dropout (Provilkov et al., ACL 2020): each merge is skipped with
  probability p at every step of BPE's merge loop. BPE versions (byte- and character-level).
- ``stochastok``: StochasTok (Sims et al., arXiv 2506.01687): after the deterministic encoding,
  floor(p * n) steps each split one uniformly chosen token into two vocabulary tokens that
  concatenate to it. Any algorithm whose tokens concatenate (not WordPiece).
- ``unigram``: SentencePiece's subword regularization (Kudo, 2018): a segmentation drawn with
  probability proportional to P(segmentation)**p; p is SentencePiece's alpha (0.1 is usual;
  smaller is more random). Unigram versions.

`method=None` picks the version's own: bpe-dropout for BPE, unigram for Unigram, stochastok
otherwise. `dropout=0` is the deterministic encoding, on its usual fast path, for every method.

>>> ids = tok.encode("unbelievable", dropout=0.1, seed=7)   # the same ids for seed 7, every time
>>> tok.decode(ids)
'unbelievable'

The draw of a text depends on (seed, the text) only: not on its place in a batch, the thread
count or a dataset's sharding, so equal texts get equal draws (use one seed per epoch for fresh
ones). `decode` of a drawn encoding gives what `decode` of the plain encoding gives: the text
itself, for a lossless version.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional

from ..errors import InputError

METHODS = ("bpe-dropout", "stochastok", "unigram")
#: The paper of each method, for help texts and the manifest's readers.
PAPERS = {
    "bpe-dropout": "Provilkov et al., BPE-Dropout, ACL 2020",
    "stochastok": "Sims et al., StochasTok, arXiv 2506.01687",
    "unigram": "Kudo, Subword Regularization, ACL 2018",
}
#: The method `method=None` picks, by the core encoder's kind.
_OWN = {"byte_bpe": "bpe-dropout", "char_bpe": "bpe-dropout", "unigram": "unigram"}
#: The methods a version can draw with, by its model's name (`tokreg show`, the version page);
#: the core decides (src/encode/stochastic.rs), and tests/test_stochastic.py holds the two equal.
_METHODS_OF = {
    "byte_bpe": ("bpe-dropout", "stochastok"),
    "char_bpe": ("bpe-dropout", "stochastok"),
    "unigram": ("unigram", "stochastok"),
    "sp_bpe": ("stochastok",),
    "hf_bpe": ("stochastok",),
}


def methods(model_name: str) -> tuple[str, ...]:
    """The stochastic encodings a version of this model can draw (none for WordPiece)."""
    return _METHODS_OF.get(model_name, ())


@dataclass(frozen=True)
class Draw:
    """One stochastic encoding's options: `method`, its strength `p`, the `seed`."""

    method: str
    p: float
    seed: int

    def recorded(self) -> dict[str, Any]:
        """As a manifest records it."""
        return {"method": self.method, "p": self.p, "seed": self.seed}


def draw(kind: str, dropout: float, seed: Optional[int], method: Optional[str]) -> Optional[Draw]:
    """The checked options of a call, or None for the deterministic encoding (`dropout=0`). `kind`
    is the core encoder's kind; a method the algorithm cannot draw is refused by the core."""
    if not isinstance(dropout, (int, float)) or isinstance(dropout, bool) or not math.isfinite(dropout):
        raise InputError(f"dropout must be a number, not {dropout!r:.40}")
    if method is not None and method not in METHODS:
        raise InputError(f"method must be one of {', '.join(METHODS)}, not {method!r:.40}")
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**64):
        raise InputError(f"seed must be an int from 0 to 2**64 - 1, not {seed!r:.40}")
    if dropout == 0:
        return None
    name = method or _OWN.get(kind, "stochastok")
    if name != "unigram" and not 0 < dropout <= 1:
        raise InputError(f"{name} needs dropout (its probability p) from 0 to 1, not {dropout}")
    if name == "unigram" and dropout < 0:
        raise InputError(f"unigram sampling needs dropout (its alpha) > 0, not {dropout}")
    if seed is None:
        raise InputError(f"{name} needs a seed (any int), so that its draw can be made again")
    return Draw(name, float(dropout), seed)
