"""`Tokenizer`: a version compiled into the core's encoder, ready to encode and decode.

A tokenizer is built from canonical content bytes (content.py), never from rows or a config
row on their own: the content is checked against the expected hash first, and the algorithm,
pattern, normalizer and special tokens are read from that same checked content. So what
encodes is exactly what the hash names. Compiled encoders are shared per content hash.

>>> tok = tokreg.load("gpt-mini@1")
>>> tok.encode("hello world")
[31373, 995]
>>> tok.decode([31373, 995])
'hello world'

Special tokens follow one rule for every algorithm, tiktoken's: by default a special token's
text found in the input is an error (`disallowed_special="all"`); `allowed_special` lists the
ones to turn into their ids; `disallowed_special=()` encodes them as ordinary text. The text
between special tokens is encoded as if it were a text of its own.
"""

from __future__ import annotations

import _thread  # the lock alone: `threading` costs a fresh process a millisecond to import
import math
import os
from collections import OrderedDict
from collections.abc import Collection, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, Optional, Union

from .. import _core, algorithms, content
from ..errors import InputError, NotFoundError
from . import built_cache, content_cache, trim_offsets
from .flat_ids import FlatIds
from .stream_decoder import StreamDecoder

if TYPE_CHECKING:
    from ..algorithms.template import Template
    from ..data import FinishedVersion, TokenizerData
    from . import stochastic

# Imported where used, not here: the tokreg-file reader (formats/), the live HF objects
# (hf_objects.py), the stochastic encodings (stochastic.py) and the templates
# (algorithms/template.py) are not needed to load a version and encode, and a fresh process
# pays for every import (their dataclasses alone bring `inspect`, `ast` and `dis`).

Specials = Union[Literal["all"], Collection[str]]

#: Compiled encoders by content hash, with the content's header line, most recently used last
#: (a server may load many).
_compiled: OrderedDict[str, tuple[_core.Encoder, str]] = OrderedDict()
_compiled_lock = _thread.allocate_lock()
_COMPILED_MAX = 32
#: Largest k of `nbest` and thread count of `encode_batch`: beyond them is a mistake.
MAX_NBEST = 10_000
MAX_THREADS = 256
_ERROR_HANDLERS = ("strict", "replace", "ignore", "backslashreplace", "surrogateescape")


def _known(hash_label: str) -> Optional[tuple[_core.Encoder, str]]:
    """The encoder compiled in this process for `hash_label`, with its content's header line."""
    with _compiled_lock:
        found = _compiled.get(hash_label)
        if found is not None:
            _compiled.move_to_end(hash_label)
        return found


def _keep(hash_label: str, enc: _core.Encoder, header_line: str) -> None:
    with _compiled_lock:
        _compiled[hash_label] = (enc, header_line)
        while len(_compiled) > _COMPILED_MAX:
            _compiled.popitem(last=False)


def _compile(hash_label: str, raw: bytes, model: algorithms.Model[Any], config: Any, cache: bool) -> _core.Encoder:
    """The encoder of hash-checked content `raw`: compiled in this process already, else (with
    `cache`) built by an earlier process (built_cache.py), else built now (and, with `cache`,
    kept for the next process)."""
    found = _known(hash_label)
    if found is not None:
        if cache:  # compiled in this process before a load asked for the cache (an import, a training)
            built_cache.put(hash_label, *found, len(raw), only_if_absent=True)
        return found[0]
    header_line = _core.content_header(raw)
    built = built_cache.get(hash_label, len(raw)) if cache else None
    if built is not None and built[1] == header_line:
        enc = built[0]
    else:
        enc = model.compile(raw, config)
        if cache:
            built_cache.put(hash_label, enc, header_line, len(raw))
    _keep(hash_label, enc, header_line)
    return enc


def _text(s: object, what: str = "text") -> str:
    if not isinstance(s, str):
        raise InputError(f"{what} must be a str, not {type(s).__name__}")
    return s


def _surrogate(e: UnicodeEncodeError, what: str = "text") -> InputError:
    """The one error for a str holding a lone surrogate (not encodable as UTF-8). tiktoken replaces
    it with U+FFFD; the clean-up named here does the same, so it then gives tiktoken's ids."""
    return InputError(
        f"{what} contains a lone surrogate at index {e.start} (not valid Unicode); clean it first, e.g. "
        "text.encode('utf-16', 'surrogatepass').decode('utf-16', 'replace') (U+FFFD for it, as tiktoken does)"
    )


def _names(value: Specials, what: str) -> Optional[set[str]]:
    """A set of strings from "all" (None) or a collection of strings."""
    if value == "all":
        return None
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise InputError(
            f"{what} must be 'all' or a collection of strings, e.g. {{'<|endoftext|>'}}, not {value!r:.40}"
        )
    out = set(value)
    if not all(isinstance(s, str) for s in out):
        raise InputError(f"{what} must hold strings only")
    return out


def _rule(allowed_special: Specials, disallowed_special: Specials) -> tuple[Optional[list[str]], Optional[list[str]]]:
    """The two arguments of tiktoken's special-token rule as the core takes them (None for
    "all"); the core applies the rule (src/encode/specials.rs), in the same call that encodes."""
    allowed = _names(allowed_special, "allowed_special")
    disallowed = _names(disallowed_special, "disallowed_special")
    return (None if allowed is None else sorted(allowed)), (None if disallowed is None else sorted(disallowed))


# Named tuples declared by the call, with their types as objects: the class syntax would hand
# typing strings to compile (`from __future__ import annotations`), and a fresh process's first
# compile costs more than the rest of what loading imports (versions/lockfile.py says more).


class Encoding(
    NamedTuple(
        "Encoding", [("ids", list[int]), ("offsets", list[tuple[int, int]]), ("byte_offsets", list[tuple[int, int]])]
    )
):
    """`encode_with_offsets`: the ids, and for each id the (start, end) of its text as character
    offsets (`text[start:end]`) and as byte offsets into the UTF-8 text."""

    __slots__ = ()


class Pair(NamedTuple("Pair", [("ids", list[int]), ("type_ids", list[int])])):
    """`encode_pair`: the ids of two texts with the template, and each id's type id."""

    __slots__ = ()


class Tokenizer:
    """A tokenizer version ready to encode and decode. `ref` is `name@N` (or the file it came
    from), `hash` its content hash, `algorithm` the stored algorithm ("bpe", "wordpiece",
    "unigram"), `title` what it is for people ("byte-level BPE")."""

    def __init__(
        self,
        raw_content: bytes,
        *,
        ref: str,
        expect_hash: Optional[str] = None,
        _hashed: Optional[str] = None,
        _cache: bool = False,
    ):
        """Compiles canonical content bytes; with `expect_hash`, they must hash to it.
        (`_hashed`: their hash, already computed from these very bytes; see `of_finished`.
        `_cache`: use and fill the built-encoder cache, as the load paths do.)"""
        if _hashed is not None:
            self.hash = _hashed
        elif expect_hash is not None:
            self.hash = content.check(raw_content, expect_hash, ref)
        else:
            self.hash = content.content_hash(raw_content)
        self.ref = ref
        self._content: Optional[bytes] = raw_content
        self.algorithm, self.config = content.header(raw_content)
        model = algorithms.model_of(self.algorithm, self.config)
        parsed = model.parse_config(self.config)
        self._setup(model, parsed, _compile(self.hash, raw_content, model, parsed, _cache))

    @classmethod
    def cached(cls, hash_label: str, ref: str, header_line: Optional[str] = None) -> Optional[Tokenizer]:
        """The tokenizer of `hash_label` compiled earlier, in this process or (built_cache.py)
        in another, without reading its content (`content` reads it from the local cache on
        first use); None when no built encoder is cached for it, or its content is not in the
        local cache as a file of the size the built encoder names (then the content is read
        from its sources and checked, as for a small vocabulary, which is never built ahead;
        built_cache.py says where a content file damaged at the same size is found).
        With `header_line`, only an encoder whose content has that header line is taken."""
        content_size, built_file = content_cache.size_of(hash_label), built_cache.path_of(hash_label)
        if content_size is None or built_file is None or not built_file.is_file():
            return None  # as a load without the built cache would: read (and check) the content
        found = _known(hash_label)
        if found is None:
            found = built_cache.get(hash_label, content_size)
            if found is None:
                return None
            _keep(hash_label, *found)
        enc, line = found
        if header_line is not None and line != header_line:
            return None
        tok = cls.__new__(cls)
        tok.hash, tok.ref, tok._content = hash_label, ref, None
        tok.algorithm, tok.config = content.parse_header(line)
        tok._attach(enc)
        return tok  # `_configure` on first use (`__getattr__`)

    def _setup(self, model: algorithms.Model[Any], parsed: Any, enc: _core.Encoder) -> None:
        """What every tokenizer holds beside its hash, ref, algorithm and config."""
        self._attach(enc)
        self._configure(model, parsed)

    def _attach(self, enc: _core.Encoder) -> None:
        """The encoder and its special tokens."""
        self._enc = enc
        self.special_tokens: dict[str, int] = dict(self._enc.specials())
        self._special_ids = {i: t for t, i in self.special_tokens.items()}

    def _configure(self, model: algorithms.Model[Any], parsed: Any) -> None:
        """What the config says beyond the encoder, read by the version's model: set here when
        the tokenizer is built, or on first use (`__getattr__`) when it was loaded built."""
        self.title = model.title
        self.lossless = model.lossless(parsed)
        #: What `add_special_tokens=True` puts around a text (algorithms/template.py), or None.
        self.template: Optional[Template] = None
        if "template" in self.config:  # (template.KEY) the template module only for a version with one
            from ..algorithms import template

            self.template = template.of_config(self.config)
            if self.template is not None:
                template.check_tokens(self.template, self.special_tokens, self.ref)
        #: tokenizers' offset trimming the import carried (encoding/trim_offsets.py), or None.
        self._trim = trim_offsets.setting(self.config)

    #: Set by `_configure`: at once for a tokenizer built here, on first use for one loaded built.
    title: str
    lossless: bool
    _trim: Optional[bool]

    if not TYPE_CHECKING:  # hidden from type checkers, so that a misspelt attribute stays an error

        def __getattr__(self, name: str) -> Any:
            """`title`, `lossless`, `template`, `_trim` of a tokenizer loaded built (`cached`),
            on first use: its config was read by its model when that encoder was built and
            cached, so a load that only encodes need not import the model module (nor
            dataclasses) again."""
            if name not in ("title", "lossless", "template", "_trim") or "_enc" not in self.__dict__:
                raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
            model = algorithms.model_of(self.algorithm, self.config)
            self._configure(model, model.parse_config(self.config))
            return self.__dict__[name]

    @property
    def content(self) -> bytes:
        """The hash-checked canonical content this tokenizer was compiled from."""
        if self._content is None:  # loaded built (`cached`): read now, checked against the hash
            raw = content_cache.get(self.hash)
            if raw is None:
                raise NotFoundError(
                    f"{self.ref}: its content ({self.hash}) is no longer in the local cache "
                    f"{content_cache.cache_dir()} (deleted, or damaged and removed now); load it again "
                    "(or run `tokreg sync`)"
                )
            self._content = raw
        return self._content

    @classmethod
    def from_data(cls, data: TokenizerData, ref: str) -> Tokenizer:
        """A tokenizer straight from trained or imported data, with no registry."""
        return cls(data.content(), ref=ref)

    @classmethod
    def of_finished(cls, version: FinishedVersion, ref: str) -> Tokenizer:
        """A tokenizer for a version on its way to the store, with the hash `data.finish`
        computed for its content (not computed again)."""
        return cls(version.content, ref=ref, _hashed=version.content_hash)

    @classmethod
    def from_file(cls, path: Union[str, os.PathLike[str]], *, expect_hash: Optional[str] = None) -> Tokenizer:
        """Loads a file written by `tokreg export REF --format tokreg`, with no registry. Its content
        must hash to the hash it carries (and start with `expect_hash`, when given)."""
        from ..formats import tokreg_file  # on use: see the note at the top-level imports

        f = tokreg_file.read(path, expect_hash=expect_hash)
        return cls(f.content, ref=f.ref, _hashed=f.hash, _cache=True)  # read() made and checked both

    def __repr__(self) -> str:
        return f"<Tokenizer {self.ref} {self.hash[:22]}… {self.title} vocab={self.vocab_size}>"

    @property
    def vocab_size(self) -> int:
        """The number of tokens (special ones included)."""
        return self._enc.vocab_size

    # -- encoding -------------------------------------------------------------------------------

    def encode_ordinary(self, text: str) -> list[int]:
        """Encodes `text`, treating special-token strings as ordinary text."""
        try:
            return self._enc.encode_ordinary(_text(text))
        except UnicodeEncodeError as e:
            raise _surrogate(e) from None

    def encode(
        self,
        text: str,
        *,
        allowed_special: Specials = frozenset(),
        disallowed_special: Specials = "all",
        add_special_tokens: bool = False,
        pair: Optional[str] = None,
        dropout: float = 0.0,
        seed: Optional[int] = None,
        method: Optional[str] = None,
    ) -> list[int]:
        """Encodes `text` with tiktoken's special-token rules: an allowed special token becomes
        its id; a disallowed one found in the text is an error (pass it in `allowed_special`,
        or `disallowed_special=()` to encode it as ordinary text). With `add_special_tokens=True`
        the version's template is applied (`[CLS] … [SEP]`, `<s> …`; nothing for a version
        without one), to `text` and, when given, the second text `pair`, as Hugging Face's
        `encode(text, pair, add_special_tokens=True)` does.

        With `dropout=p` and a `seed`, a stochastic encoding (encoding/stochastic.py): BPE-dropout
        (Provilkov et al., 2020) for BPE, Unigram sampling (Kudo, 2018; p is its alpha) for
        Unigram, or `method="stochastok"` (Sims et al., 2025) for any algorithm whose tokens
        concatenate. The same seed gives the same ids; `decode` gives the text back."""
        _text(text)
        try:
            if dropout == 0.0 and seed is None and method is None:  # the default path, unchanged
                ids = self._enc.encode(text, *_rule(allowed_special, disallowed_special))
            else:
                ids = self._encode_drawn(text, allowed_special, disallowed_special, dropout, seed, method)
        except UnicodeEncodeError as e:
            raise _surrogate(e) from None
        if pair is not None:
            if not add_special_tokens:
                raise InputError("pair= is for add_special_tokens=True; encode the two texts one by one otherwise")
            second = self.encode(
                pair,
                allowed_special=allowed_special,
                disallowed_special=disallowed_special,
                dropout=dropout,
                seed=seed,
                method=method,
            )
            return self._templated(ids, second)
        return self._templated(ids) if add_special_tokens else ids

    def encode_pair(
        self, text: str, pair: str, *, allowed_special: Specials = frozenset(), disallowed_special: Specials = "all"
    ) -> Pair:
        """`encode(text, pair=pair, add_special_tokens=True)` with each id's type id (Hugging
        Face's `token_type_ids`: BERT's 0 for the first text, 1 for the second, or what the
        version's template says, algorithms/template.py): `Pair(ids, type_ids)`."""
        a = self.encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)
        b = self.encode(pair, allowed_special=allowed_special, disallowed_special=disallowed_special)
        if self.template is None:
            return Pair(a + b, [0] * len(a) + [1] * len(b))
        return Pair(self.template.apply(a, b, self.special_tokens), self.template.apply_types(len(a), len(b)))

    def _templated(self, ids: list[int], pair: Optional[list[int]] = None) -> list[int]:
        if self.template is None:
            return ids + (pair or [])
        return self.template.apply(ids, pair, self.special_tokens)

    def encode_batch(
        self,
        texts: Iterable[str],
        *,
        threads: int = 0,
        allowed_special: Specials = frozenset(),
        disallowed_special: Specials = "all",
        as_numpy: bool = False,
        add_special_tokens: bool = False,
        dropout: float = 0.0,
        seed: Optional[int] = None,
        method: Optional[str] = None,
    ) -> list[Any]:
        """Encodes many texts in parallel on `threads` threads (0: one per core; the GIL is
        released), with `encode`'s special-token rules; the order is kept and the thread count
        never changes a result. With `as_numpy=True`, one numpy uint32 array per text (views of
        one buffer, no Python object per id; needs numpy); see also `encode_batch_flat`. With
        `add_special_tokens=True`, each text gets the version's template (lists only). `dropout`,
        `seed`, `method`: a stochastic encoding, as in `encode`; each text's draw depends on the
        seed and the text alone (not on the thread count or its place in the batch)."""
        if add_special_tokens and as_numpy:
            raise InputError("as_numpy=True gives the ids as encoded; add the template's ids yourself")
        drawn = self._draw(dropout, seed, method)
        if add_special_tokens:
            out = self.encode_batch(
                texts,
                threads=threads,
                allowed_special=allowed_special,
                disallowed_special=disallowed_special,
                dropout=dropout,
                seed=seed,
                method=method,
            )
            return [self._templated(ids) for ids in out]
        if as_numpy:
            return self.encode_batch_flat(
                texts,
                threads=threads,
                allowed_special=allowed_special,
                disallowed_special=disallowed_special,
                dropout=dropout,
                seed=seed,
                method=method,
            ).split_numpy()
        if drawn is not None:
            drawn_lists: list[Any] = self._drawn(texts, threads, allowed_special, disallowed_special, drawn, False)
            return drawn_lists
        encoded: list[Any] = self._batch(texts, threads, allowed_special, disallowed_special, self._enc.encode_batch)
        return encoded

    def _drawn(
        self,
        texts: Iterable[str],
        threads: int,
        allowed_special: Specials,
        disallowed_special: Specials,
        drawn: stochastic.Draw,
        flat: bool,
    ) -> Any:
        """`_batch` for a stochastic encoding (`drawn`), as lists or (with `flat`) two buffers."""

        def call(texts: list[str], allowed: Any, threads: int, *, disallowed_special: Any) -> Any:
            return self._enc.encode_batch_drawn(
                texts, allowed, threads, disallowed_special, drawn.method, drawn.p, drawn.seed, flat
            )

        return self._batch(texts, threads, allowed_special, disallowed_special, call)

    def _batch(
        self, texts: Iterable[str], threads: int, allowed_special: Specials, disallowed_special: Specials, call: Any
    ) -> Any:
        """The checks every batch call makes (texts, thread count, the special-token arguments,
        lone surrogates), then `call(texts, allowed, disallowed, threads)` on the core, which
        applies the special-token rule."""
        texts = self._texts(texts)
        threads = self._threads(threads)
        allowed, disallowed = _rule(allowed_special, disallowed_special)
        try:
            return call(texts, allowed, threads, disallowed_special=disallowed)
        except UnicodeEncodeError:
            raise self._batch_surrogate(texts) from None

    def _encode_drawn(
        self,
        text: str,
        allowed_special: Specials,
        disallowed_special: Specials,
        dropout: float,
        seed: Optional[int],
        method: Optional[str],
    ) -> list[int]:
        from . import stochastic  # on use: see the note at the top-level imports

        drawn = stochastic.draw(self._enc.kind, dropout, seed, method)
        if drawn is None:
            ids: list[int] = self._enc.encode(text, *_rule(allowed_special, disallowed_special))
            return ids
        one: list[int] = self._drawn([text], 1, allowed_special, disallowed_special, drawn, False)[0]
        return one

    def _draw(self, dropout: float, seed: Optional[int], method: Optional[str]) -> Optional[stochastic.Draw]:
        if dropout == 0.0 and seed is None and method is None:
            return None  # the default path: no checks beyond one comparison
        from . import stochastic  # on use: see the note at the top-level imports

        return stochastic.draw(self._enc.kind, dropout, seed, method)

    def stochastic_options(
        self, dropout: float, seed: Optional[int], method: Optional[str] = None
    ) -> Optional[stochastic.Draw]:
        """The checked options of a stochastic encoding for this version (`method=None`: its own
        method), or None for `dropout=0`: what `encode` would draw with, e.g. for a manifest."""
        from . import stochastic  # on use: see the note at the top-level imports

        return stochastic.draw(self._enc.kind, dropout, seed, method)

    def encode_batch_flat(
        self,
        texts: Iterable[str],
        *,
        threads: int = 0,
        allowed_special: Specials = frozenset(),
        disallowed_special: Specials = "all",
        dropout: float = 0.0,
        seed: Optional[int] = None,
        method: Optional[str] = None,
    ) -> FlatIds:
        """`encode_batch` as two flat buffers, with no Python object per id: `.ids` (uint32)
        and `.offsets` (uint64; text k is `ids[offsets[k]:offsets[k+1]]`), see flat_ids.py.
        `dropout`, `seed`, `method`: a stochastic encoding, as in `encode_batch`."""
        drawn = self._draw(dropout, seed, method)
        if drawn is not None:
            return FlatIds(*self._drawn(texts, threads, allowed_special, disallowed_special, drawn, True))
        flat = self._batch(texts, threads, allowed_special, disallowed_special, self._enc.encode_batch_flat)
        return FlatIds(*flat)

    def count(
        self,
        text: str,
        *,
        allowed_special: Specials = frozenset(),
        disallowed_special: Specials = "all",
        add_special_tokens: bool = False,
    ) -> int:
        """`len(encode(text, ...))` without making the list."""
        _text(text)
        extra = len(self._templated([])) if add_special_tokens else 0
        try:
            return self._enc.count(text, *_rule(allowed_special, disallowed_special)) + extra
        except UnicodeEncodeError as e:
            raise _surrogate(e) from None

    def count_batch(
        self,
        texts: Iterable[str],
        *,
        threads: int = 0,
        allowed_special: Specials = frozenset(),
        disallowed_special: Specials = "all",
    ) -> list[int]:
        """The number of ids of each text (`encode_batch` without the lists)."""
        counts: list[int] = self._batch(texts, threads, allowed_special, disallowed_special, self._enc.count_batch)
        return counts

    def encode_with_offsets(
        self, text: str, *, allowed_special: Specials = frozenset(), disallowed_special: Specials = "all"
    ) -> Encoding:
        """`encode` with where each id came from: `Encoding(ids, offsets, byte_offsets)`, spans
        `(start, end)` in characters (`text[start:end]`) and in UTF-8 bytes, by the reference
        library's rule (src/encode/offsets.rs): Hugging Face's for BPE and WordPiece,
        SentencePiece's for Unigram and SentencePiece BPE. For a lossless version the byte spans
        tile the text; a character split between byte-level tokens is in the character span of
        each. An unknown token spans exactly the characters it replaced. A version imported from
        a tokenizer.json whose post-processor trims offsets (`trim_offsets`) gives the trimmed
        spans, as that file's `Encoding.offsets` (encoding/trim_offsets.py)."""
        _text(text)
        try:
            ids, chars, spans = self._enc.encode_with_offsets(text, *_rule(allowed_special, disallowed_special))
        except UnicodeEncodeError as e:
            raise _surrogate(e) from None
        if self._trim is not None:
            chars, spans = trim_offsets.trim(ids, chars, spans, self._trim, self._token_spaces)
        return Encoding(ids, chars, spans)

    def _token_spaces(self, token_id: int) -> tuple[int, int]:
        if token_id in self._special_ids:
            return trim_offsets.special_spaces(self._special_ids[token_id])
        return trim_offsets.byte_spaces(self._enc.token_bytes(token_id))

    def encode_ordinary_batch(self, texts: Iterable[str], *, threads: int = 0) -> list[list[int]]:
        """`encode_ordinary` of many texts in parallel (see `encode_batch`)."""
        texts = self._texts(texts)
        try:
            return self._enc.encode_batch(texts, [], self._threads(threads))
        except UnicodeEncodeError:
            raise self._batch_surrogate(texts) from None

    def merge_counts(self, texts: Iterable[str], *, threads: int = 0) -> tuple[list[int], list[int], list[int]]:
        """Per token id, over `texts` encoded by BPE's merge loop (special-token strings as text):
        how often it is emitted, formed by a merge, and merged into a longer token; the counts of
        LiteToken's residues (evaluation/residues.py). BPE versions only."""
        texts = self._texts(texts)
        try:
            return self._enc.trace_batch(texts, self._threads(threads))
        except UnicodeEncodeError:
            raise self._batch_surrogate(texts) from None

    def nbest(self, text: str, k: int) -> list[tuple[list[int], float]]:
        """The `k` most likely segmentations of `text`, best first, with their log probability
        (Unigram only)."""
        if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= MAX_NBEST:
            raise InputError(f"nbest needs k from 1 to {MAX_NBEST}, not {k!r}")
        try:
            return [(list(ids), score) for ids, score in self._enc.nbest(_text(text), k)]
        except UnicodeEncodeError as e:
            raise _surrogate(e) from None

    def sample(self, text: str, *, alpha: float = 0.1, seed: Optional[int] = None) -> list[int]:
        """One segmentation drawn with probability proportional to P(segmentation)**alpha, for
        subword regularization (Unigram only). The same seed gives the same draw; no seed, a
        fresh one."""
        if not isinstance(alpha, (int, float)) or isinstance(alpha, bool) or not (math.isfinite(alpha) and alpha > 0):
            raise InputError(f"sample needs a finite alpha > 0 (e.g. 0.1), not {alpha!r}")
        if seed is None:
            seed = int.from_bytes(os.urandom(8), "little")
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise InputError(f"seed must be an int, not {type(seed).__name__}")
        try:
            return self._enc.sample(_text(text), float(alpha), seed & (2**64 - 1))
        except UnicodeEncodeError as e:
            raise _surrogate(e) from None

    # -- decoding -------------------------------------------------------------------------------

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        """The bytes of a token sequence (may end inside a UTF-8 character)."""
        checked = self._ids(ids)  # its errors already name this tokenizer
        try:
            return self._enc.decode_bytes(checked)
        except InputError as e:
            raise InputError(f"cannot decode with {self.ref}: {e}") from None

    def decode(self, ids: Sequence[int], errors: str = "replace") -> str:
        """Decodes to text. A token sequence can end inside a UTF-8 character: `errors="replace"`
        (default) puts U+FFFD there, `errors="strict"` raises; any of Python's other error
        handlers for bytes.decode works too."""
        if errors not in _ERROR_HANDLERS:
            raise InputError(f"errors must be one of {', '.join(_ERROR_HANDLERS)}, not {errors!r}")
        raw = self.decode_bytes(ids)
        try:
            return raw.decode("utf-8", errors=errors)
        except UnicodeDecodeError as e:
            raise InputError(
                f"the ids decode to bytes that are not valid UTF-8 at byte {e.start}; "
                "use decode_bytes() or errors='replace'"
            ) from None

    def decoder(self) -> StreamDecoder:
        """A streaming decoder for ids that arrive one at a time: `dec.step(id) -> str` emits
        text only once its bytes form whole characters (see stream_decoder.py)."""
        return StreamDecoder(self._enc.decoder(), self.ref)

    # -- other libraries ------------------------------------------------------------------------

    def to_hf(self) -> Any:
        """This version as a `tokenizers.Tokenizer` giving the same ids (`pip install 'tokreg[hf]'`)."""
        from . import hf_objects  # on use: see the note at the top-level imports

        return hf_objects.to_hf(self)

    def to_transformers(self, **overrides: Any) -> Any:
        """This version as a `transformers.PreTrainedTokenizerFast` giving the same ids, with the
        special-token roles and settings an import carried (or, for a trained version, the
        roles its specials and template give: see hf_objects.py); `overrides` are passed to
        it, e.g. `model_max_length=512` (`pip install 'tokreg[transformers]'`)."""
        from . import hf_objects  # on use: see the note at the top-level imports

        return hf_objects.to_transformers(self, **overrides)

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes of one token, as stored."""
        if not isinstance(token_id, int) or isinstance(token_id, bool):
            raise InputError(f"a token id must be an int, not {type(token_id).__name__}")
        try:
            if not 0 <= token_id < 2**32:
                raise InputError("not a u32")
            return self._enc.token_bytes(token_id)
        except InputError:
            raise InputError(f"{self.ref} has no token id {token_id} (ids are 0..{self._enc.id_bound - 1})") from None

    # -- checks ---------------------------------------------------------------------------------

    def _ids(self, ids: Sequence[int]) -> list[int]:
        if type(ids) is list and (not ids or (set(map(type, ids)) == {int} and min(ids) >= 0 and max(ids) < 2**32)):
            return ids  # plain ints in range, as the encoder returns them: checked at C speed
        # A set or a mapping iterates in no meaningful order: decoding it would be a silent guess.
        if isinstance(ids, (str, bytes, bytearray, memoryview, AbstractSet, Mapping)) or not isinstance(ids, Iterable):
            raise InputError(f"ids must be a sequence of ints (a list, tuple or array), not {type(ids).__name__}")
        out = list(ids)
        for i in out:
            if not isinstance(i, int) or isinstance(i, bool):
                if type(i).__name__.startswith(("int", "uint")) and hasattr(i, "__index__"):
                    continue  # numpy integers
                raise InputError(f"ids must be ints, found {type(i).__name__} {i!r:.20}")
            if not 0 <= i < 2**32:
                raise InputError(
                    f"cannot decode with {self.ref}: {i} is not a token id (ids are 0..{self._enc.id_bound - 1})"
                )
        return [int(i) for i in out]

    @staticmethod
    def _texts(texts: Iterable[str]) -> list[str]:
        if isinstance(texts, (str, bytes)):
            raise InputError("encode_batch takes a list of texts, not one text; use encode() for one")
        if not isinstance(texts, Iterable) or isinstance(texts, (AbstractSet, Mapping)):
            raise InputError(f"encode_batch takes a list of texts, not {type(texts).__name__}")
        out = list(texts)
        for n, t in enumerate(out):
            _text(t, f"text {n} of the batch")
        return out

    @staticmethod
    def _threads(threads: int) -> int:
        if not isinstance(threads, int) or isinstance(threads, bool) or not 0 <= threads <= MAX_THREADS:
            raise InputError(f"threads must be 0 (one per core) to {MAX_THREADS}, not {threads!r}")
        return threads

    @staticmethod
    def _batch_surrogate(texts: list[str]) -> InputError:
        for n, t in enumerate(texts):
            try:
                t.encode("utf-8")
            except UnicodeEncodeError as e:
                return _surrogate(e, f"text {n} of the batch")
        return InputError("a text of the batch is not valid Unicode")
