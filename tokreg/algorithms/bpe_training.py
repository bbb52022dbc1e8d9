"""Training BPE, shared by its two flavours: byte-level (GPT-2 style, 256 byte tokens; module
byte_bpe) and classic character-level with an optional end-of-word suffix (Sennrich et al.;
module char_bpe). Counting (`training/counting_local.py`, by the pieces of the pattern) and merging
(`bpe::train_counts`) run in the Rust core.

Token ids: the base alphabet first (bytes 0..255 by value; or the corpus' characters sorted by
their UTF-8 bytes), then merge results in the order they were learned, then special tokens.
`vocab_size` counts all of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Optional

from .. import _core, patterns
from ..data import MergeRow, TokenizerData, TokenRow
from ..errors import InputError, VocabularySizeError
from .training import Progress, TrainOptions, flag

#: The unknown token every character-level version carries, for characters never seen in training.
CHAR_LEVEL_UNK = "<unk>"


@dataclass(frozen=True)
class BpeOptions(TrainOptions):
    """Options of a BPE training run (`--algo bpe`), byte-level unless `char_level`."""

    run_name = "bpe"

    vocab_size: int
    pattern: str = flag(
        "",
        metavar="NAME|REGEX",
        help="Pre-tokenizer: gpt2, cl100k, o200k, whitespace, or a regex "
        "[default: cl100k; whitespace with --char-level].",
    )
    char_level: bool = flag(False, help="Classic BPE over characters instead of bytes.")
    end_of_word_suffix: Optional[str] = flag(
        None, metavar="S", help="End-of-word symbol for --char-level, e.g. '</w>'."
    )
    max_token_length: int = flag(0, metavar="N", help="Never learn a token longer than N bytes (0: no limit).")
    min_frequency: int = 0
    special: tuple[str, ...] = ()
    template: Optional[str] = None  # "[CLS] $A [SEP]": what add_special_tokens=True adds (template.py)
    threads: int = 0  # 0 = one per core; never changes the result
    memory_limit: Optional[int] = None  # bytes; None: the machine's default (training/budget.py)
    max_piece_bytes: int = 0  # pieces longer than this are cut when counting (0: no limit)
    sample_bytes: int = 0  # read only about this many bytes of text (0: all)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> BpeOptions:
        d = {k: v for k, v in d.items() if k != "pattern_name"}  # recorded beside the options, derived
        return super().from_json(d)

    def pattern_or_default(self) -> str:
        return self.pattern or ("whitespace" if self.char_level else "cl100k")


def _specials(opts: BpeOptions) -> list[str]:
    wanted = ([CHAR_LEVEL_UNK] if opts.char_level else []) + list(opts.special)
    return list(dict.fromkeys(wanted))


def check(opts: BpeOptions, sizes: Sequence[int]) -> None:
    """The checks made before reading the corpus."""
    opts.check_common()
    if opts.end_of_word_suffix is not None and not opts.char_level:
        raise InputError("--end-of-word-suffix applies to character-level BPE; add --char-level")
    specials = _specials(opts)
    base = 0 if opts.char_level else 256
    smallest = min(sizes)
    if smallest < base + len(specials) + (1 if opts.char_level else 0):
        raise InputError(
            f"--vocab-size {smallest} is smaller than the base alphabet: byte-level BPE needs at least "
            f"{base + len(specials)} (256 bytes + {len(specials)} special tokens)"
            if not opts.char_level
            else f"--vocab-size {smallest} is too small for character-level BPE"
        )


def counting(opts: BpeOptions) -> dict[str, Any]:
    """How BPE counts a corpus: the pieces of its pattern (see training/counting_local.py)."""
    _, regex = patterns.resolve(opts.pattern_or_default())
    return {"splitting": "pieces", "pattern": regex, "max_piece_bytes": opts.max_piece_bytes}


def train_counts(
    counts: _core.Counts, opts: BpeOptions, sizes: Sequence[int], progress: Optional[Progress]
) -> tuple[list[TokenizerData], dict[str, Any]]:
    """One TokenizerData per size (ascending; each a prefix of the next one's merges), and what
    the run records of the training itself. The caller (byte_bpe or char_bpe) sets the config."""
    specials = _specials(opts)
    try:
        out: dict[str, Any] = _core.train_bpe(
            counts,
            max(sizes) - len(specials),
            min_frequency=opts.min_frequency,
            char_level=opts.char_level,
            end_of_word=opts.end_of_word_suffix,
            max_token_bytes=opts.max_token_length,
            snapshots=[s - len(specials) for s in sizes],
            threads=opts.threads,
            progress=progress,
        )
    except VocabularySizeError as e:
        symbols = "characters" if opts.char_level else "bytes"
        raise InputError(
            f"--vocab-size {e.requested + len(specials)} is smaller than the base alphabet: the corpus has "
            f"{e.needed:,} {symbols} (+ {len(specials)} special tokens); raise --vocab-size to at least "
            f"{(e.needed or 0) + len(specials):,}"
        ) from None
    tokens: list[bytes] = out["tokens"]
    n_base = out["alphabet_size"]
    base_kind = "char" if opts.char_level else "byte"
    merges = [MergeRow(rank=r, left=a, right=b, result=z, count=c) for r, (a, b, z, c) in enumerate(out["merges"])]
    datas = []
    for n_tokens, n_merges, counts_at in out["snapshots"]:
        rows = [
            TokenRow(id=i, bytes=tokens[i], kind=base_kind if i < n_base else "merged", count=counts_at[i])
            for i in range(n_tokens)
        ]
        for s in specials:
            rows.append(TokenRow(id=len(rows), bytes=s.encode("utf-8"), kind="special"))
        datas.append(TokenizerData(algorithm="bpe", config={}, tokens=rows, merges=merges[:n_merges]))
    info = {
        "train_seconds": out["merge_seconds"],
        "distinct_pieces": out["distinct_pieces"],
        "extra_config": {"pattern_name": patterns.resolve(opts.pattern_or_default())[0]},
    }
    return datas, info


def extend(
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
    out: dict[str, Any] = _core.extend_bpe(encoder, counts, add, keep=keep, threads=threads, progress=progress)
    first: int = out["first_new"]
    uses: list[int] = out["token_counts"]
    rows = [
        TokenRow(id=t.id, bytes=t.bytes, kind=t.kind, count=None if t.kind == "special" else uses[t.id], score=t.score)
        for t in base.tokens
    ]
    rows += [TokenRow(id=first + i, bytes=b, kind="merged", count=uses[first + i]) for i, b in enumerate(out["tokens"])]
    start = len(base.merges)
    merges = list(base.merges) + [
        MergeRow(rank=start + k, left=a, right=b, result=z, count=c) for k, (a, b, z, c) in enumerate(out["merges"])
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
