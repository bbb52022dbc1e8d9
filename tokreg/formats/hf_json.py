"""Hugging Face `tokenizer.json`, the file: reading and writing the JSON document, and the
pieces of its syntax that more than one algorithm uses. What each algorithm's model,
normalizer and pre-tokenizer mean is the algorithm's HF codec's business (algorithms/*/hf.py).

- GPT-2's byte-to-unicode table (`B2U`, `U2B`): byte-level BPE files spell token bytes with it
  ("Ġthe"). It exists only here: the registry stores raw bytes.
- Regex dialects: tokreg's patterns run on fancy-regex, HF's on Oniguruma (`to_onig`,
  `from_onig`).
- `split_step` / `read_split`: the Split pre-tokenizer that carries a tokreg pattern.
- `added_tokens`: special tokens as HF's `added_tokens` entries.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from typing import Any, Optional, Union

from .. import patterns
from ..errors import InputError
from ..files import read_input
from . import strict_json


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's table: printable bytes map to themselves, the rest to U+0100 onwards."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
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


def mapped(raw: bytes) -> str:
    """Token bytes in GPT-2's byte-to-unicode spelling."""
    return "".join(B2U[b] for b in raw)


def unmapped(s: str) -> Optional[bytes]:
    """The bytes of a GPT-2-spelled token, or None when it holds a character outside the table."""
    try:
        return bytes(U2B[c] for c in s)
    except KeyError:
        return None


# -- regex dialects ---------------------------------------------------------------------------------


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


# -- the Split pre-tokenizer ----------------------------------------------------------------------

# HF's Split cuts the text at the pattern's matches and, by its `behavior`, keeps the matches
# and the text between them as pieces (`Isolated`), or only the matches (`Removed` with
# `invert=true`: the text between them is removed). tokreg keeps only the matches unless a
# version's config says `keep_gaps`. The built-in gpt2 / cl100k / o200k patterns match all text,
# so for them the two are the same and they are written as `Isolated`, as HF's own files do.
ISOLATED_OK = {patterns.BUILTIN[n] for n in ("gpt2", "cl100k", "o200k") if n in patterns.BUILTIN}


def split_step(pattern: str, keep_gaps: bool = False) -> dict[str, Any]:
    isolated = keep_gaps or pattern in ISOLATED_OK
    behavior, invert = ("Isolated", False) if isolated else ("Removed", True)
    return {"type": "Split", "pattern": {"Regex": to_onig(pattern)}, "behavior": behavior, "invert": invert}


def read_split(step: Mapping[str, Any], where: str) -> tuple[str, bool]:
    """(tokreg regex, keep_gaps) of a Split step: `Isolated` (either `invert`: the pieces are the
    same) keeps the gaps, `Removed` with `invert=true` only the matches. The other behaviors
    (`Removed` without invert, `MergedWithPrevious`, `MergedWithNext`, `Contiguous`) are
    refused: tokreg's pre-tokenizer does not implement them."""
    pattern = step.get("pattern")
    if not isinstance(pattern, dict) or not isinstance(pattern.get("Regex"), str):
        raise InputError(f"{where}: a Split on a literal string is not supported by tokreg (nothing was imported)")
    behavior, invert = step.get("behavior"), step.get("invert", False)
    if not isinstance(invert, bool) or not isinstance(behavior, str):
        raise InputError(f"{where}: a Split step's behavior {behavior!r:.40} / invert {invert!r:.20} is malformed")
    regex = patterns.canonical_regex(from_onig(pattern["Regex"]), f"{where}: the Split pattern")
    if behavior == "Isolated":
        return regex, regex not in ISOLATED_OK
    if (behavior, invert) == ("Removed", True):
        return regex, False
    raise InputError(
        f"{where}: a Split with behavior {behavior} and invert={str(invert).lower()} is not supported by tokreg "
        "(it keeps the pattern's matches, with behavior Removed and invert=true, or the matches and the text "
        "between them, with Isolated); nothing was imported"
    )


# -- added tokens -------------------------------------------------------------------------------


def added_tokens(specials: Iterable[tuple[int, str]]) -> list[dict[str, Any]]:
    """HF `added_tokens` entries for special tokens given as (id, text)."""
    return [
        {
            "id": i,
            "content": s,
            "single_word": False,
            "lstrip": False,
            "rstrip": False,
            "normalized": False,
            "special": True,
        }
        for i, s in specials
    ]


def read_added(doc: Mapping[str, Any], where: str, *, normalized_ok: bool) -> dict[int, str]:
    """id -> content of the `added_tokens`, which tokreg reads as its special tokens. Refuses
    the entries whose matching tokreg does not reproduce: tokens that are not special (HF
    matches them inside ordinary text), `lstrip`, `rstrip` and `single_word` (HF widens or
    narrows the match), and `normalized` where the pipeline has a normalizer and `normalized_ok`
    is false (HF matches them in normalized text)."""
    added = doc.get("added_tokens") or []
    if not isinstance(added, list) or not all(isinstance(a, dict) for a in added):
        raise InputError(f"{where}: added_tokens is not a list of tokens")
    out: dict[int, str] = {}
    for a in added:
        content, i = a.get("content"), a.get("id")
        if not isinstance(content, str) or not content:
            raise InputError(f"{where}: an added token's content is {content!r:.40}, not a non-empty string")
        if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < 2**32:
            raise InputError(f"{where}: the added token {content[:40]!r} has the id {i!r:.30}; ids are 0..4294967295")
        if i in out:
            raise InputError(f"{where}: the added tokens {out[i][:40]!r} and {content[:40]!r} share the id {i}")
        flags = [k for k in ("lstrip", "rstrip", "single_word") if a.get(k, False) is not False]
        if a.get("special", False) is not True:
            flags.append("special=false")
        if not normalized_ok and a.get("normalized", False) is not False:
            flags.append("normalized")
        if flags:
            raise InputError(
                f"{where}: the added token {content[:40]!r} has {', '.join(flags)}, which tokreg's special tokens do "
                "not implement (they match their exact text); nothing was imported"
            )
        out[i] = content
    return out


# -- the document --------------------------------------------------------------------------------


def document(specials: Iterable[tuple[int, str]], **parts: Any) -> dict[str, Any]:
    """A tokenizer.json document: its version, no truncation or padding, the special tokens
    (id, text) as added tokens, then `parts` (normalizer, pre_tokenizer, model...)."""
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added_tokens(specials), **parts}


def dumps(doc: Mapping[str, Any]) -> bytes:
    return json.dumps(doc, ensure_ascii=False, indent=2).encode("utf-8") + b"\n"


def read(path: Union[str, os.PathLike[str]]) -> tuple[dict[str, Any], dict[str, Any], str]:
    """(document, model, model type) of a tokenizer.json; refuses what is not one."""
    where = os.fspath(path)
    raw = read_input(path, "give the tokenizer.json file")
    doc = strict_json.loads(raw, where, "Hugging Face tokenizer.json")
    model = doc.get("model") if isinstance(doc, dict) else None
    if not isinstance(model, dict):
        raise InputError(f'{where}: not a Hugging Face tokenizer.json (no "model")')
    kind = model.get("type") or ("BPE" if "merges" in model else None)
    if not isinstance(kind, str):
        raise InputError(f'{where}: not a Hugging Face tokenizer.json (its model "type" is {kind!r:.40})')
    return doc, model, kind
