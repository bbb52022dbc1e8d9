"""Type stub for the Rust extension `tokreg._core` (src/py.rs). Kept true by mypy.stubtest.

Every function and method raises `tokreg.errors.InputError` for input the core cannot use (a bad
pattern, unusable content or vocabulary, an unknown token id, an operation the algorithm does not
have, a vocabulary size out of reach) and `tokreg.errors.Interrupted` when a training run is told
to stop; an exception raised by a `progress` callback (e.g. `KeyboardInterrupt` on Ctrl-C) is
re-raised unchanged. A `str` holding a lone surrogate raises `UnicodeEncodeError`.
"""

from collections.abc import Sequence
from typing import Any, Callable, Optional, final

from typing_extensions import Buffer

__all__ = [
    "PATTERNS",
    "check_pattern",
    "say_and_exit_on_bus_error",
    "map_large_blocks_in_training",
    "count_byte",
    "content_header",
    "content_records",
    "content_rows",
    "merges_from_ranks",
    "tokreg_file_members",
    "tokreg_file_rows",
    "train_bpe",
    "extend_bpe",
    "train_superword",
    "train_parity",
    "train_picky",
    "train_wordpiece",
    "extend_wordpiece",
    "train_unigram",
    "Counter",
    "Counts",
    "CountStats",
    "BpeTrained",
    "BpeExtended",
    "WordPieceTrained",
    "WordPieceExtended",
    "UnigramTrained",
    "Encoder",
    "Decoder",
]

PATTERNS: dict[str, str]

def count_byte(data: Buffer, b: int) -> int: ...
def check_pattern(pattern: str) -> str: ...
def say_and_exit_on_bus_error(line: bytes, status: int) -> None: ...
def map_large_blocks_in_training() -> None: ...
def content_header(content: bytes) -> str: ...
def content_records(
    ids: Sequence[int], kinds: Sequence[str], raws: Sequence[bytes], scores: Sequence[Optional[float]]
) -> tuple[int, bytes]: ...
def content_rows(
    content: bytes,
) -> tuple[list[tuple[int, str, bytes, Optional[float]]], list[tuple[int, int, int]]]: ...
def tokreg_file_members(raw: bytes) -> list[tuple[str, int, int]]: ...
def tokreg_file_rows(raw: bytes, tokens: tuple[int, int], merges: tuple[int, int]) -> tuple[int, bytes, int, bytes]: ...
def merges_from_ranks(tokens: list[tuple[int, bytes]]) -> list[tuple[int, int, int]]: ...
def train_bpe(
    counts: Counts,
    max_tokens: int,
    min_frequency: int = 0,
    char_level: bool = False,
    end_of_word: Optional[str] = None,
    max_token_bytes: int = 0,
    snapshots: list[int] = ...,
    threads: int = 0,
    progress: Optional[Callable[[str, int, int], Any]] = None,
) -> BpeTrained: ...
def train_superword(
    counts: Counts,
    pattern: str,
    max_tokens: int,
    transition: int,
    min_frequency: int = 0,
    max_token_bytes: int = 0,
    snapshots: list[int] = ...,
    threads: int = 0,
    progress: Optional[Callable[[str, int, int], Any]] = None,
) -> tuple[BpeTrained, int, int, int]: ...
def train_parity(
    train: list[Counts],
    dev: list[Counts],
    max_tokens: int,
    min_frequency: int = 0,
    max_token_bytes: int = 0,
    snapshots: list[int] = ...,
    global_merges: int = 0,
    window: int = 0,
    alpha: int = 2,
    progress: Optional[Callable[[str, int, int], Any]] = None,
) -> tuple[
    BpeTrained,
    tuple[list[Optional[int]], list[int], list[int], list[int], list[tuple[list[int], list[int]]]],
]: ...
def train_picky(
    counts: Counts,
    max_tokens: int,
    threshold: float,
    min_frequency: int = 0,
    max_token_bytes: int = 0,
    residue_below: float = 0.0,
    residue_min_seen: int = 0,
    residue_cost: float = 1.0,
    progress: Optional[Callable[[str, int, int], Any]] = None,
) -> tuple[
    list[bytes],
    list[bool],
    list[int],
    list[tuple[int, int, int, int]],
    list[tuple[int, int, Optional[float], int, float]],
    float,
]: ...
def extend_bpe(
    base: Encoder,
    counts: Counts,
    max_new: int,
    min_frequency: int = 0,
    max_token_bytes: int = 0,
    keep: list[bytes] = ...,
    threads: int = 0,
    progress: Optional[Callable[[str, int, int], Any]] = None,
    retired: list[int] = ...,
    refused: list[bytes] = ...,
) -> BpeExtended: ...
def extend_wordpiece(
    base: list[str],
    counts: Counts,
    max_new: int,
    continuing_prefix: str = "##",
    max_chars: int = 100,
    min_frequency: int = 0,
    keep: list[str] = ...,
    threads: int = 0,
    progress: Optional[Callable[[str, int, int], Any]] = None,
    objective: str = "ratio",
) -> WordPieceExtended: ...
def train_wordpiece(
    counts: Counts,
    vocab_size: int,
    special_tokens: list[str],
    continuing_prefix: str = "##",
    min_frequency: int = 0,
    limit_alphabet: Optional[int] = None,
    max_token_len: Optional[int] = None,
    threads: int = 0,
    progress: Optional[Callable[[str, int, int], Any]] = None,
    objective: str = "ratio",
) -> WordPieceTrained: ...
def train_unigram(
    counts: Counts,
    vocab_size: int,
    byte_fallback: bool = False,
    shrinking_factor: float = 0.75,
    max_piece_length: int = 16,
    seed_size: int = 1000000,
    em_iterations: int = 2,
    unk_piece: str = ...,
    control_pieces: list[str] = ...,
    user_defined: list[str] = ...,
    character_coverage: float = 1.0,
    snapshots: list[int] = ...,
    threads: int = 0,
    progress: Optional[Callable[[str, int, int], Any]] = None,
    split: tuple[bool, bool, bool, bool] = ...,
    base: Optional[list[tuple[str, float]]] = None,
    keep: Optional[list[str]] = None,
    revision: int = ...,
) -> UnigramTrained: ...

@final
class Counter:
    @staticmethod
    def pieces(
        pattern: str,
        max_piece_bytes: int = 0,
        table_budget: int = ...,
        spill_dir: Optional[str] = None,
        threads: int = 0,
    ) -> Counter: ...
    @staticmethod
    def superword(
        pattern: str,
        max_words: int,
        table_budget: int = ...,
        spill_dir: Optional[str] = None,
        threads: int = 0,
    ) -> Counter: ...
    @staticmethod
    def bert(
        clean_text: bool = True,
        handle_chinese_chars: bool = True,
        strip_accents: Optional[bool] = None,
        lowercase: bool = False,
        unicode_form: Optional[str] = None,
        max_piece_bytes: int = 0,
        table_budget: int = ...,
        spill_dir: Optional[str] = None,
        threads: int = 0,
    ) -> Counter: ...
    @staticmethod
    def sentencepiece(
        add_dummy_prefix: bool = True,
        remove_extra_whitespaces: bool = False,
        max_piece_bytes: int = 0,
        table_budget: int = ...,
        spill_dir: Optional[str] = None,
        threads: int = 0,
        charsmap: Optional[bytes] = None,
        user_defined: list[str] = ...,
        split_by_whitespace: bool = True,
        line_ends: bool = False,
    ) -> Counter: ...
    def feed(self, data: bytes) -> None: ...
    def end_input(self) -> None: ...
    @property
    def input_bytes(self) -> int: ...
    @property
    def table_size(self) -> tuple[int, int]: ...
    def finish(self, keep_budget: Optional[int] = None) -> Counts: ...

@final
class Counts:
    @staticmethod
    def from_bytes(raw: bytes) -> Counts: ...
    @staticmethod
    def from_pairs(pairs: list[tuple[bytes, int]]) -> Counts: ...
    def to_bytes(self) -> bytes: ...
    @staticmethod
    def sum(parts: list[Counts]) -> Counts: ...
    def keep_within(self, budget: int) -> Counts: ...
    @property
    def estimate(self) -> int: ...
    @property
    def stats(self) -> CountStats: ...
    def items(self, limit: Optional[int] = None) -> list[tuple[bytes, int]]: ...
    def __len__(self) -> int: ...
    def __eq__(self, value: object, /) -> bool: ...

@final
class Encoder:
    @staticmethod
    def byte_bpe(content: bytes, pattern: str, keep_gaps: bool = False) -> Encoder: ...
    @staticmethod
    def superword_bpe(content: bytes, pattern: str, transition: int, stage1_merges: int, max_words: int) -> Encoder: ...
    @staticmethod
    def residue_free_bpe(content: bytes, pattern: str, removed: list[int], keep_gaps: bool = False) -> Encoder: ...
    @staticmethod
    def picky_bpe(content: bytes, pattern: str, removals: list[tuple[int, int]]) -> Encoder: ...
    @staticmethod
    def char_bpe(
        content: bytes,
        pattern: str,
        end_of_word: Optional[str] = None,
        unk_token: Optional[str] = None,
        keep_gaps: bool = False,
    ) -> Encoder: ...
    @staticmethod
    def wordpiece(
        content: bytes,
        unk_token: str,
        continuing_prefix: str = "##",
        max_input_chars_per_word: int = 100,
        clean_text: bool = True,
        handle_chinese_chars: bool = True,
        strip_accents: Optional[bool] = None,
        lowercase: bool = False,
        unicode_form: Optional[str] = None,
        decode_prefix: Optional[str] = None,
        decode_cleanup: bool = True,
    ) -> Encoder: ...
    @staticmethod
    def unigram(
        content: bytes,
        add_dummy_prefix: bool = True,
        remove_extra_whitespaces: bool = False,
        escape_whitespaces: bool = True,
        charsmap: Optional[bytes] = None,
        denormalizer: Optional[tuple[bytes, bool, bool, bool]] = None,
        unk_surface: Optional[str] = None,
    ) -> Encoder: ...
    @staticmethod
    def hf_unigram(
        content: bytes,
        normalizer: list[tuple[str, list[str]]],
        pre_tokenizer: list[tuple[str, list[str]]],
        decoder: Optional[list[tuple[str, list[str]]]],
        blobs: list[bytes],
        byte_fallback: bool = False,
        unk_special: bool = True,
    ) -> Encoder: ...
    @staticmethod
    def hf_bpe(
        content: bytes,
        normalizer: list[tuple[str, list[str]]],
        pre_tokenizer: list[tuple[str, list[str]]],
        decoder: Optional[list[tuple[str, list[str]]]],
        blobs: list[bytes],
        byte_level: bool,
        unk_token: Optional[str] = None,
        continuing_subword_prefix: Optional[str] = None,
        end_of_word_suffix: Optional[str] = None,
        fuse_unk: bool = False,
        byte_fallback: bool = False,
        ignore_merges: bool = False,
    ) -> Encoder: ...
    @staticmethod
    def hf_wordpiece(
        content: bytes,
        normalizer: list[tuple[str, list[str]]],
        pre_tokenizer: list[tuple[str, list[str]]],
        decoder: Optional[list[tuple[str, list[str]]]],
        blobs: list[bytes],
        unk_token: str,
        continuing_subword_prefix: str,
        max_input_chars_per_word: int,
    ) -> Encoder: ...
    @staticmethod
    def sp_bpe(
        content: bytes,
        add_dummy_prefix: bool = True,
        remove_extra_whitespaces: bool = False,
        escape_whitespaces: bool = True,
        charsmap: Optional[bytes] = None,
        denormalizer: Optional[tuple[bytes, bool, bool, bool]] = None,
        unk_surface: Optional[str] = None,
    ) -> Encoder: ...
    def freeze(self, tag: bytes, meta: bytes) -> Optional[bytes]: ...
    @staticmethod
    def thaw(data: Buffer, tag: bytes) -> Optional[tuple[Encoder, bytes]]: ...
    @property
    def tables_in_place(self) -> bool: ...
    @property
    def kind(self) -> str: ...
    @property
    def vocab_size(self) -> int: ...
    @property
    def id_bound(self) -> int: ...
    def specials(self) -> list[tuple[str, int]]: ...
    def normalize(self, text: str) -> str: ...
    def encode_ordinary(self, text: str) -> list[int]: ...
    def encode(
        self, text: str, allowed_special: Optional[list[str]] = ..., disallowed_special: Optional[list[str]] = ...
    ) -> list[int]: ...
    def find_special(self, text: str, names: list[str]) -> Optional[str]: ...
    def encode_batch(
        self,
        texts: list[str],
        allowed_special: Optional[list[str]] = ...,
        threads: int = 0,
        *,
        disallowed_special: Optional[list[str]] = ...,
    ) -> list[list[int]]: ...
    def decode_bytes(self, ids: list[int]) -> bytes: ...
    def token_bytes(self, id: int) -> bytes: ...
    def nbest(self, text: str, k: int) -> list[tuple[list[int], float]]: ...
    def sample(self, text: str, alpha: float, seed: int) -> list[int]: ...
    def count(
        self, text: str, allowed_special: Optional[list[str]] = ..., disallowed_special: Optional[list[str]] = ...
    ) -> int: ...
    def round_trip(
        self, segments: list[bytes], specials: list[int], threads: int = 0
    ) -> tuple[int, int, int, int, int, int]: ...
    def round_trip_pieces(
        self, counts: Counts, specials: list[int], threads: int = 0, uncached: bool = True
    ) -> Optional[tuple[int, int, int, int, int, int]]: ...
    def count_batch(
        self,
        texts: list[str],
        allowed_special: Optional[list[str]] = ...,
        threads: int = 0,
        *,
        disallowed_special: Optional[list[str]] = ...,
    ) -> list[int]: ...
    def encode_batch_flat(
        self,
        texts: list[str],
        allowed_special: Optional[list[str]] = ...,
        threads: int = 0,
        *,
        disallowed_special: Optional[list[str]] = ...,
    ) -> tuple[bytes, bytes]: ...
    def encode_documents(
        self,
        buf: Buffer,
        kind: str,
        field: str,
        limit: int,
        skip: int,
        overrides: list[tuple[int, str]],
        allowed_special: Optional[list[str]],
        disallowed_special: Optional[list[str]],
        threads: int,
        prefix: list[int],
        suffix: list[int],
        itemsize: int,
        out: bytearray,
        draw: Optional[tuple[str, float, int]] = None,
    ) -> tuple[int, bytes, bytes, list[tuple[int, int, str, int]], int, int]: ...
    def encode_batch_drawn(
        self,
        texts: list[str],
        allowed_special: Optional[list[str]],
        threads: int,
        disallowed_special: Optional[list[str]],
        method: str,
        p: float,
        seed: int,
        flat: bool = False,
    ) -> Any: ...
    def trace_batch(self, texts: list[str], threads: int = 0) -> tuple[list[int], list[int], list[int]]: ...
    def encode_with_offsets(
        self, text: str, allowed_special: Optional[list[str]] = ..., disallowed_special: Optional[list[str]] = ...
    ) -> tuple[list[int], list[tuple[int, int]], list[tuple[int, int]]]: ...
    def decoder(self) -> Decoder: ...

@final
class Decoder:
    def step(self, id: int) -> str: ...
    def finish(self) -> str: ...
    @property
    def pending(self) -> bytes: ...

@final
class CountStats:
    @property
    def pieces(self) -> int: ...
    @property
    def total(self) -> int: ...
    @property
    def kept_total(self) -> int: ...
    @property
    def dropped_pieces(self) -> int: ...
    @property
    def dropped_total(self) -> int: ...
    @property
    def input_bytes(self) -> int: ...
    @property
    def lines(self) -> int: ...
    @property
    def spilled_runs(self) -> int: ...

@final
class BpeTrained:
    @property
    def tokens(self) -> list[bytes]: ...
    @property
    def token_counts(self) -> list[int]: ...
    @property
    def merges(self) -> list[tuple[int, int, int, int]]: ...
    @property
    def merge_columns(self) -> tuple[bytes, bytes, bytes, bytes]: ...
    @property
    def snapshots(self) -> list[tuple[int, int, list[int]]]: ...
    @property
    def alphabet_size(self) -> int: ...
    @property
    def distinct_pieces(self) -> int: ...
    @property
    def merge_seconds(self) -> float: ...

@final
class BpeExtended:
    @property
    def first_new(self) -> int: ...
    @property
    def tokens(self) -> list[bytes]: ...
    @property
    def token_counts(self) -> list[int]: ...
    @property
    def merges(self) -> list[tuple[int, int, int, int]]: ...
    @property
    def distinct_pieces(self) -> int: ...
    @property
    def merge_seconds(self) -> float: ...

@final
class WordPieceTrained:
    @property
    def tokens(self) -> list[tuple[str, int]]: ...
    @property
    def merges(self) -> list[tuple[int, int, int, float, int, int, int]]: ...
    @property
    def distinct_words(self) -> int: ...
    @property
    def merge_seconds(self) -> float: ...

@final
class WordPieceExtended:
    @property
    def tokens(self) -> list[tuple[str, int]]: ...
    @property
    def merges(self) -> list[tuple[int, int, int, float, int, int, int]]: ...
    @property
    def first_new(self) -> int: ...
    @property
    def new_symbols(self) -> int: ...

@final
class UnigramTrained:
    @property
    def pieces(self) -> list[tuple[str, float, str]]: ...
    @property
    def rounds(self) -> list[tuple[int, int, float]]: ...
    @property
    def sized(self) -> list[tuple[int, list[tuple[str, float, str]], int]]: ...
    @property
    def distinct_words(self) -> int: ...
    @property
    def train_seconds(self) -> float: ...
