"""Hugging Face `tokenizer.json` for BPE, shared by its two flavours (byte_bpe, char_bpe).

Byte-level BPE is written the way GPT-2-family files are:

    pre_tokenizer  Sequence[Split(tokreg pattern), ByteLevel(use_regex=false)]
    model          BPE: vocab + merges over GPT-2's byte-to-unicode strings ("Ġthe")
    decoder        ByteLevel;  special tokens are `added_tokens`

Character-level BPE (without an end-of-word suffix) is a BPE model over the token strings with
`unk_token`, a Split keeping only the pattern's matches, and a Fuse decoder. Reading accepts
exactly these pipelines (and GPT-2's own ByteLevel(use_regex=true)) and refuses the rest.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional

from .. import patterns
from ..data import MergeRow, TokenizerData, TokenRow
from ..errors import InputError
from ..formats import hf_json


def _model(vocab: dict[str, int], merges: list[tuple[str, str]], unk: Optional[str]) -> dict[str, Any]:
    # The "a b" string form is read by every tokenizers release; pairs only when a token has a space.
    spaced = any(" " in a or " " in b for a, b in merges)
    return {
        "type": "BPE",
        "dropout": None,
        "unk_token": unk,
        "continuing_subword_prefix": None,
        "end_of_word_suffix": None,
        "fuse_unk": False,
        "byte_fallback": False,
        "ignore_merges": False,
        "vocab": vocab,
        "merges": [[a, b] for a, b in merges] if spaced else [f"{a} {b}" for a, b in merges],
    }


def export(data: TokenizerData, ref: str, *, byte_level: bool, pattern: str, unk: Optional[str]) -> dict[str, Any]:
    """The tokenizer.json document of a BPE version."""
    text = {
        t.id: (hf_json.mapped(t.bytes) if byte_level and t.kind != "special" else t.bytes.decode("utf-8"))
        for t in data.tokens
    }
    pre: dict[str, Any]
    if byte_level:
        vocab = {text[t.id]: t.id for t in data.tokens if t.kind != "special"}
        pre = {
            "type": "Sequence",
            "pretokenizers": [
                hf_json.split_step(pattern),
                {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False},
            ],
        }
        decoder: dict[str, Any] = {
            "type": "ByteLevel",
            "add_prefix_space": True,
            "trim_offsets": True,
            "use_regex": True,
        }
    else:
        vocab = {text[t.id]: t.id for t in data.tokens}
        pre = hf_json.split_step(pattern)
        decoder = {"type": "Fuse"}
    if len(vocab) != sum(1 for t in data.tokens if not byte_level or t.kind != "special"):
        raise InputError(
            f"{ref}: two tokens share a string (a special token equals an ordinary one), which a "
            "tokenizer.json vocab cannot hold"
        )
    merges = [(text[m.left], text[m.right]) for m in data.merges]
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": hf_json.added_tokens(
            (t.id, t.bytes.decode("utf-8")) for t in data.tokens if t.kind == "special"
        ),
        "normalizer": None,
        "pre_tokenizer": pre,
        "post_processor": None,
        "decoder": decoder,
        "model": _model(vocab, merges, unk),
    }


def _unsupported(where: str, what: str) -> InputError:
    return InputError(f"{where}: {what} is not supported by tokreg's BPE (nothing was imported)")


def _steps(doc: Mapping[str, Any]) -> list[Any]:
    pre = doc.get("pre_tokenizer")
    if pre is None:
        return []
    if not isinstance(pre, dict):
        return [pre]
    steps = pre.get("pretokenizers", []) if pre.get("type") == "Sequence" else [pre]
    return steps if isinstance(steps, list) else [steps]


def is_byte_level(doc: Mapping[str, Any]) -> bool:
    """Whether a BPE tokenizer.json is byte-level (its pre-tokenizer has a ByteLevel step)."""
    return any(isinstance(s, dict) and s.get("type") == "ByteLevel" for s in _steps(doc))


def _pattern(where: str, doc: Mapping[str, Any]) -> str:
    """The tokreg regex of the pre-tokenizer."""
    steps = _steps(doc)
    if not all(isinstance(s, dict) for s in steps):
        raise _unsupported(where, "a malformed pre-tokenizer")
    types = [s.get("type") for s in steps]
    splits = [s for s in steps if s.get("type") == "Split"]
    levels = [s for s in steps if s.get("type") == "ByteLevel"]
    if len(steps) != len(splits) + len(levels) or len(splits) > 1 or len(levels) > 1:
        raise _unsupported(where, f"the pre-tokenizer {types}")
    regex: Optional[str] = None
    if splits:
        if levels and types.index("ByteLevel") < types.index("Split"):
            raise _unsupported(where, "a Split after ByteLevel")
        regex = hf_json.read_split(splits[0], where)
    if levels:
        lv = levels[0]
        if lv.get("add_prefix_space"):
            raise _unsupported(where, "ByteLevel with add_prefix_space=true")
        if lv.get("use_regex", True):
            if regex is not None:
                raise _unsupported(where, "a Split followed by ByteLevel(use_regex=true)")
            regex = patterns.BUILTIN["gpt2"]  # HF's ByteLevel regex is GPT-2's pattern
    if regex is None:
        raise _unsupported(where, "a pre-tokenizer without a Split pattern")
    if patterns.name_of(regex) == "custom":
        _, regex = patterns.resolve(regex)  # checked by the core, in its canonical spelling
    return regex


def read(
    doc: Mapping[str, Any], model: Mapping[str, Any], where: str, *, byte_level: bool
) -> tuple[TokenizerData, str]:
    """(data without config, regex) of a BPE tokenizer.json; the flavour's module sets the config."""
    if doc.get("normalizer") is not None:
        norm = doc["normalizer"]
        raise _unsupported(where, f"the normalizer {norm.get('type') if isinstance(norm, dict) else repr(norm)}")
    for key in ("continuing_subword_prefix", "end_of_word_suffix", "dropout"):
        if model.get(key):
            raise _unsupported(where, f"model.{key}={model[key]!r}")
    if model.get("byte_fallback"):
        raise _unsupported(where, "byte_fallback")
    regex = _pattern(where, doc)
    added = doc.get("added_tokens") or []
    if not isinstance(added, list) or any(not isinstance(a, dict) for a in added):
        raise InputError(f"{where}: added_tokens is not a list of tokens")
    if any(not a.get("special", False) for a in added):
        raise _unsupported(where, "an added token that is not special")
    try:
        specials = {int(a["id"]): str(a["content"]) for a in added}
        vocab: dict[str, int] = {str(k): int(v) for k, v in dict(model.get("vocab") or {}).items()}
    except (KeyError, TypeError, ValueError) as e:
        raise InputError(f"{where}: malformed vocab or added_tokens ({type(e).__name__}: {e})") from None
    if model.get("fuse_unk") and model.get("unk_token") is not None:
        raise _unsupported(where, "fuse_unk=true")

    def raw(s: str) -> bytes:
        if not byte_level:
            return s.encode("utf-8")
        b = hf_json.unmapped(s)
        if b is None:
            raise InputError(
                f"{where}: token {s!r} is not in GPT-2's byte-to-unicode alphabet, but the pre-tokenizer is ByteLevel"
            )
        return b

    merges_in = model.get("merges", [])
    if not isinstance(merges_in, list):
        raise InputError(f"{where}: model.merges is not a list")
    merges: list[MergeRow] = []
    results: set[int] = set()
    for rank, m in enumerate(merges_in):
        pair = tuple(m.split(" ", 1)) if isinstance(m, str) else tuple(m) if isinstance(m, list) else ()
        if (
            len(pair) != 2
            or any(not isinstance(p, str) or p not in vocab for p in pair)
            or (pair[0] + pair[1]) not in vocab
        ):
            raise InputError(f"{where}: merge {rank} {m!r} names a token that is not in the vocab")
        z = vocab[pair[0] + pair[1]]
        merges.append(MergeRow(rank=rank, left=vocab[pair[0]], right=vocab[pair[1]], result=z))
        results.add(z)
    if byte_level and any(b.result <= a.result for a, b in zip(merges, merges[1:])):
        raise InputError(
            f"{where}: its merge results are not in id order; tokreg's byte-level encoder ranks "
            "tokens by id, so it would not encode like this file"
        )
    rows: dict[int, TokenRow] = {}
    for s, i in vocab.items():
        if specials.get(i) == s:
            continue  # the special token, listed in the vocab too
        if i in rows or i in specials or i < 0:
            raise InputError(f"{where}: id {i} is used by two tokens or is negative")
        b = raw(s)
        base = len(b) == 1 if byte_level else len(s) == 1 and i not in results
        rows[i] = TokenRow(id=i, bytes=b, kind=("byte" if byte_level else "char") if base else "merged")
    for i, s in specials.items():
        rows[i] = TokenRow(id=i, bytes=s.encode("utf-8"), kind="special")
    tokens = [rows[i] for i in sorted(rows)]
    return TokenizerData(algorithm="bpe", config={}, tokens=tokens, merges=merges, source="import:hf"), regex
