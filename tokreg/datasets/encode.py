"""Documents to ids: one batch of documents through the core's batch encoder (on `threads`
threads, the GIL released), then the per-document tokens the run asks for (`--bos`, `--eos`
or the version's template) put around each document's ids, and the ids cast to the dataset's
dtype, with no Python object per id.

Two kinds of batch (`encode`): a `Frame` of whole lines of text or JSON Lines, which the core
cuts into documents, encodes and packs in the dataset's dtype in one call with the GIL released
(no Python object per document either: the hot path, src/documents/), and a `Batch` of Python
strings (Parquet rows, a whole file, an iterator's texts).

A frame's ids are packed into a bytearray taken from the encoder's `Buffers` and handed back by
whoever has used them (the writer, once they are written: `Buffers.give`), so that frame after
frame they go into pages already touched: a fresh buffer per frame cost its first touch of
every page (the kernel zeroing it, then the core writing it) in the calling thread.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Optional, Union

from ..encoding import stochastic
from ..encoding.tokenizer import Specials, Tokenizer, _rule
from ..errors import InputError
from .documents import BATCH_BYTES, Bad, Batch, Frame, LineBook, judge
from .formats import numpy
from .options import TokenizeOptions

#: Stands for the document's ids when the template is applied once to learn its two ends.
_SLOT = -1


#: A buffer larger than this (a frame with a huge document) is not kept for reuse.
KEEP = 4 * BATCH_BYTES


class Buffers:
    """Bytearrays for frames' ids, reused (see the module docstring). A buffer is made only when
    none is free, so there are never more than the frames in flight at once (the pipeline's
    bound); `give` keeps at most KEEP bytes each."""

    def __init__(self) -> None:
        self.free: deque[bytearray] = deque()  # append and pop are atomic: writer and encoder share it

    def take(self) -> bytearray:
        try:
            return self.free.pop()
        except IndexError:
            return bytearray()

    def give(self, buf: Optional[bytearray]) -> None:
        """`buf` is free again: the caller holds no view of it any more."""
        if buf is not None and len(buf) <= KEEP:
            self.free.append(buf)


@dataclass(frozen=True)
class Encoded:
    """A batch's ids in the dataset's dtype (little-endian), ids per document (int64), where
    each document ends in its input, its bad records, and its bytes of document text; `buffer`:
    the encoder's bytearray under `ids`, for `Buffers.give` once the ids are used (None: `ids`
    owns its memory)."""

    ids: Any
    lengths: Any
    ends: Any
    bad: list[Bad]
    text: int
    buffer: Optional[bytearray] = None


@dataclass(frozen=True)
class Encoder:
    tok: Tokenizer
    threads: int
    allowed: Specials
    disallowed: Specials
    prefix: tuple[int, ...]
    suffix: tuple[int, ...]
    dtype: str
    #: a seeded stochastic encoding: (dropout, seed, method), or None
    draw: Optional[tuple[float, Optional[int], Optional[str]]] = None
    #: frames' first line numbers, and the bytearrays their ids are packed into (both mutable)
    lines: LineBook = field(default_factory=LineBook, compare=False)
    buffers: Buffers = field(default_factory=Buffers, compare=False)

    @classmethod
    def of(cls, tok: Tokenizer, opts: TokenizeOptions, dtype: str, threads: int) -> Encoder:
        prefix: list[int] = []
        suffix: list[int] = []
        if opts.template:
            if tok.template is None:
                raise InputError(f"{tok.ref} has no template; use --bos/--eos to put tokens around documents")
            filled = tok.template.apply([_SLOT], None, tok.special_tokens)
            k = filled.index(_SLOT)
            prefix, suffix = filled[:k], filled[k + 1 :]
        for flag, text, where in (("--bos", opts.bos, prefix), ("--eos", opts.eos, suffix)):
            if text is not None:
                if text not in tok.special_tokens:
                    names = ", ".join(sorted(tok.special_tokens)[:6]) or "none"
                    raise InputError(f"{flag} {text!r} is not a special token of {tok.ref} (it has: {names})")
                where.append(tok.special_tokens[text])
        ids_mode = opts.specials == "ids"
        return cls(
            tok,
            threads,
            "all" if ids_mode else frozenset(),
            "all" if ids_mode else (),
            tuple(prefix),
            tuple(suffix),
            dtype,
            (opts.dropout, opts.seed, opts.method) if opts.dropout else None,
        )

    def empty(self) -> tuple[Any, Any]:
        np = numpy()
        return np.zeros(0, dtype=np.dtype(self.dtype).newbyteorder("<")), np.zeros(0, dtype=np.int64)

    def encode(self, item: Union[Batch, Frame]) -> Encoded:
        """A batch's documents encoded (see the module docstring)."""
        if isinstance(item, Batch):
            ids, lengths = self(item.texts) if item.texts else self.empty()
            return Encoded(ids, lengths, item.ends, item.bad, item.size)
        np = numpy()
        allowed, disallowed = _rule(self.allowed, self.disallowed)
        draw = None
        if self.draw is not None:
            d = stochastic.draw(self.tok._enc.kind, *self.draw)
            if d is not None:
                draw = (d.method, d.p, d.seed)
        itemsize = np.dtype(self.dtype).itemsize
        overrides: list[tuple[int, str]] = []
        first = self.lines.first(item)
        out = self.buffers.take()
        while True:
            size, lengths, ends, bad, text, lines = self.tok._enc.encode_documents(
                item.buf, item.kind, item.field, item.limit, item.skip - item.start, overrides,
                allowed, disallowed, self.threads, list(self.prefix), list(self.suffix), itemsize, out, draw,
            )  # fmt: skip
            bads, more = judge(item, bad, first)
            if not more:  # records Python's parser reads that the core's scanner leaves to it: rare
                break
            overrides = sorted(overrides + more)
        self.lines.done(item, first, lines)
        positions = np.frombuffer(ends, dtype="<i8") + item.start
        dt = np.dtype(self.dtype).newbyteorder("<")
        ids = np.frombuffer(out, dtype=dt, count=size // itemsize)
        return Encoded(ids, np.frombuffer(lengths, dtype="<i8"), positions, bads, text, out)

    def __call__(self, texts: list[str]) -> tuple[Any, Any]:
        """(ids in the dataset's dtype, little-endian; ids per document, int64)."""
        np = numpy()
        dropout, seed, method = self.draw or (0.0, None, None)
        flat = self.tok.encode_batch_flat(
            texts,
            threads=self.threads,
            allowed_special=self.allowed,
            disallowed_special=self.disallowed,
            dropout=dropout,
            seed=seed,
            method=method,
        )
        ids = np.frombuffer(flat.ids, dtype=np.uint32)
        offsets = np.frombuffer(flat.offsets, dtype=np.uint64).astype(np.int64)
        lengths = np.diff(offsets)
        dt = np.dtype(self.dtype).newbyteorder("<")
        p, s = len(self.prefix), len(self.suffix)
        if not p and not s:
            return ids.astype(dt), lengths
        n = len(texts)
        out = np.empty(len(ids) + n * (p + s), dtype=dt)
        starts = offsets[:-1] + np.arange(n, dtype=np.int64) * (p + s)  # where each document begins in `out`
        added = np.zeros(len(out), dtype=bool)  # where the added tokens go (one byte per id, not eight)
        for j, t in enumerate(self.prefix):
            out[starts + j] = t
            added[starts + j] = True
        for j, t in enumerate(self.suffix):
            out[starts + p + lengths + j] = t
            added[starts + p + lengths + j] = True
        out[~added] = ids
        return out, lengths + p + s
