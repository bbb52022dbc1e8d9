"""`FlatIds`: the ids of a batch of texts in two flat buffers, with no Python object per id.

`Tokenizer.encode_batch_flat(texts)` returns one; `ids` is a memoryview of native-endian uint32
(every text's ids one after another), `offsets` a memoryview of uint64 with one entry more than
there are texts: text k is `ids[offsets[k]:offsets[k + 1]]`. Both support the buffer protocol, so
`numpy.frombuffer(flat.ids, dtype=numpy.uint32)` or `torch.frombuffer(...)` wrap them without a
copy. `Tokenizer.encode_batch(texts, as_numpy=True)` gives one numpy array per text (views of one
buffer); numpy is needed only for that, and is not a dependency of tokreg.
"""

from __future__ import annotations

from typing import Any

from ..errors import InputError


class FlatIds:
    """Flat batch output: `ids` (uint32) and `offsets` (uint64, len(texts) + 1)."""

    def __init__(self, ids: bytes, offsets: bytes):
        self.ids = memoryview(ids).cast("I")
        self.offsets = memoryview(offsets).cast("Q")

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, k: int) -> list[int]:
        """The ids of text `k`, as a list."""
        if not isinstance(k, int) or not -len(self) <= k < len(self):
            raise IndexError(f"text index {k!r} out of range for {len(self)} texts")
        k %= len(self)
        return self.ids[self.offsets[k] : self.offsets[k + 1]].tolist()

    @property
    def lengths(self) -> list[int]:
        """The number of ids of each text."""
        o = self.offsets
        return [o[k + 1] - o[k] for k in range(len(self))]

    def to_numpy(self) -> tuple[Any, Any]:
        """(ids, offsets) as numpy arrays sharing these buffers (numpy must be installed)."""
        np = numpy()
        return np.frombuffer(self.ids, dtype=np.uint32), np.frombuffer(self.offsets, dtype=np.uint64)

    def split_numpy(self) -> list[Any]:
        """One numpy uint32 array per text, each a view of the one buffer."""
        ids, offsets = self.to_numpy()
        return [ids[offsets[k] : offsets[k + 1]] for k in range(len(self))]


def numpy() -> Any:
    """The numpy module, or one line saying how to get it."""
    try:
        # Imported here, not at the top: numpy is optional and only `as_numpy` needs it.
        import numpy as np
    except ImportError:
        raise InputError(
            "as_numpy=True needs numpy (pip install numpy); encode_batch_flat() gives the same ids as "
            "buffers without it"
        ) from None
    return np
