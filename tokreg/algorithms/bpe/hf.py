"""Hugging Face `tokenizer.json` for the byte- and character-level BPE flavours, both ways.

Byte-level BPE is written the way GPT-2-family files are:

    pre_tokenizer  Sequence[Split(tokreg pattern), ByteLevel(use_regex=false)]
    model          BPE: vocab + merges over GPT-2's byte-to-unicode strings ("Ġthe")
    decoder        ByteLevel;  special tokens are `added_tokens`

Character-level BPE (without an end-of-word suffix) is a BPE model over the token strings with
`unk_token`, a Split keeping only the pattern's matches, and a Fuse decoder. Reading accepts
exactly these pipelines (and GPT-2's own ByteLevel(use_regex=true)), with a Split that keeps
the text between matches too (`Isolated`: the config's `keep_gaps`), and refuses the rest,
and every file tokreg would encode differently from HF tokenizers (see `read`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional

from ... import _core, patterns
from ...data import MergeRow, TokenizerData, TokenRow
from ...errors import InputError
from ...formats import hf_json
from .. import template
from ..interfaces import HfCodec
from .model import BYTE_LEVEL, CHAR_LEVEL, ByteBpeConfig, CharBpeConfig


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


def _export(
    data: TokenizerData, ref: str, *, byte_level: bool, pattern: str, keep_gaps: bool, unk: Optional[str]
) -> dict[str, Any]:
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
                hf_json.split_step(pattern, keep_gaps),
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
        pre = hf_json.split_step(pattern, keep_gaps)
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
        "post_processor": template.hf_for(data),
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


def _is_byte_level(doc: Mapping[str, Any]) -> bool:
    """Whether a BPE tokenizer.json is byte-level (its pre-tokenizer has a ByteLevel step)."""
    return any(isinstance(s, dict) and s.get("type") == "ByteLevel" for s in _steps(doc))


def _pattern(where: str, doc: Mapping[str, Any]) -> tuple[str, bool]:
    """(tokreg regex, keep_gaps) of the pre-tokenizer."""
    steps = _steps(doc)
    if not all(isinstance(s, dict) for s in steps):
        raise _unsupported(where, "a malformed pre-tokenizer")
    types = [s.get("type") for s in steps]
    splits = [s for s in steps if s.get("type") == "Split"]
    levels = [s for s in steps if s.get("type") == "ByteLevel"]
    if len(steps) != len(splits) + len(levels) or len(splits) > 1 or len(levels) > 1:
        raise _unsupported(where, f"the pre-tokenizer {[str(t)[:30] for t in types]}")
    regex: Optional[str] = None
    keep_gaps = False
    if splits:
        if levels and types.index("ByteLevel") < types.index("Split"):
            raise _unsupported(where, "a Split after ByteLevel")
        regex, keep_gaps = hf_json.read_split(splits[0], where)
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
    return regex, keep_gaps


def _id(value: Any, where: str, what: str) -> int:
    """A token id from the file: an int in 0..2^32-1 (not a bool, a float or a string)."""
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 2**32:
        raise InputError(f"{where}: {what} has the id {value!r:.30}; ids are integers from 0 to 4294967295")
    return value


def _read(
    doc: Mapping[str, Any], model: Mapping[str, Any], where: str, *, byte_level: bool
) -> tuple[TokenizerData, str, bool]:
    """(data without config, regex, keep_gaps) of a BPE tokenizer.json; the flavour's codec
    sets the config. Refuses what tokreg would encode differently from HF tokenizers."""
    if doc.get("normalizer") is not None:
        norm = doc["normalizer"]
        kind = norm.get("type") if isinstance(norm, dict) else norm
        raise _unsupported(where, f"the normalizer {str(kind)[:40]}")
    for key in ("continuing_subword_prefix", "end_of_word_suffix", "dropout"):
        if model.get(key):
            raise _unsupported(where, f"model.{key}={str(model[key])[:40]!r}")
    if model.get("byte_fallback"):
        raise _unsupported(where, "byte_fallback")
    regex, keep_gaps = _pattern(where, doc)
    # No normalizer (refused above), so `normalized` changes nothing.
    specials = hf_json.read_added(doc, where, normalized_ok=True)
    vocab_in = model.get("vocab")
    if not isinstance(vocab_in, dict) or not vocab_in:
        raise InputError(f"{where}: the BPE model has no vocab of token -> id")
    vocab: dict[str, int] = {k: _id(v, where, f"the token {k[:40]!r}") for k, v in vocab_in.items()}
    if model.get("fuse_unk") and model.get("unk_token") is not None:
        raise _unsupported(where, "fuse_unk=true")
    ignore_merges = model.get("ignore_merges", False)
    if not isinstance(ignore_merges, bool):
        raise InputError(f"{where}: model.ignore_merges is {ignore_merges!r:.20}, not true or false")
    if ignore_merges and not byte_level:
        raise _unsupported(where, "ignore_merges=true with a character-level vocab")

    def raw(s: str) -> bytes:
        if not byte_level:
            return s.encode("utf-8")
        b = hf_json.unmapped(s)
        if b is None:
            raise InputError(
                f"{where}: token {s[:40]!r} is not in GPT-2's byte-to-unicode alphabet, but the pre-tokenizer is "
                "ByteLevel"
            )
        return b

    merges_in = model.get("merges", [])
    if not isinstance(merges_in, list):
        raise InputError(f"{where}: model.merges is not a list")
    merges: list[MergeRow] = []
    pairs: set[tuple[int, int]] = set()
    for rank, m in enumerate(merges_in):
        pair = tuple(m.split(" ", 1)) if isinstance(m, str) else tuple(m) if isinstance(m, list) else ()
        if (
            len(pair) != 2
            or any(not isinstance(p, str) or p not in vocab for p in pair)
            or (pair[0] + pair[1]) not in vocab
        ):
            raise InputError(f"{where}: merge {rank} {str(m)[:60]!r} names a token that is not in the vocab")
        left, right = vocab[pair[0]], vocab[pair[1]]
        if (left, right) in pairs:
            # HF keeps the last rank of a pair given twice, tokreg the first: refuse rather than differ.
            raise InputError(f"{where}: merge {rank} {str(m)[:60]!r} repeats an earlier merge; remove one")
        pairs.add((left, right))
        merges.append(MergeRow(rank=rank, left=left, right=right, result=vocab[pair[0] + pair[1]]))
    if byte_level and any(b.result <= a.result for a, b in zip(merges, merges[1:])):
        raise InputError(
            f"{where}: its merge results are not in id order; tokreg's byte-level encoder ranks "
            "tokens by id, so it would not encode like this file"
        )
    rows: dict[int, TokenRow] = {}
    results = {m.result for m in merges}
    for s, i in vocab.items():
        if specials.get(i) == s:
            continue  # the special token, listed in the vocab too
        if i in rows or i in specials:
            raise InputError(f"{where}: id {i} is used by two tokens")
        if not s:
            raise InputError(f"{where}: the vocab has an empty token (id {i}); remove it")
        b = raw(s)
        base = len(b) == 1 if byte_level else len(s) == 1 and i not in results
        rows[i] = TokenRow(id=i, bytes=b, kind=("byte" if byte_level else "char") if base else "merged")
    for i, s in specials.items():
        rows[i] = TokenRow(id=i, bytes=s.encode("utf-8"), kind="special")
    tokens = [rows[i] for i in sorted(rows)]
    if byte_level:
        _same_as_ranks(tokens, merges, ignore_merges, where)
    data = TokenizerData(algorithm="bpe", config={}, tokens=tokens, merges=merges, source="import:hf")
    return data, regex, keep_gaps


def _same_as_ranks(tokens: list[TokenRow], merges: list[MergeRow], ignore_merges: bool, where: str) -> None:
    """Refuses a byte-level file that HF tokenizers would encode differently from tiktoken's
    rule over its ids, which is how tokreg encodes byte-level BPE: its merges must be exactly
    the ones its ids imply (each token split by the tokens of lower id), and, unless HF looks
    whole pieces up first (`ignore_merges`), every multi-byte token must be made by a merge (HF
    could never produce one that is not, tiktoken's rule takes it whole)."""
    ordinary = [(t.id, t.bytes) for t in tokens if t.kind != "special"]
    try:
        implied = _core.merges_from_ranks(ordinary)
    except InputError as e:
        raise InputError(f"{where}: not a usable byte-level vocabulary: {e}") from None
    given = [(m.left, m.right, m.result) for m in merges]
    if given != implied:
        pairs = [(g, w) for g, w in zip(given, implied) if g != w]
        diff = pairs[0][0] if pairs else (given[len(implied) :] or implied[len(given) :])[0]
        raise InputError(
            f"{where}: its merges are not the ones its token ids imply (first difference: merge {diff}); tokreg "
            "encodes byte-level BPE by id, as tiktoken does, so it would not give this file's ids (nothing was "
            "imported)"
        )
    if not ignore_merges:
        made = {m.result for m in merges}
        lone = next((t for t in tokens if t.kind == "merged" and t.id not in made), None)
        if lone is not None:
            raise InputError(
                f"{where}: token {lone.id} ({lone.bytes[:40]!r}) is made by no merge, so HF tokenizers never produces "
                "it while tokreg would for a piece that is exactly that token; nothing was imported"
            )


class ByteLevelHf(HfCodec):
    def reads(self, model_type: str, doc: Mapping[str, Any]) -> bool:
        return model_type == "BPE" and _is_byte_level(doc)

    def read(self, doc: Mapping[str, Any], model: Mapping[str, Any], where: str) -> TokenizerData:
        data, regex, keep_gaps = _read(doc, model, where, byte_level=True)
        data.config = ByteBpeConfig(regex, keep_gaps).to_json()
        return data

    def write(self, data: TokenizerData, ref: str) -> bytes:
        config = BYTE_LEVEL.parse_config(data.config)
        return hf_json.dumps(
            _export(data, ref, byte_level=True, pattern=config.pattern, keep_gaps=config.keep_gaps, unk=None)
        )


class CharLevelHf(HfCodec):
    def reads(self, model_type: str, doc: Mapping[str, Any]) -> bool:
        return model_type == "BPE" and not _is_byte_level(doc)

    def read(self, doc: Mapping[str, Any], model: Mapping[str, Any], where: str) -> TokenizerData:
        data, regex, keep_gaps = _read(doc, model, where, byte_level=False)
        tokens = data.tokens
        n_chars = sum(1 for t in tokens if t.kind == "char")
        if any(t.kind != "char" for t in tokens[:n_chars]) or [t.id for t in tokens] != list(range(len(tokens))):
            raise InputError(
                f"{where}: a character-level vocab whose single characters are not ids 0..N-1 is not supported "
                "by tokreg's BPE (nothing was imported)"
            )
        unk = model.get("unk_token")
        if unk is not None and not isinstance(unk, str):
            raise InputError(f"{where}: model.unk_token is {unk!r:.40}, not a string")
        if unk is not None and unk not in data.special_tokens:
            # tokreg's encoder turns unknown characters into a special token; HF into any token.
            raise InputError(
                f"{where}: the unknown token {unk[:40]!r} is not one of the special added_tokens, which tokreg's "
                "character-level BPE needs it to be (nothing was imported)"
            )
        data.config = CharBpeConfig(regex, None, unk, keep_gaps).to_json()
        return data

    def write(self, data: TokenizerData, ref: str) -> bytes:
        config = CHAR_LEVEL.parse_config(data.config)
        if config.end_of_word_suffix:
            raise InputError(
                f"{ref}: character-level BPE with an end-of-word suffix cannot be written as hf: "
                "Hugging Face joins the suffix to a word's last character before merging "
                f"('t{config.end_of_word_suffix}'), while tokreg keeps it a symbol of its own, so the ids "
                "would differ; use --format tokreg"
            )
        doc = _export(
            data, ref, byte_level=False, pattern=config.pattern, keep_gaps=config.keep_gaps, unk=config.unk_token
        )
        return hf_json.dumps(doc)
