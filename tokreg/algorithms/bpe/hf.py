"""Hugging Face `tokenizer.json` for the byte- and character-level BPE flavours, both ways.

Byte-level BPE is written the way GPT-2-family files are:

    pre_tokenizer  Sequence[Split(tokreg pattern), ByteLevel(use_regex=false)]
    model          BPE: vocab + merges over GPT-2's byte-to-unicode strings ("Ġthe")
    decoder        ByteLevel;  special tokens are `added_tokens`

Every token keeps its tokreg id in HF. `tokenizers` gives an added token the id its content has
in the model's vocab, and only a token missing from it the next free id (after the vocab's
size, which is a count, not the highest id); so the specials are written in the model's vocab
too, at their ids, and no added token is ever given one.

tokreg encodes byte-level BPE by rank, as tiktoken does: a piece that is a token is that token;
otherwise the adjacent pair whose join has the lowest rank is merged, again and again. HF's BPE
merges the listed pair of lowest rank. The two agree when the merge list has, for each token,
the pair that the rank rule itself joins last when it encodes that token's bytes, listed in the
token's rank order (`rank_merges`): inside any text a token can only be formed from that pair,
since every merge that forms it happens within its bytes, in the order it does alone. A token
the rank rule never forms from its own bytes (a rank file can hold such tokens: `している` in a
128k file) is given by tiktoken only for a piece that is exactly it; HF does that lookup first
when `ignore_merges` is true, which is written then (and only then).

Character-level BPE (without an end-of-word suffix) is a BPE model over the token strings with
`unk_token`, a Split keeping only the pattern's matches, and a Fuse decoder. Reading accepts
exactly these pipelines (and GPT-2's own ByteLevel(use_regex=true)), with a Split that keeps
the text between matches too (`Isolated`: the config's `keep_gaps`), and refuses the rest,
and every file tokreg would encode differently from HF tokenizers (see `read`); a file refused
here is read by hf_pipe.py, which keeps its HF pipeline, if it can run every step of it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple, Optional

from ... import _core, patterns
from ...data import MergeRow, TokenizerData, TokenRow
from ...errors import InputError
from ...formats import hf_json
from .. import template
from ..interfaces import HfCodec
from . import hf_pipe
from .model import BYTE_LEVEL, CHAR_LEVEL, ByteBpeConfig, CharBpeConfig


def _model(
    vocab: dict[str, int], merges: list[tuple[str, str]], unk: Optional[str], ignore_merges: bool
) -> dict[str, Any]:
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
        "ignore_merges": ignore_merges,
        "vocab": vocab,
        "merges": [[a, b] for a, b in merges] if spaced else [f"{a} {b}" for a, b in merges],
    }


def _last_pair(piece: bytes, ranks: dict[bytes, int]) -> Optional[tuple[bytes, bytes]]:
    """The two parts the rank rule joins last when it encodes `piece` byte by byte with every
    rank (lower ranks first, the leftmost pair on ties), or None when it never joins them all.

        >>> _last_pair(b"abc", {b"a": 0, b"b": 1, b"c": 2, b"bc": 3, b"abc": 4})
        (b'a', b'bc')
    """
    parts = [piece[i : i + 1] for i in range(len(piece))]
    # joined[k]: the rank of parts[k] + parts[k + 1], or None
    joined = [ranks.get(a + b) for a, b in zip(parts, parts[1:])]
    last = None
    while len(parts) > 1:
        candidates = [(r, k) for k, r in enumerate(joined) if r is not None]
        if not candidates:
            return None
        _, k = min(candidates)  # the lowest rank, the leftmost of equal ones
        last = (parts[k], parts[k + 1])
        parts[k : k + 2] = [parts[k] + parts[k + 1]]
        del joined[k]
        if k > 0:
            joined[k - 1] = ranks.get(parts[k - 1] + parts[k])
        if k < len(joined):
            joined[k] = ranks.get(parts[k] + parts[k + 1])
    return last


class RankMerges(NamedTuple):
    """The merges that make HF's BPE encode byte-level tokens as the rank rule does (`rank_merges`).

    - `direct`: (left, right, result) ids of the tokens formed from tokens of lower rank, which is
      every token of a trained vocabulary and of cl100k and o200k, and what tokreg stores;
    - `later`: of the tokens formed only after a merge of higher rank (a rank file may hold them);
    - `lone`: the multi-byte tokens the rule never forms from their own bytes.
    """

    direct: list[tuple[int, int, int]]
    later: list[tuple[int, int, int]]
    lone: list[int]

    @property
    def merges(self) -> list[tuple[int, int, int]]:
        """Every merge, in the order of its result's rank: HF's merge list."""
        return sorted(self.direct + self.later, key=lambda m: m[2])


def rank_merges(ordinary: list[tuple[int, bytes]], where: str) -> RankMerges:
    """The merges of byte-level tokens (id, bytes), ranked by id, for HF (the module's doc says
    why they reproduce the rank rule). The core recovers each token's pair among the tokens of
    lower rank; the tokens it finds none for are encoded here with every rank, as a longer text
    would encode them."""
    try:
        direct = _core.merges_from_ranks(ordinary)
    except InputError as e:
        raise InputError(f"{where}: not a usable byte-level vocabulary: {e}") from None
    made = {z for _, _, z in direct}
    rest = [(i, b) for i, b in ordinary if len(b) > 1 and i not in made]
    later: list[tuple[int, int, int]] = []
    lone: list[int] = []
    ranks = {b: i for i, b in ordinary} if rest else {}
    for i, b in rest:
        pair = _last_pair(b, ranks)
        if pair is None:
            lone.append(i)
        else:
            later.append((ranks[pair[0]], ranks[pair[1]], i))
    return RankMerges(direct, later, lone)


def _spelled_as_text(specials: list[tuple[int, str]]) -> Optional[tuple[str, str]]:
    """A special token whose content, read as GPT-2's byte-to-unicode spelling, is the bytes of
    some other text ("Ġhi" spells " hi"): with `ignore_merges`, HF looks a piece up in the
    model's vocab, where the specials are, and would give the special's id for that text.
    Returns (special, the text it spells) of the first, or None."""
    for _, s in specials:
        raw = hf_json.unmapped(s)
        if raw is None or raw == s.encode("utf-8"):
            continue  # not a spelling of bytes; or text HF matches as the special token first
        try:
            return s, raw.decode("utf-8")
        except UnicodeDecodeError:
            continue  # no text is those bytes
    return None


def _export(
    data: TokenizerData, ref: str, *, byte_level: bool, pattern: str, keep_gaps: bool, unk: Optional[str]
) -> dict[str, Any]:
    """The tokenizer.json document of a BPE version: every token, special ones included, in the
    model's vocab at its tokreg id."""
    specials = [(t.id, t.bytes.decode("utf-8")) for t in data.tokens if t.kind == "special"]
    ordinary = [t for t in data.tokens if t.kind != "special"]
    pre: dict[str, Any]
    ignore_merges = False
    if byte_level:
        vocab = {hf_json.mapped(t.bytes): t.id for t in ordinary}
        by_id = {i: s for s, i in vocab.items()}
        ranked = rank_merges([(t.id, t.bytes) for t in ordinary], ref)
        merges = [(by_id[a], by_id[b]) for a, b, _ in ranked.merges]
        lone = ranked.lone
        ignore_merges = bool(lone)
        clash = _spelled_as_text(specials) if ignore_merges else None
        if clash is not None:
            raise InputError(
                f"{ref}: cannot be written as hf: token {lone[0]} is made by no merge, so the file needs HF's "
                f"ignore_merges, with which the special token {clash[0][:40]!r} (GPT-2's spelling of "
                f"{clash[1][:40]!r}) would be given for that text; rename the special token or use --format tokreg"
            )
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
        vocab = {t.bytes.decode("utf-8"): t.id for t in ordinary}
        text = {t.id: t.bytes.decode("utf-8") for t in data.tokens}
        merges = [(text[m.left], text[m.right]) for m in data.merges]
        pre = hf_json.split_step(pattern, keep_gaps)
        decoder = {"type": "Fuse"}
    for i, s in specials:
        if s in vocab:
            raise InputError(
                f"{ref}: the special token {s[:40]!r} (id {i}) is spelled like the ordinary token {vocab[s]}, and a "
                "tokenizer.json vocab holds one id per string; use --format tokreg"
            )
        vocab[s] = i
    if len(vocab) != len(data.tokens):
        raise InputError(f"{ref}: two tokens share a string, which a tokenizer.json vocab cannot hold")
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": hf_json.added_tokens(specials),
        "normalizer": None,
        "pre_tokenizer": pre,
        "post_processor": template.hf_for(data),
        "decoder": decoder,
        "model": _model(vocab, merges, unk, ignore_merges),
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

    merges: list[MergeRow] = []
    pairs: set[tuple[int, int]] = set()
    for rank, lt, rt in hf_pipe.merge_pairs(model, vocab, where):
        left, right = vocab[lt], vocab[rt]
        if (left, right) in pairs:
            # HF keeps the last rank of a pair given twice, tokreg the first: refuse rather than differ.
            raise InputError(f"{where}: merge {rank} {lt + ' ' + rt!r:.60} repeats an earlier merge; remove one")
        pairs.add((left, right))
        merges.append(MergeRow(rank=rank, left=left, right=right, result=vocab[lt + rt]))
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
        b = hf_pipe.token_bytes(s, byte_level, where)
        base = len(b) == 1 if byte_level else len(s) == 1 and i not in results
        rows[i] = TokenRow(id=i, bytes=b, kind=("byte" if byte_level else "char") if base else "merged")
    for i, s in specials.items():
        rows[i] = TokenRow(id=i, bytes=s.encode("utf-8"), kind="special")
    tokens = [rows[i] for i in sorted(rows)]
    if byte_level:
        merges = _same_as_ranks(tokens, merges, ignore_merges, where)
    data = TokenizerData(algorithm="bpe", config={}, tokens=tokens, merges=merges, source="import:hf")
    return data, regex, keep_gaps


def _same_as_ranks(tokens: list[TokenRow], merges: list[MergeRow], ignore_merges: bool, where: str) -> list[MergeRow]:
    """Refuses a byte-level file that HF tokenizers would encode differently from tiktoken's
    rule over its ids, which is how tokreg encodes byte-level BPE: its merges must be exactly
    the ones its ids imply (`rank_merges`, which the writer writes), and, unless HF looks
    whole pieces up first (`ignore_merges`), every multi-byte token must be made by a merge (HF
    could never produce one that is not, tiktoken's rule takes it whole). Returns the merges
    to store: those of the tokens formed from lower ranks, as a `.tiktoken` import stores."""
    ranked = rank_merges([(t.id, t.bytes) for t in tokens if t.kind != "special"], where)
    implied = ranked.merges
    given = [(m.left, m.right, m.result) for m in merges]
    if given != implied:
        pairs = [(g, w) for g, w in zip(given, implied) if g != w]
        diff = pairs[0][0] if pairs else (given[len(implied) :] or implied[len(given) :])[0]
        raise InputError(
            f"{where}: its merges are not the ones its token ids imply (first difference: merge {diff}); tokreg "
            "encodes byte-level BPE by id, as tiktoken does, so it would not give this file's ids (nothing was "
            "imported)"
        )
    if not ignore_merges and ranked.lone:
        lone = next(t for t in tokens if t.id == ranked.lone[0])
        raise InputError(
            f"{where}: token {lone.id} ({lone.bytes[:40]!r}) is made by no merge, so HF tokenizers never produces "
            "it while tokreg would for a piece that is exactly that token; nothing was imported"
        )
    return [MergeRow(rank=k, left=a, right=b, result=z) for k, (a, b, z) in enumerate(ranked.direct)]


class ByteLevelHf(HfCodec):
    def reads(self, model_type: str, doc: Mapping[str, Any]) -> bool:
        return model_type == "BPE" and _is_byte_level(doc)

    def read(self, doc: Mapping[str, Any], model: Mapping[str, Any], where: str) -> TokenizerData:
        try:
            data, regex, keep_gaps = _read(doc, model, where, byte_level=True)
        except InputError as refused:
            return hf_pipe.fallback(doc, model, where, refused)
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
        try:
            return self._read(doc, model, where)
        except InputError as refused:
            return hf_pipe.fallback(doc, model, where, refused)

    def _read(self, doc: Mapping[str, Any], model: Mapping[str, Any], where: str) -> TokenizerData:
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
