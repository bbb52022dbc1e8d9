"""Training BPE, both trained flavours with one trainer: byte-level (GPT-2 style, 256 byte
tokens) unless `--char-level` (classic character-level, with an optional end-of-word suffix,
Sennrich et al.). Counting (by the pieces of the pattern) and merging (`bpe::train_counts`)
run in the Rust core; the options say which flavour's config each version gets.

Token ids: the base alphabet first (bytes 0..255 by value; or the corpus' characters sorted by
their UTF-8 bytes), then merge results in the order they were learned, then special tokens.
`vocab_size` counts all of them.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any, Optional

from ... import _core, patterns
from ...content import U32_CODE
from ...data import MergeRow, Rows, TokenizerData, TokenRow
from ...errors import InputError, VocabularySizeError
from ..interfaces import Trainer
from ..options import Progress, TrainOptions, below_alphabet, flag
from .model import ByteBpeConfig, CharBpeConfig

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


def sized_datas(
    out: _core.BpeTrained,
    base_kind: str,
    specials: Sequence[str],
    config: dict[str, Any],
    merges: Sequence[MergeRow],
) -> list[TokenizerData]:
    """One TokenizerData per snapshot of a trained run: its tokens (the alphabet as `base_kind`,
    then merged ones, with their counts at that size, then `specials`) and its first merges.
    The tokens are `Rows` over the core's columns: no row object is made on the way to the store."""
    datas = []
    tokens = out.tokens  # a getter: each read converts the core's list anew
    n_base = out.alphabet_size
    extra = [s.encode("utf-8") for s in specials]
    for n_tokens, n_merges, counts_at in out.snapshots:
        kinds = [base_kind] * min(n_base, n_tokens) + ["merged"] * max(0, n_tokens - n_base) + ["special"] * len(extra)
        columns = {
            "id": range(n_tokens + len(extra)),
            "bytes": tokens[:n_tokens] + extra,
            "kind": kinds,
            "count": counts_at[:n_tokens] + [None] * len(extra),
        }
        rows = Rows(TokenRow, columns)
        datas.append(TokenizerData(algorithm="bpe", config=dict(config), tokens=rows, merges=merges[:n_merges]))
    return datas


def merge_rows(learned: Sequence[tuple[int, int, int, int]], **more: Sequence[Any]) -> Rows[MergeRow]:
    """The core's merges ((left, right, result, count) in rank order) as `Rows`, with `more`
    columns (e.g. superword BPE's `stage`). The ids and counts are kept as arrays (4 and 8
    bytes each), as `learned_rows` keeps them."""
    left, right, result = (array(U32_CODE, map(itemgetter(k), learned)) for k in range(3))
    count = array("Q", map(itemgetter(3), learned))
    columns: dict[str, Sequence[Any]] = {"rank": range(len(left)), "left": left, "right": right, "result": result}
    columns.update(count=count, **more)
    fields = ("rank", "left", "right", "result", "count", "score", "left_count", "right_count", "stage")
    if "stage" in columns:  # the row's fields are positional: every one up to the last given
        columns = {f: columns.get(f) or [None] * len(left) for f in fields}
    return Rows(MergeRow, columns)


def learned_rows(out: _core.BpeTrained) -> Rows[MergeRow]:
    """`merge_rows` of a run's merges, read from the core's columns (`merge_columns`) into
    arrays: no tuple or int object per merge is made (for 32k merges, `merges` made ~6 MB of
    them and ~10 ms of CPU)."""
    columns = []
    for raw, code in zip(out.merge_columns, (U32_CODE, U32_CODE, U32_CODE, "Q")):
        values = array(code)
        values.frombytes(raw)  # little-endian
        if sys.byteorder == "big":
            values.byteswap()
        columns.append(values)
    left, right, result, count = columns
    return Rows(MergeRow, {"rank": range(len(left)), "left": left, "right": right, "result": result, "count": count})


def trained_result(
    out: _core.BpeTrained, base_kind: str, specials: Sequence[str], config: dict[str, Any], pattern_name: str
) -> tuple[list[TokenizerData], dict[str, Any]]:
    """What `Trainer.train_counts` returns for a run of the core's BPE merge loop (plain or
    parity-aware): one TokenizerData per size (`sized_datas`), its merges with their counts,
    and what the run records of the training."""
    datas = sized_datas(out, base_kind, specials, config, learned_rows(out))
    info = {
        "train_seconds": out.merge_seconds,
        "distinct_pieces": out.distinct_pieces,
        "extra_config": {"pattern_name": pattern_name},
    }
    return datas, info


class BpeTrainer(Trainer):
    options_type = BpeOptions

    def check(self, options: TrainOptions, sizes: Sequence[int]) -> None:
        assert isinstance(options, BpeOptions)
        opts = options
        opts.check_common()
        if opts.end_of_word_suffix is not None and not opts.char_level:
            raise InputError("--end-of-word-suffix applies to character-level BPE; add --char-level")
        specials = _specials(opts)
        base = 0 if opts.char_level else 256
        smallest = min(sizes)
        if smallest < base + len(specials) + (1 if opts.char_level else 0):
            if opts.char_level:
                raise InputError(f"--vocab-size {smallest} is too small for character-level BPE")
            raise below_alphabet(
                smallest,
                f"byte-level BPE needs at least {base + len(specials)} (256 bytes + {len(specials)} special tokens)",
            )

    def counting(self, options: TrainOptions) -> dict[str, Any]:
        """The pieces of the pattern."""
        assert isinstance(options, BpeOptions)
        _, regex = patterns.resolve(options.pattern_or_default())
        return {"splitting": "pieces", "pattern": regex, "max_piece_bytes": options.max_piece_bytes}

    def utf8_hint(self, options: TrainOptions) -> Optional[str]:
        assert isinstance(options, BpeOptions)
        if not options.char_level:
            return None
        return "character-level BPE needs UTF-8 text (convert the file, or drop --char-level to train byte-level)"

    def encodes_by_pieces(self, options: TrainOptions) -> bool:
        """Byte-level: a line is encoded piece by piece, as the pattern cuts it (unless the
        counter also cut long pieces, which encoding does not)."""
        assert isinstance(options, BpeOptions)
        return not options.char_level and options.max_piece_bytes == 0

    def train_counts(
        self, counts: _core.Counts, options: TrainOptions, sizes: Sequence[int], progress: Optional[Progress] = None
    ) -> tuple[list[TokenizerData], dict[str, Any]]:
        """One TokenizerData per size (ascending; each a prefix of the next one's merges), and
        what the run records of the training itself."""
        assert isinstance(options, BpeOptions)
        opts = options
        specials = _specials(opts)
        try:
            out = _core.train_bpe(
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
            raise below_alphabet(
                e.requested + len(specials),
                f"the corpus has {e.needed:,} {symbols} (+ {len(specials)} special tokens)",
                f"raise --vocab-size to at least {(e.needed or 0) + len(specials):,}",
            ) from None
        pattern_name, regex = patterns.resolve(opts.pattern_or_default())
        config = (
            CharBpeConfig(regex, opts.end_of_word_suffix, CHAR_LEVEL_UNK) if opts.char_level else ByteBpeConfig(regex)
        ).to_json()
        return trained_result(out, "char" if opts.char_level else "byte", specials, config, pattern_name)


TRAINER = BpeTrainer()
