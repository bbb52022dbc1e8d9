"""Hugging Face `tokenizer.json`, for BPE (byte-level and character-level). WordPiece and
Unigram are dispatch points that say "not supported yet".

Byte-level BPE is written the way GPT-2-family files are:

    pre_tokenizer  Sequence[Split(tokreg pattern, Isolated), ByteLevel(use_regex=false)]
    model          BPE: vocab + merges over GPT-2's byte-to-unicode strings ("Ġthe")
    decoder        ByteLevel;  special tokens are `added_tokens`

GPT-2's byte-to-unicode mapping exists only here: the registry stores raw bytes.
Character-level BPE (without an end-of-word suffix) is a BPE model over the token strings
with `unk_token`, a Split keeping only the pattern's matches, and a Fuse decoder.

tokreg keeps only what the pattern matches. `Isolated` would also emit the text between
matches, which the built-in gpt2 / cl100k / o200k patterns never leave; any other pattern is
written as Split(Removed, invert=true), which keeps exactly the matches. Import reads both.
"""

from __future__ import annotations

import json
import os
from typing import Any, Optional

from .. import patterns
from ..errors import InputError
from ..files import read_input
from ..result import MergeRow, TokenizerData, TokenRow


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's table: printable bytes map to themselves, the rest to U+0100 onwards."""
    bs = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


B2U = _bytes_to_unicode()
U2B = {u: b for b, u in B2U.items()}
ISOLATED_OK = {patterns.BUILTIN[n] for n in ("gpt2", "cl100k", "o200k") if n in patterns.BUILTIN}
# HF's ByteLevel(use_regex=true) pattern: GPT-2's, written out.
HF_BYTELEVEL_REGEX = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"


def _mapped(raw: bytes) -> str:
    return "".join(B2U[b] for b in raw)


def _swap_anchor(regex: str, old: str, new: str) -> str:
    """Replaces the anchor `old` by `new` where it is an anchor: not escaped, not in a class."""
    out, i, in_class = [], 0, False
    while i < len(regex):
        c = regex[i]
        if c == "\\" and i + 1 < len(regex):
            two = regex[i : i + 2]
            out.append(new if (two == old and not in_class) else two)
            i += 2
            continue
        if c == "[":
            in_class = True
        elif c == "]":
            in_class = False
        out.append(new if (c == old and not in_class) else c)
        i += 1
    return "".join(out)


# Oniguruma reads `X{n,m}+` as "(X{n,m}) one or more times", not as possessive; the atomic
# group says the same thing as fancy-regex's possessive interval.
_POSSESSIVE_INTERVALS = [(r"\p{N}{1,3}+", r"(?>\p{N}{1,3})")]


def to_onig(regex: str) -> str:
    """tokreg's regexes (fancy-regex) in Oniguruma's dialect, which HF tokenizers runs: there `$`
    is the end of a *line*, so the end-of-text anchor is written `\\z`; and possessive
    intervals become atomic groups."""
    for ours, theirs in _POSSESSIVE_INTERVALS:
        regex = regex.replace(ours, theirs)
    return _swap_anchor(regex, "$", "\\z")


def from_onig(regex: str) -> str:
    for ours, theirs in _POSSESSIVE_INTERVALS:
        regex = regex.replace(theirs, ours)
    return _swap_anchor(regex, "\\z", "$")


def _split(pattern: str) -> dict[str, Any]:
    if pattern in ISOLATED_OK:
        return {
            "type": "Split",
            "pattern": {"Regex": to_onig(pattern)},
            "behavior": "Isolated",
            "invert": False,
        }
    return {"type": "Split", "pattern": {"Regex": to_onig(pattern)}, "behavior": "Removed", "invert": True}


def _bpe_model(vocab: dict[str, int], merges: list[tuple[str, str]], unk: Optional[str]) -> dict[str, Any]:
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


def _added(data: TokenizerData) -> list[dict[str, Any]]:
    return [
        {
            "id": t.id,
            "content": t.bytes.decode("utf-8"),
            "single_word": False,
            "lstrip": False,
            "rstrip": False,
            "normalized": False,
            "special": True,
        }
        for t in data.tokens
        if t.kind == "special"
    ]


def export(data: TokenizerData, ref: str) -> bytes:
    """The `tokenizer.json` of a version."""
    if data.algorithm == "bpe":
        doc = _export_bpe(data, ref)
    elif data.algorithm == "wordpiece":
        from . import hf_wordpiece

        doc = hf_wordpiece.export(data, _added(data))
    elif data.algorithm == "unigram":
        from . import hf_unigram

        doc = hf_unigram.export(data)
    else:
        raise InputError(f"{ref}: cannot export a {data.algorithm} tokenizer to the hf format")
    return json.dumps(doc, ensure_ascii=False, indent=2).encode("utf-8") + b"\n"


def _export_bpe(data: TokenizerData, ref: str) -> dict[str, Any]:
    cfg = data.config
    byte_level = bool(cfg.get("byte_level", True))
    text = {
        t.id: (_mapped(t.bytes) if byte_level and t.kind != "special" else t.bytes.decode("utf-8"))
        for t in data.tokens
    }
    if byte_level:
        vocab = {text[t.id]: t.id for t in data.tokens if t.kind != "special"}
        pre = {
            "type": "Sequence",
            "pretokenizers": [
                _split(cfg["pattern"]),
                {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False},
            ],
        }
        decoder: Optional[dict[str, Any]] = {
            "type": "ByteLevel",
            "add_prefix_space": True,
            "trim_offsets": True,
            "use_regex": True,
        }
        unk = None
    else:
        if cfg.get("end_of_word_suffix"):
            raise InputError(
                f"{ref}: character-level BPE with an end-of-word suffix cannot be written as hf: "
                "Hugging Face joins the suffix to a word's last character before merging "
                f"('t{cfg['end_of_word_suffix']}'), while tokreg keeps it a symbol of its own, so the ids "
                "would differ; use --format tokreg"
            )
        vocab = {text[t.id]: t.id for t in data.tokens}
        pre = _split(cfg["pattern"])
        decoder = {"type": "Fuse"}
        unk = cfg.get("unk_token")
    if len(vocab) != sum(1 for t in data.tokens if byte_level is False or t.kind != "special"):
        raise InputError(
            f"{ref}: two tokens share a string (a special token equals an ordinary one), which a "
            "tokenizer.json vocab cannot hold"
        )
    merges = [(text[m.left], text[m.right]) for m in data.merges]
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": _added(data),
        "normalizer": None,
        "pre_tokenizer": pre,
        "post_processor": None,
        "decoder": decoder,
        "model": _bpe_model(vocab, merges, unk),
    }


# -- import -----------------------------------------------------------------------------------------


def read(path: str | os.PathLike[str]) -> TokenizerData:
    """A `tokenizer.json` as `TokenizerData` (nothing is written)."""
    where = str(path)
    raw = read_input(path, "give the tokenizer.json file")
    try:
        doc = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InputError(f"{where}: not a Hugging Face tokenizer.json ({e})") from None
    model = doc.get("model") if isinstance(doc, dict) else None
    if not isinstance(model, dict):
        raise InputError(f'{where}: not a Hugging Face tokenizer.json (no "model")')
    kind = model.get("type") or ("BPE" if "merges" in model else None)
    if kind == "BPE":
        return _read_bpe(doc, model, where)
    if kind == "WordPiece":
        from . import hf_wordpiece

        return hf_wordpiece.read(doc, model, where)
    if kind == "Unigram":
        from . import hf_unigram

        return hf_unigram.read(doc, model, where)
    if kind == "WordLevel":
        raise InputError(f"{where}: hf WordLevel models are not supported (BPE, WordPiece and Unigram are)")
    raise InputError(f"{where}: unknown hf model type {kind!r}")


def _unsupported(where: str, what: str) -> InputError:
    return InputError(f"{where}: {what} is not supported by tokreg's BPE (nothing was imported)")


def _pattern(where: str, doc: dict[str, Any]) -> tuple[bool, str]:
    """(byte_level, regex) from the pre-tokenizer."""
    pre = doc.get("pre_tokenizer")
    steps = [] if pre is None else pre.get("pretokenizers", []) if pre.get("type") == "Sequence" else [pre]
    types = [s.get("type") for s in steps]
    splits = [s for s in steps if s.get("type") == "Split"]
    levels = [s for s in steps if s.get("type") == "ByteLevel"]
    if len(steps) != len(splits) + len(levels) or len(splits) > 1 or len(levels) > 1:
        raise _unsupported(where, f"the pre-tokenizer {types}")
    regex: Optional[str] = None
    if splits:
        s = splits[0]
        if levels and types.index("ByteLevel") < types.index("Split"):
            raise _unsupported(where, "a Split after ByteLevel")
        if "Regex" not in s.get("pattern", {}):
            raise _unsupported(where, "a Split on a literal string")
        if (s.get("behavior"), bool(s.get("invert"))) not in (("Isolated", False), ("Removed", True)):
            raise _unsupported(
                where, f"a Split with behavior {s.get('behavior')} and invert={s.get('invert')}"
            )
        regex = from_onig(s["pattern"]["Regex"])
    if levels:
        lv = levels[0]
        if lv.get("add_prefix_space"):
            raise _unsupported(where, "ByteLevel with add_prefix_space=true")
        if lv.get("use_regex", True):
            if regex is not None:
                raise _unsupported(where, "a Split followed by ByteLevel(use_regex=true)")
            regex = patterns.BUILTIN["gpt2"]  # the same pattern as HF_BYTELEVEL_REGEX
    if regex is None:
        raise _unsupported(where, "a pre-tokenizer without a Split pattern")
    if patterns.name_of(regex) == "custom":
        _, regex = patterns.resolve(regex)  # checked by the core, in its canonical spelling
    return bool(levels), regex


def _read_bpe(doc: dict[str, Any], model: dict[str, Any], where: str) -> TokenizerData:
    if doc.get("normalizer") is not None:
        raise _unsupported(where, f"the normalizer {doc['normalizer'].get('type')}")
    for key in ("continuing_subword_prefix", "end_of_word_suffix", "dropout"):
        if model.get(key):
            raise _unsupported(where, f"model.{key}={model[key]!r}")
    if model.get("byte_fallback"):
        raise _unsupported(where, "byte_fallback")
    byte_level, regex = _pattern(where, doc)
    added = doc.get("added_tokens") or []
    if any(not a.get("special", False) for a in added):
        raise _unsupported(where, "an added token that is not special")
    specials = {int(a["id"]): str(a["content"]) for a in added}
    vocab: dict[str, int] = {str(k): int(v) for k, v in model.get("vocab", {}).items()}
    unk = model.get("unk_token")
    if model.get("fuse_unk") and unk is not None:
        raise _unsupported(where, "fuse_unk=true")

    def raw(s: str) -> bytes:
        if not byte_level:
            return s.encode("utf-8")
        try:
            return bytes(U2B[c] for c in s)
        except KeyError:
            raise InputError(
                f"{where}: token {s!r} is not in GPT-2's byte-to-unicode alphabet, but the "
                "pre-tokenizer is ByteLevel"
            ) from None

    merges_in = model.get("merges", [])
    pairs = [tuple(m.split(" ", 1)) if isinstance(m, str) else tuple(m) for m in merges_in]
    merges: list[MergeRow] = []
    results: set[int] = set()
    for rank, pair in enumerate(pairs):
        if len(pair) != 2 or any(p not in vocab for p in pair) or (pair[0] + pair[1]) not in vocab:
            raise InputError(f"{where}: merge {rank} {pair!r} names a token that is not in the vocab")
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
        if i in rows or i in specials:
            raise InputError(f"{where}: id {i} is used by two tokens")
        b = raw(s)
        base = len(b) == 1 if byte_level else len(s) == 1 and i not in results
        rows[i] = TokenRow(id=i, bytes=b, kind=("byte" if byte_level else "char") if base else "merged")
    for i, s in specials.items():
        rows[i] = TokenRow(id=i, bytes=s.encode("utf-8"), kind="special")
    tokens = [rows[i] for i in sorted(rows)]
    config: dict[str, Any] = {"byte_level": byte_level, "pattern": regex}
    if not byte_level:
        n_chars = sum(1 for t in tokens if t.kind == "char")
        if any(t.kind != "char" for t in tokens[:n_chars]) or [t.id for t in tokens] != list(
            range(len(tokens))
        ):
            raise _unsupported(where, "a character-level vocab whose single characters are not ids 0..N-1")
        config["end_of_word_suffix"] = None
        config["unk_token"] = unk
    return TokenizerData(algorithm="bpe", config=config, tokens=tokens, merges=merges, source="import:hf")
