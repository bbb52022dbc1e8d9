"""`Tokenizer`: a loaded version, compiled once per content hash into the core's encoder.

>>> tok = tokreg.load("gpt-mini@1")
>>> tok.encode("hello world")
[31373, 995]
"""

from __future__ import annotations

import os
import threading
from collections.abc import Collection, Iterable, Sequence
from typing import Any, Literal, Optional, Union, cast

from . import _core
from .errors import InputError, IntegrityError
from .hashing import content_bytes, digest

Specials = Union[Literal["all"], Collection[str]]

_cache: dict[str, Any] = {}
_cache_lock = threading.Lock()


def _compile(algorithm: str, config: dict[str, Any], content: bytes) -> Any:
    """The core encoder for canonical content bytes (see hashing.py)."""
    try:
        if algorithm == "unigram":
            n = config["normalizer"]
            if n.get("name", "identity") != "identity":
                raise InputError(f"Unigram normalization {n['name']!r} is not implemented by tokreg")
            return _core.Unigram.from_content(content, add_dummy_prefix=n["add_dummy_prefix"],
                                              remove_extra_whitespaces=n["remove_extra_whitespaces"],
                                              escape_whitespaces=n.get("escape_whitespaces", True))
        if algorithm == "wordpiece":
            return _core.WordPiece.from_content(
                content,
                config["unk_token"],
                continuing_prefix=config["continuing_prefix"],
                max_input_chars_per_word=config["max_input_chars_per_word"],
                **config["normalizer"],
            )
        if algorithm != "bpe":
            raise InputError(f"encoding {algorithm} tokenizers is not supported by this version of tokreg")
        if config.get("model") == "sentencepiece":
            n = config["normalizer"]
            if n.get("name", "identity") != "identity":
                raise InputError(f"SentencePiece normalization {n['name']!r} is not implemented by tokreg")
            return _core.SpBpe.from_content(
                content,
                add_dummy_prefix=n["add_dummy_prefix"],
                remove_extra_whitespaces=n["remove_extra_whitespaces"],
                escape_whitespaces=n.get("escape_whitespaces", True),
            )
        if config.get("byte_level", True):
            return _core.ByteBpe.from_content(content, config["pattern"])
        return _core.CharBpe.from_content(
            content,
            config["pattern"],
            end_of_word=config.get("end_of_word_suffix"),
            unk_token=config.get("unk_token"),
        )
    except ValueError as e:
        raise InputError(f"cannot build an encoder: {e}") from None


def _text(s: str, what: str) -> str:
    if not isinstance(s, str):
        raise TypeError(f"{what} must be str, not {type(s).__name__}")
    return s


def _surrogate(e: UnicodeEncodeError, what: str = "text") -> InputError:
    """The one error for a str holding a lone surrogate (not encodable as UTF-8). tiktoken replaces
    it with U+FFFD; the clean-up named here does the same, so it then gives tiktoken's ids."""
    return InputError(
        f"{what} contains a lone surrogate at index {e.start} (not valid Unicode); clean it first, e.g. "
        "text.encode('utf-16', 'surrogatepass').decode('utf-16', 'replace') (U+FFFD for it, as tiktoken does)"
    )


class Tokenizer:
    """A tokenizer version ready to encode and decode.

    `ref` is `name@N` (or the file it came from), `hash` its content hash. Built from the
    canonical content bytes, which must hash to `content_hash`.
    """

    def __init__(self, ref: str, content_hash: str, algorithm: str, config: dict[str, Any], content: bytes):
        if digest(content)[0] != content_hash:
            raise IntegrityError(
                f"{ref}: the stored content hashes to {digest(content)[0]}, not {content_hash}; "
                "the registry was changed outside tokreg (run `tokreg verify`)"
            )
        self.ref = ref
        self.hash = content_hash
        self.algorithm = algorithm
        self.config = config
        with _cache_lock:
            enc = _cache.get(content_hash)
            if enc is None:
                enc = _compile(algorithm, config, content)
                _cache[content_hash] = enc
        self._enc = enc
        self.special_tokens: dict[str, int] = dict(enc.specials())

    @classmethod
    def from_rows(
        cls,
        ref: str,
        content_hash: str,
        algorithm: str,
        config: dict[str, Any],
        tokens: Sequence[tuple[int, bytes, str, Optional[float]]],
        merges: Sequence[tuple[int, int, int]],
    ) -> Tokenizer:
        """Builds from rows: tokens as (id, bytes, kind, score) in id order, merges as
        (left, right, result) in rank order."""
        content = content_bytes(algorithm, config, ((i, k, b, s) for i, b, k, s in tokens), merges)
        return cls(ref, content_hash, algorithm, config, content)

    @classmethod
    def from_file(cls, path: Union[str, os.PathLike[str]], *, expect_hash: Optional[str] = None) -> Tokenizer:
        """Loads a file written by `tokreg export REF --format tokreg`, with no registry. Its content
        must hash to the hash it carries (and start with `expect_hash`, when given)."""
        from . import tokfile

        return cast(Tokenizer, tokfile.load(path, expect_hash=expect_hash))

    def __repr__(self) -> str:
        return f"<Tokenizer {self.ref} {self.hash[:22]}… {self.algorithm} vocab={self.vocab_size}>"

    @property
    def vocab_size(self) -> int:
        return int(self._enc.vocab_size)

    @property
    def byte_level(self) -> bool:
        return bool(self.config.get("byte_level", False))

    def encode_ordinary(self, text: str) -> list[int]:
        """Encodes `text`, treating special-token strings as ordinary text."""
        try:
            ids: list[int] = self._enc.encode_ordinary(_text(text, "text"))  # already a fresh list
            return ids
        except UnicodeEncodeError as e:
            raise _surrogate(e) from None

    def encode(
        self, text: str, *, allowed_special: Specials = frozenset(), disallowed_special: Specials = "all"
    ) -> list[int]:
        """Encodes `text` with tiktoken's special-token rules: an allowed special token becomes
        its id; a disallowed one found in the text is an error (pass it in `allowed_special`,
        or `disallowed_special=()` to encode it as ordinary text)."""
        _text(text, "text")
        if not self.special_tokens or not hasattr(self._enc, "encode"):
            return self.encode_ordinary(text)
        allowed = set(self.special_tokens) if allowed_special == "all" else set(allowed_special)
        disallowed = (
            set(self.special_tokens) - allowed if disallowed_special == "all" else set(disallowed_special)
        )
        try:
            if disallowed:
                found = self._enc.find_special(text, sorted(disallowed))
                # tiktoken refuses any disallowed string found in the text, special token or not;
                # the core searches special tokens only. Name the first in the text, as tiktoken.
                hits = [s for s in disallowed.difference(self.special_tokens) if s in text]
                if hits:
                    hits += [found] if found is not None else []
                    found = min(hits, key=lambda s: (text.find(s), -len(s)))
                if found is not None:
                    raise InputError(
                        f"text contains the special token {found!r}; pass allowed_special={{{found!r}}} to encode "
                        f"it as a special token, or disallowed_special=() to encode it as text"
                    )
            out: list[int] = self._enc.encode(text, sorted(allowed))
            return out
        except UnicodeEncodeError as e:
            raise _surrogate(e) from None

    def encode_batch(self, texts: Iterable[str], *, threads: int = 0) -> list[list[int]]:
        """Encodes many texts in parallel (the GIL is released); order is kept."""
        texts = list(texts)
        if threads < 0:
            raise InputError(f"threads must be 0 (one per core) or more, not {threads}")
        if hasattr(self._enc, "encode_batch"):
            try:
                batch: list[list[int]] = self._enc.encode_batch(texts, threads)
                return batch
            except UnicodeEncodeError:
                for n, t in enumerate(texts):
                    try:
                        t.encode("utf-8")
                    except UnicodeEncodeError as e:
                        raise _surrogate(e, f"text {n} of the batch") from None
                raise
        return [self.encode_ordinary(t) for t in texts]

    def nbest(self, text: str, k: int) -> list[tuple[list[int], float]]:
        """The `k` most likely segmentations of `text`, best first, with their log probability
        (Unigram only)."""
        if not hasattr(self._enc, "nbest"):
            raise InputError(f"{self.ref} is {self.algorithm}; n-best segmentation needs a Unigram tokenizer")
        if k < 1:
            raise InputError(f"nbest needs k >= 1, not {k}")
        return [(list(ids), score) for ids, score in self._enc.nbest(_text(text, "text"), k)]

    def sample(self, text: str, *, alpha: float = 0.1, seed: Optional[int] = None) -> list[int]:
        """One segmentation drawn with probability proportional to P(segmentation)**alpha, for
        subword regularization (Unigram only). The same seed gives the same draw; no seed, a
        fresh one."""
        if not hasattr(self._enc, "sample"):
            raise InputError(f"{self.ref} is {self.algorithm}; sampling needs a Unigram tokenizer")
        if alpha <= 0:
            raise InputError(f"sample needs alpha > 0 (e.g. 0.1), not {alpha}")
        if seed is None:
            seed = int.from_bytes(os.urandom(8), "little")
        drawn: list[int] = self._enc.sample(_text(text, "text"), alpha, seed & (2**64 - 1))
        return drawn

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        try:
            return bytes(self._enc.decode_bytes(list(ids)))
        except OverflowError as e:
            bad = next((i for i in ids if not 0 <= i < 2**32), None)
            why = str(e) if bad is None else f"{bad} is not a token id (ids are 0..{self._top_id()})"
            raise InputError(f"cannot decode: {why}") from None
        except ValueError as e:
            raise InputError(f"cannot decode: {e}") from None

    def decode(self, ids: Sequence[int], errors: str = "replace") -> str:
        """Decodes to text. A token sequence can end inside a UTF-8 character: `errors="replace"`
        (default) puts U+FFFD there, `errors="strict"` raises."""
        raw = self.decode_bytes(ids)
        try:
            return raw.decode("utf-8", errors=errors)
        except UnicodeDecodeError as e:
            raise InputError(
                f"the ids decode to bytes that are not valid UTF-8 at byte {e.start}; "
                "use decode_bytes() or errors='replace'"
            ) from None

    def token_bytes(self, token_id: int) -> bytes:
        try:
            return bytes(self._enc.token_bytes(token_id))
        except (ValueError, OverflowError):
            top = self._top_id()
            gaps = ", not all of them used" if top >= self.vocab_size else ""
            raise InputError(f"{self.ref} has no token id {token_id} (ids are 0..{top}{gaps})") from None

    def _top_id(self) -> int:
        """The highest token id: an imported vocabulary (tiktoken's) may place its special tokens
        past gaps, so it can be above vocab_size - 1."""
        return max([self.vocab_size - 1, *self.special_tokens.values()])


def is_lossless(algorithm: str, config: dict[str, Any]) -> bool:
    """Whether decode(encode(s)) == s for every string: byte-level BPE; Unigram or SentencePiece
    BPE with byte fallback that keeps whitespace as it is. Character-level BPE drops whitespace
    and maps unseen characters to <unk>; WordPiece normalizes and splits off punctuation."""
    if algorithm == "bpe" and config.get("model") != "sentencepiece":
        return bool(config.get("byte_level"))
    if algorithm in ("unigram", "bpe"):  # Unigram, or SentencePiece BPE: the same text handling
        n = config.get("normalizer", {})
        return bool(config.get("byte_fallback")) and not n.get("remove_extra_whitespaces") and n.get(
            "escape_whitespaces", True)
    return False
