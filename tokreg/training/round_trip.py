"""What a version loses of a text, measured rather than assumed: every line (with its line
break) encoded on its own, decoded back and compared byte for byte, and the unknown tokens
among the ids counted. `tokreg train` measures each trained version on the text of its own
corpus, which `Keep` keeps while counting (all of it up to `KEEP_BYTES`, else the lines before
that); `tokreg eval` measures each version on each text the same way.

    >>> measure(tok, [b"Hello world.\\nSecond line\\n"], whole=True)
    RoundTrip(lines=2, lost_lines=2, tokens=7, unknown=2, bytes=25, whole=True, skipped=0)

(a Unigram version without byte fallback, which has no piece for a newline).

A version that encodes a line piece by piece (byte-level BPE) is measured on the distinct
pieces its corpus was counted into (`measure_pieces`): the same numbers for the whole corpus,
at the cost of its distinct pieces, and the text is not read again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Optional

from .. import _core
from ..data import RoundTrip
from .corpus.decompress import open_decompressed
from .corpus.reader import Feed
from .corpus.sources import Source

if TYPE_CHECKING:  # counting imports this module, and the encoder is needed only once trained
    from ..encoding.tokenizer import Tokenizer

#: The most corpus text kept while counting to measure the trained version on: a corpus up to
#: this size is measured whole, a larger one on its lines before it (the result says which).
KEEP_BYTES = 64 << 20


def reread(sources: Sequence[Source], limit: int = KEEP_BYTES) -> tuple[list[bytes], bool]:
    """The text `Keep` keeps of plain text files (up to `limit` bytes, cut after a line break,
    one segment per file), read from them again: for a corpus of files the text is not held in
    memory while the trainer runs, only read back after it. Each file is read in one call, so
    its segment is one block, not chunks joined (which would hold it twice)."""
    segments: list[bytes] = []
    kept = 0
    for src in sources:
        assert src.path is not None
        stream, _, kind = open_decompressed(src.path)
        with stream:
            data = stream.read(limit - kept)
            more = bool(stream.read(1))
            if more:
                cut = data.rfind(b"\n") + 1
                if not kind:  # a plain file: read the prefix again rather than copy it out of `data`
                    del data
                    stream.seek(0)
                    data = stream.read(cut)
                else:
                    data = data[:cut]
        if data:
            segments.append(data)
            kept += len(data)
        if more:
            return segments, False
    return segments, True


class Keep:
    """A counter's `Feed` that also keeps the text it passes on, up to `limit` bytes cut after
    a line break, one segment per source (a source's last line may lack its line break)."""

    def __init__(self, inner: Feed, limit: int = KEEP_BYTES) -> None:
        self.inner = inner
        self.limit = limit
        self.segments: list[bytes] = []
        self._current: list[bytes] = []
        self._kept = 0
        self.whole = True

    def feed(self, data: bytes) -> None:
        self.inner.feed(data)
        if not self.whole or not data:
            return
        room = self.limit - self._kept
        if len(data) > room:
            cut = data.rfind(b"\n", 0, room)
            data = data[: cut + 1] if cut >= 0 else b""
            self.whole = False
        if data:
            self._current.append(data)
            self._kept += len(data)

    def end_input(self) -> None:
        self.inner.end_input()
        if self._current:
            self.segments.append(b"".join(self._current))
            self._current = []

    def text(self) -> tuple[list[bytes], bool]:
        """The segments kept, and whether they are the whole corpus."""
        return self.segments + ([b"".join(self._current)] if self._current else []), self.whole


def measure(tok: Tokenizer, segments: Sequence[bytes], *, whole: bool, threads: int = 0) -> RoundTrip:
    """`tok` on the lines of `segments` (special-token strings in them taken as ordinary text),
    in the core on `threads` threads (0: one per core): no Python object per line or id, so
    measuring costs little beside training (`encode::RoundTrip`)."""
    specials = sorted(set(tok.special_tokens.values()))
    lines, lost, tokens, unknown, size, skipped = tok._enc.round_trip(list(segments), specials, tok._threads(threads))
    return RoundTrip(
        lines=lines, lost_lines=lost, tokens=tokens, unknown=unknown, bytes=size, whole=whole, skipped=skipped
    )


def measure_pieces(tok: Tokenizer, counts: _core.Counts, threads: int = 0) -> Optional[RoundTrip]:
    """`measure` of the whole text `counts` were counted from, found from its distinct pieces,
    for a version that encodes a line piece by piece (a byte-level BPE): every line comes back
    iff every piece does, and the pieces' tokens times their counts are the lines' tokens. None
    when the pieces cannot stand for the lines (see `encode::round_trip`): measure the lines."""
    specials = sorted(set(tok.special_tokens.values()))
    got = tok._enc.round_trip_pieces(counts, specials, tok._threads(threads))
    if got is None:
        return None
    lines, lost, tokens, unknown, size, skipped = got
    return RoundTrip(
        lines=lines, lost_lines=lost, tokens=tokens, unknown=unknown, bytes=size, whole=True, skipped=skipped
    )


def summary(rt: Optional[RoundTrip], by_design: Optional[str] = None) -> Optional[str]:
    """The one line `tokreg train` prints: lossless, or how much is lost (None: not measured).
    `by_design`: why the algorithm does not give every text back (`Model.lossy_by_design`), said
    beside a loss so that a loss the algorithm makes on purpose does not read as a fault."""
    if rt is None:
        return None
    where = "its corpus" if rt.whole else f"the first {rt.bytes / 1e6:,.0f} MB of its corpus"
    skipped = f"; {rt.skipped:,} lines that are not UTF-8 not measured" if rt.skipped else ""
    if rt.lossless:
        return f"lossless on {where}: all {rt.lines:,} lines decode back byte for byte{skipped}"
    lost = []
    if rt.unknown:
        lost.append(f"{_pct(rt.unknown_rate)} of its tokens are unknown ({rt.unknown:,} of {rt.tokens:,})")
    lost.append(f"{rt.lost_lines:,} of {rt.lines:,} lines ({_pct(rt.lost_rate)}) do not decode back byte for byte")
    expected = f" (expected: {by_design})" if by_design else ""
    return f"LOSSY on {where}: {', '.join(lost)}{expected}{skipped}"


def _pct(x: float) -> str:
    return f"{100 * x:.2f}%" if 0 < x < 0.01 else f"{100 * x:.1f}%"
