"""Every contender of the peer benchmark behind one small interface: make a fresh encoder of
cl100k_base or o200k_base, encode one text to a list of ids, encode a batch on 2 threads.

Each peer loads the vocabulary from the shared `.tiktoken` file where it can (tiktoken,
fastokens with its own preset of the pattern, splintr-rs, riptoken with the official pattern,
kitoken, which knows cl100k's and o200k's patterns from the vocabulary), from tokreg's Hugging
Face export of it (tokie, HF tokenizers), or else from the copy it bundles (bpe-openai, rs-bpe, quicktok: its
`Tokenizer(name, "")`, not the cached `get_encoding`); in every case its ids are checked against
tiktoken's on every input before it is timed. A peer that is not installed is left out with a
note. Thread counts of the Rust peers follow `RAYON_NUM_THREADS`, which the parent sets for each
child process (1 for single-thread measures, 2 for batches).
"""

from __future__ import annotations

import importlib.metadata as md
import os
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable

from benchmarks.common import CL100K_SPECIALS, DATA, O200K_SPECIALS
from tokreg.patterns import BUILTIN

THREADS = 2
SPECIALS = {"cl100k_base": CL100K_SPECIALS, "o200k_base": O200K_SPECIALS}
PATTERN = {"cl100k_base": "cl100k", "o200k_base": "o200k"}
#: cl100k's pattern as tiktoken first spelled it, without possessive quantifiers (splintr's regex
#: engine has none); it splits like the current one except a whitespace run ending a text, which
#: the id check would catch.
CL100K_PLAIN = (
    r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s"
)


@dataclass
class Contender:
    name: str
    dist: str  # the PyPI distribution, for its version
    source: str  # where its vocabulary comes from
    fresh: Callable[[str], Any]  # vocab name -> a new encoder object
    encode: Callable[[Any, str], list[int]]
    batch: Callable[[Any, list[str]], list[list[int]]]

    @property
    def version(self) -> str:
        try:
            return md.version(self.dist)
        except md.PackageNotFoundError:
            return "absent"


def _tiktoken_file(vocab: str) -> str:
    return str(DATA / f"{vocab}.tiktoken")


def _hf_file(vocab: str) -> str:
    """tokreg's Hugging Face export of the vocabulary (made once per machine and user)."""
    from benchmarks.vocabs import registry

    path = os.path.join(tempfile.gettempdir(), f"tokreg-bench-{os.getuid()}-{vocab}.json")
    if not os.path.exists(path):
        # Written beside and renamed into place: a benchmark running at the same time never
        # reads a half-written file.
        part = f"{path}.{os.getpid()}.part"
        registry().export(f"{vocab}@1", "hf", part)
        os.replace(part, path)
    return path


def _tokreg(vocab: str) -> Any:
    # A new compiled encoder, not the one tokreg shares per content hash (`_compiled`): its
    # caches start empty, as in a fresh process.
    import tokreg.encoding.tokenizer
    from benchmarks.vocabs import tokreg_content

    raw = tokreg_content(vocab)
    tokreg.encoding.tokenizer._compiled.clear()
    return tokreg.Tokenizer(raw, ref=f"{vocab}@1")


def _tiktoken(vocab: str) -> Any:
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    ranks = load_tiktoken_bpe(_tiktoken_file(vocab))
    return tiktoken.Encoding(
        vocab, pat_str=BUILTIN[PATTERN[vocab]], mergeable_ranks=ranks, special_tokens=SPECIALS[vocab]
    )


def _fastokens(vocab: str) -> Any:
    import fastokens

    # Its own preset of the vocabulary's pattern, not tokreg's spelling of it: fastokens runs its
    # hand-written scanner only on the pattern strings it knows, and tiktoken's current cl100k
    # spelling (possessive quantifiers, as in `tokreg.patterns`) sent it to its regex engine at
    # half its speed (13 against 24 MB/s on Python source).
    return fastokens.Tokenizer.from_tiktoken(_tiktoken_file(vocab), encoding=vocab, special_tokens=SPECIALS[vocab])


def _splintr(vocab: str) -> Any:
    import splintr

    pattern = CL100K_PLAIN if vocab == "cl100k_base" else BUILTIN[PATTERN[vocab]]
    return splintr.Tokenizer(_tiktoken_file(vocab), pattern, SPECIALS[vocab])


def _tokie(vocab: str) -> Any:
    import tokie

    return tokie.Tokenizer.from_json(_hf_file(vocab))


def _bpe_openai(vocab: str) -> Any:
    # The engine itself: the package's tiktoken-style wrapper refuses texts of a million
    # characters or more and re-encodes every text to check it.
    from bpe_openai import _bindings

    return _bindings.tokenizer_for_encoding(vocab)


def _rs_bpe(vocab: str) -> Any:
    from rs_bpe.bpe import openai

    return openai.cl100k_base() if vocab == "cl100k_base" else openai.o200k_base()


def _quicktok(vocab: str) -> Any:
    import quicktok

    return quicktok.Tokenizer(vocab, "")  # the bundled copy, a new object (get_encoding caches)


def _quicktok_batch(enc: Any, texts: list[str]) -> list[list[int]]:
    # Its batch gives two flat arrays (ids, offsets); made into lists here, as every other
    # contender's batch gives lists.
    ids, offsets = enc.encode_batch(texts, THREADS)
    flat, ends = ids.tolist(), offsets.tolist()
    return [flat[a:b] for a, b in zip(ends, ends[1:])]


def _riptoken(vocab: str) -> Any:
    import riptoken

    return riptoken.CoreBPE(riptoken.load_tiktoken_bpe(_tiktoken_file(vocab)), SPECIALS[vocab], BUILTIN[PATTERN[vocab]])


def _kitoken(vocab: str) -> Any:
    import kitoken

    return kitoken.Kitoken.from_tiktoken_file(_tiktoken_file(vocab))


def _hf(vocab: str) -> Any:
    from tokenizers import Tokenizer

    return Tokenizer.from_file(_hf_file(vocab))


def _pool_map(f: Callable[[str], list[int]], texts: list[str]) -> list[list[int]]:
    with ThreadPoolExecutor(THREADS) as pool:
        return list(pool.map(f, texts))


def _rs_bpe_batch(enc: Any, texts: list[str]) -> list[list[int]]:
    from rs_bpe.bpe import openai

    opts = openai.ParallelOptions(min_batch_size=1, chunk_size=max(1, len(texts) // (8 * THREADS)), max_threads=THREADS)
    return list(enc.encode_batch_parallel(texts, opts)[0])


CONTENDERS = [
    Contender(
        "tokreg",
        "tokreg",
        "registry (imported .tiktoken)",
        _tokreg,
        lambda e, t: e.encode_ordinary(t),
        lambda e, ts: e.encode_ordinary_batch(ts, threads=THREADS),
    ),
    Contender(
        "tiktoken",
        "tiktoken",
        ".tiktoken file",
        _tiktoken,
        lambda e, t: e.encode_ordinary(t),
        lambda e, ts: e.encode_ordinary_batch(ts, num_threads=THREADS),
    ),
    Contender(
        "fastokens",
        "fastokens",
        ".tiktoken file",
        _fastokens,
        lambda e, t: e.encode_ordinary(t).ids,
        lambda e, ts: [x.ids for x in e.encode_batch(ts)],
    ),
    Contender(
        "splintr",
        "splintr-rs",
        ".tiktoken file",
        _splintr,
        lambda e, t: e.encode_ordinary(t),
        lambda e, ts: e.encode_batch(ts),
    ),
    Contender(
        "tokie",
        "tokie",
        "HF export",
        _tokie,
        lambda e, t: e.encode(t, add_special_tokens=False).ids,
        lambda e, ts: [x.ids for x in e.encode_batch(ts, add_special_tokens=False)],
    ),
    Contender(
        "bpe-openai",
        "bpe-openai",
        "bundled copy",
        _bpe_openai,
        lambda e, t: e.encode(t),
        lambda e, ts: _pool_map(e.encode, ts),
    ),
    Contender(
        "rs-bpe",
        "rs-bpe",
        "bundled copy",
        _rs_bpe,
        lambda e, t: e.encode(t),
        _rs_bpe_batch,
    ),
    Contender(
        "quicktok",
        "quicktok-v1",
        "bundled copy",
        _quicktok,
        lambda e, t: e.encode_ordinary(t),
        _quicktok_batch,
    ),
    Contender(
        "riptoken",
        "riptoken",
        ".tiktoken file",
        _riptoken,
        lambda e, t: e.encode_ordinary(t),
        lambda e, ts: e.encode_ordinary_batch(ts),
    ),
    Contender(
        "kitoken",
        "kitoken",
        ".tiktoken file",
        _kitoken,
        lambda e, t: e.encode(t),
        lambda e, ts: e.encode_all(ts),
    ),
    Contender(
        "HF tokenizers",
        "tokenizers",
        "HF export",
        _hf,
        lambda e, t: e.encode(t, add_special_tokens=False).ids,
        lambda e, ts: [x.ids for x in e.encode_batch(ts, add_special_tokens=False)],
    ),
]


def available() -> list[Contender]:
    return [c for c in CONTENDERS if c.version != "absent"]
