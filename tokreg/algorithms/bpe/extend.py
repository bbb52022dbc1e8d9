"""Growing a byte- or character-level BPE version, ids kept: more merges learned on a new
corpus after the base's own segmentation of each piece (`bpe::extend` in the core), and
ordinary tokens added by merges appended after the base's. A character-level version first
takes the new corpus' characters it lacks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Optional, Union

from ... import _core
from ...data import MergeRow, TokenizerData, TokenRow
from ...errors import InputError
from ..interfaces import Extender, Model
from ..options import Progress
from .model import BYTE_LEVEL, CHAR_LEVEL, ByteBpeConfig, CharBpeConfig

#: The configs of the two BPE flavours this module extends.
BpeConfig = Union[ByteBpeConfig, CharBpeConfig]


def _counting(config: BpeConfig, title: str) -> dict[str, Any]:
    if config.keep_gaps:
        raise InputError(
            f"this {title} version keeps the text between its pattern's matches as pieces (an imported "
            "Split with Isolated), which tokreg's counter does not; it cannot be extended by training"
        )
    return {"splitting": "pieces", "pattern": config.pattern, "max_piece_bytes": 0}


class ByteLevelExtender(Extender[BpeConfig]):
    """Byte-level BPE: more merges learned on the base's own segmentation. The character-level
    extender below differs only in `extend` (new characters first)."""

    model: Model[Any] = BYTE_LEVEL

    def counting(self, config: BpeConfig) -> dict[str, Any]:
        return _counting(config, self.model.title)

    def extend(
        self,
        base: TokenizerData,
        counts: _core.Counts,
        add: int,
        *,
        keep: Sequence[bytes] = (),
        threads: int = 0,
        progress: Optional[Progress] = None,
        objective: Optional[str] = None,
    ) -> TokenizerData:
        encoder = self.model.compile(base.content(), self.model.parse_config(base.config))
        return _learn(base, encoder, counts, add, list(keep), threads, progress)

    def add_tokens(self, base: TokenizerData, tokens: Sequence[str]) -> TokenizerData:
        config = self.model.parse_config(base.config)
        encoder = self.model.compile(base.content(), config)
        return add_merged_tokens(base, encoder, config.pattern, tokens, self.model.title)


class CharLevelExtender(ByteLevelExtender):
    model = CHAR_LEVEL

    def extend(
        self,
        base: TokenizerData,
        counts: _core.Counts,
        add: int,
        *,
        keep: Sequence[bytes] = (),
        threads: int = 0,
        progress: Optional[Progress] = None,
        objective: Optional[str] = None,
    ) -> TokenizerData:
        config = CHAR_LEVEL.parse_config(base.config)
        # The new corpus' characters the base lacks become tokens first (kind "char", ids after
        # the base's, by UTF-8 bytes): the most frequent ones when there are more than `add`,
        # and none that a kept text holds (they would stop being unknown there).
        known = {t.bytes.decode("utf-8") for t in base.tokens if t.kind == "char"}
        kept_chars = {ch for k in keep for ch in k.decode("utf-8", "replace")}
        freq: dict[str, int] = {}
        for piece, n in counts.items():
            for ch in piece.decode("utf-8", "replace"):
                if ch not in known and ch not in kept_chars:
                    freq[ch] = freq.get(ch, 0) + n
        chosen = sorted(sorted(freq, key=lambda ch: (-freq[ch], ch.encode("utf-8")))[:add], key=lambda ch: ch.encode())
        first = max(t.id for t in base.tokens) + 1
        with_chars = TokenizerData(
            algorithm=base.algorithm,
            config=dict(base.config),
            tokens=list(base.tokens)
            + [TokenRow(id=first + i, bytes=ch.encode("utf-8"), kind="char") for i, ch in enumerate(chosen)],
            merges=list(base.merges),
        )
        encoder = CHAR_LEVEL.compile(with_chars.content(), config)
        # A merge's result may spell a word's end with its end-of-word symbol: keep those too.
        eow = (config.end_of_word_suffix or "").encode("utf-8")
        more = add - len(chosen)
        if more == 0:
            return with_chars
        return _learn(with_chars, encoder, counts, more, [k + eow for k in keep], threads, progress)


def _learn(
    base: TokenizerData,
    encoder: _core.Encoder,
    counts: _core.Counts,
    add: int,
    keep: list[bytes],
    threads: int,
    progress: Optional[Progress],
) -> TokenizerData:
    """`base` + up to `add` merges learned on `counts` after the base's own segmentation of each
    piece (`bpe::extend` in the core): new tokens take ids from the base's highest + 1, new
    merges rank after the base's. Token counts are uses in the new corpus' segmentation."""
    out = _core.extend_bpe(encoder, counts, add, keep=keep, threads=threads, progress=progress)
    first = out.first_new
    uses = out.token_counts
    rows = [
        TokenRow(id=t.id, bytes=t.bytes, kind=t.kind, count=None if t.kind == "special" else uses[t.id], score=t.score)
        for t in base.tokens
    ]
    rows += [TokenRow(id=first + i, bytes=b, kind="merged", count=uses[first + i]) for i, b in enumerate(out.tokens)]
    start = len(base.merges)
    merges = list(base.merges) + [
        MergeRow(rank=start + k, left=a, right=b, result=z, count=c) for k, (a, b, z, c) in enumerate(out.merges)
    ]
    return TokenizerData(algorithm=base.algorithm, config=dict(base.config), tokens=rows, merges=merges)


def add_merged_tokens(
    base: TokenizerData, encoder: _core.Encoder, pattern: str, tokens: Sequence[str], what: str
) -> TokenizerData:
    """`base` + each of `tokens` as an ordinary token, built by merges appended after the base's:
    the token's base encoding joined left to right (`a b c` -> `ab`, then `ab c` -> `abc`), with
    each intermediate that is not yet a token added too. So encoding the token's own text gives
    its id. A token the pattern would cut into several pieces can never be one token: refused."""
    rows = list(base.tokens)
    merges = list(base.merges)
    by_bytes = {t.bytes: t.id for t in rows if t.kind != "special"}
    next_id = max(t.id for t in rows) + 1
    for text in tokens:
        if not text:
            raise InputError("an added token must not be empty")
        raw = text.encode("utf-8")
        if raw in by_bytes:
            raise InputError(f"{text!r} is already token {by_bytes[raw]} of {what}; nothing was written")
        counter = _core.Counter.pieces(pattern)
        counter.feed(raw)
        counter.end_input()
        pieces = counter.finish().items()
        if pieces != [(raw, 1)]:
            raise InputError(
                f"{text!r} is cut into several pieces by {what}'s pattern, so no merge can make it one token; "
                "add it with --special"
            )
        ids = encoder.encode_ordinary(text)
        cur = ids[0]
        for nxt in ids[1:]:
            joined = rows_bytes(rows, cur) + rows_bytes(rows, nxt)
            made = by_bytes.get(joined)
            if made is None:
                made = next_id
                next_id += 1
                rows.append(TokenRow(id=made, bytes=joined, kind="merged"))
                by_bytes[joined] = made
            merges.append(MergeRow(rank=len(merges), left=cur, right=nxt, result=made))
            cur = made
    rows.sort(key=lambda t: t.id)
    return TokenizerData(algorithm=base.algorithm, config=dict(base.config), tokens=rows, merges=merges)


def rows_bytes(rows: Sequence[TokenRow], token_id: int) -> bytes:
    """The bytes of `token_id` in `rows` (in id order, possibly with gaps)."""
    if token_id < len(rows) and rows[token_id].id == token_id:
        return rows[token_id].bytes
    for t in rows:
        if t.id == token_id:
            return t.bytes
    raise InputError(f"token {token_id} is missing; the version is damaged")
