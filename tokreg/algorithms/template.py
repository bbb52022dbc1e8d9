"""Post-processing templates, the same for every algorithm: the special tokens that
`encode(text, add_special_tokens=True)` puts around a text (`[CLS] … [SEP]` for BERT, `<s> …`
for Llama-style SentencePiece models, `<s> … </s>` for RoBERTa).

A template lives in a version's config under `"template"`, written only when there is one, so
every version without one keeps the hash it had before templates existed:

    {"single": ["[CLS]", "$A", "[SEP]"], "pair": ["[CLS]", "$A", "[SEP]", "$B", "[SEP]"]}

Each item is `$A` (the text), `$B` (the second text of a pair) or the text of one of the
version's special tokens; `pair` is optional. It comes from a `tokenizer.json`'s post-processor
(`TemplateProcessing`, `BertProcessing`, `RobertaProcessing`, alone or in a `Sequence` beside
`ByteLevel`; type ids are not kept, tokreg returns ids only), or from training
(`--bos`, `--eos`, `--template "[CLS] $A [SEP]"`), and is written back as a
`TemplateProcessing` by `export --format hf`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Optional

from ..errors import InputError

#: The config key (optional in every algorithm's config).
KEY = "template"
KEYS = frozenset({KEY})
SLOTS = ("$A", "$B")


@dataclass(frozen=True)
class Template:
    single: tuple[str, ...]
    pair: Optional[tuple[str, ...]] = None

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"single": list(self.single)}
        if self.pair is not None:
            d["pair"] = list(self.pair)
        return d

    @property
    def tokens(self) -> set[str]:
        return {t for t in (*self.single, *(self.pair or ())) if t not in SLOTS}

    def apply(self, a: list[int], b: Optional[list[int]], ids: Mapping[str, int]) -> list[int]:
        """The ids of the template filled with `a` (and `b`)."""
        items = self.single if b is None else self.pair
        if items is None:
            raise InputError("this version's template has no form for a pair of texts")
        out: list[int] = []
        for t in items:
            out.extend(a if t == "$A" else (b or []) if t == "$B" else [ids[t]])
        return out


def _items(raw: Any, what: str, slots: tuple[str, ...]) -> tuple[str, ...]:
    if not isinstance(raw, list) or not all(isinstance(t, str) and t for t in raw):
        raise InputError(f"{what} must be a list of special tokens and {' '.join(slots)}")
    for s in slots:
        if raw.count(s) != 1:
            raise InputError(f"{what} must hold {s} exactly once: {' '.join(raw)}")
    for s in set(SLOTS) - set(slots):
        if s in raw:
            raise InputError(f"{what} cannot hold {s}")
    return tuple(raw)


def of_config(config: Mapping[str, Any]) -> Optional[Template]:
    """The template of a stored config, checked; None when it has none."""
    raw = config.get(KEY)
    if raw is None:
        return None
    if not isinstance(raw, dict) or "single" not in raw or set(raw) - {"single", "pair"}:
        raise InputError("a version's template must be {'single': [...], 'pair': [...]}")
    single = _items(raw["single"], "the template", ("$A",))
    pair = _items(raw["pair"], "the pair template", ("$A", "$B")) if "pair" in raw else None
    return Template(single, pair)


def check_tokens(t: Template, specials: Mapping[str, int], where: str) -> None:
    missing = sorted(t.tokens - set(specials))
    if missing:
        raise InputError(
            f"{where}: the template names {', '.join(missing)}, which {'is' if len(missing) == 1 else 'are'} not "
            "a special token of the version; add it as a special token (--special)"
        )


def attach(config: dict[str, Any], t: Optional[Template]) -> dict[str, Any]:
    """`config` with the template set (or left without one)."""
    if t is not None:
        config[KEY] = t.to_json()
    return config


def parse(spec: Optional[str] = None, *, bos: Optional[str] = None, eos: Optional[str] = None) -> Optional[Template]:
    """A template from training options: `spec` such as "[CLS] $A [SEP]" (a pair form after
    " | ": "[CLS] $A [SEP] | [CLS] $A [SEP] $B [SEP]"), or a BOS and/or EOS token around the text
    (SentencePiece's add_bos / add_eos; the pair form repeats it for $B)."""
    if spec and (bos or eos):
        raise InputError("give --template, or --bos/--eos, not both")
    if spec:
        single, _, pair = spec.partition("|")
        return Template(
            _items(single.split(), "--template", ("$A",)),
            _items(pair.split(), "--template's pair form", ("$A", "$B")) if pair.strip() else None,
        )
    if not (bos or eos):
        return None
    around = [*([bos] if bos else []), "$A", *([eos] if eos else [])]
    return Template(tuple(around), tuple(around + [t.replace("$A", "$B") for t in around]))


def spec(spec: Optional[str] = None, *, bos: Optional[str] = None, eos: Optional[str] = None) -> Optional[str]:
    """The template options of `tokreg train` as one spec string (`parse` reads it back), as the
    training options store it; None for no template."""
    t = parse(spec, bos=bos, eos=eos)
    if t is None:
        return None
    return " ".join(t.single) + (" | " + " ".join(t.pair) if t.pair is not None else "")


def spec_tokens(spec: Optional[str], bos: Optional[str], eos: Optional[str]) -> list[str]:
    """The special tokens a template given on the command line names, in order."""
    t = parse(spec, bos=bos, eos=eos)
    seen: list[str] = []
    for tok in (*t.single, *(t.pair or ())) if t else ():
        if tok not in SLOTS and tok not in seen:
            seen.append(tok)
    return seen


# -- Hugging Face post-processors ---------------------------------------------------------------


def _hf_items(items: Any, where: str) -> list[str]:
    if not isinstance(items, list):
        raise InputError(f"{where}: the TemplateProcessing template must be a list")
    out = []
    for it in items:
        if isinstance(it, dict) and isinstance(it.get("SpecialToken"), dict):
            out.append(str(it["SpecialToken"].get("id")))
        elif isinstance(it, dict) and isinstance(it.get("Sequence"), dict) and it["Sequence"].get("id") in ("A", "B"):
            out.append("$" + it["Sequence"]["id"])
        else:
            raise InputError(f"{where}: unreadable TemplateProcessing item {it!r:.60}")
    return out


def from_hf(post: Any, vocab: Mapping[str, int], where: str) -> Optional[Template]:
    """The template of a tokenizer.json post-processor (None for none, or for ByteLevel alone,
    which adds no token). Each special token's id must be the vocabulary's id of its text."""
    if post is None:
        return None
    if not isinstance(post, dict):
        raise InputError(f"{where}: post_processor must be an object")
    kind = post.get("type")
    if kind == "ByteLevel":
        return None
    if kind == "Sequence":
        found = [t for t in (from_hf(p, vocab, where) for p in post.get("processors") or []) if t is not None]
        if len(found) > 1:
            raise InputError(f"{where}: a post_processor Sequence with more than one template")
        return found[0] if found else None
    pairs: dict[str, int] = {}
    pair: Optional[list[str]]
    if kind in ("BertProcessing", "RobertaProcessing"):
        try:
            (sep, sep_id), (cls, cls_id) = post["sep"], post["cls"]
        except (KeyError, TypeError, ValueError):
            raise InputError(f"{where}: {kind} needs 'sep' and 'cls' as [token, id]") from None
        pairs = {str(sep): sep_id, str(cls): cls_id}
        cls, sep = str(cls), str(sep)
        single = [cls, "$A", sep]
        pair = [cls, "$A", sep, "$B", sep] if kind == "BertProcessing" else [cls, "$A", sep, sep, "$B", sep]
    elif kind == "TemplateProcessing":
        single = _hf_items(post.get("single"), where)
        pair = _hf_items(post.get("pair"), where) if post.get("pair") is not None else None
        specials = post.get("special_tokens") or {}
        if not isinstance(specials, dict):
            raise InputError(f"{where}: TemplateProcessing special_tokens must be an object")
        for name, spec in specials.items():
            ids = spec.get("ids") if isinstance(spec, dict) else None
            if not isinstance(ids, list) or len(ids) != 1 or spec.get("tokens", [name]) != [name]:
                raise InputError(f"{where}: template token {name!r} must stand for exactly one token, itself")
            pairs[name] = ids[0]
    else:
        raise InputError(
            f"{where}: post_processor {str(kind)[:40]!r} is not supported (TemplateProcessing, BertProcessing, "
            "RobertaProcessing and ByteLevel are)"
        )
    t = Template(
        _items(single, "the template", ("$A",)), _items(pair, "the pair template", ("$A", "$B")) if pair else None
    )
    for name in t.tokens:
        if name not in pairs or vocab.get(name) != pairs[name]:
            raise InputError(
                f"{where}: the post-processor's {name!r} has id {pairs.get(name)}, but the vocabulary's {name!r} is "
                f"{vocab.get(name)}"
            )
    return t


def hf_post_processor(config: Mapping[str, Any], ids: Mapping[str, int]) -> Optional[dict[str, Any]]:
    """The TemplateProcessing that writes a version's template for HF (None without one)."""
    t = of_config(config)
    if t is None:
        return None

    def items(seq: Sequence[str]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        after_b = False
        for x in seq:
            after_b = after_b or x == "$B"
            type_id = 1 if after_b else 0
            if x in SLOTS:
                out.append({"Sequence": {"id": x[1], "type_id": type_id}})
            else:
                out.append({"SpecialToken": {"id": x, "type_id": type_id}})
        return out

    pair = t.pair if t.pair is not None else (*t.single, *[x.replace("$A", "$B") for x in t.single])
    return {
        "type": "TemplateProcessing",
        "single": items(t.single),
        "pair": items(pair),
        "special_tokens": {n: {"id": n, "ids": [ids[n]], "tokens": [n]} for n in sorted(t.tokens)},
    }


def special_ids(data: Any) -> dict[str, int]:
    """text -> id of the tokens a template may name in `data` (a TokenizerData): the special
    tokens of BPE and WordPiece, the control and unknown pieces of SentencePiece-style ones."""
    return {
        t.bytes.decode("utf-8", "replace"): t.id for t in data.tokens if t.kind in ("special", "control", "unknown")
    }


def hf_for(data: Any) -> Optional[dict[str, Any]]:
    """The `post_processor` of `data`'s tokenizer.json: its template, or None."""
    return hf_post_processor(data.config, special_ids(data))


def read_hf(doc: Mapping[str, Any], data: Any, where: str) -> None:
    """Sets `data`'s template from the tokenizer.json `doc`'s post-processor (if it has one)."""
    ids = special_ids(data)
    t = from_hf(doc.get("post_processor"), ids, where)
    if t is not None:
        check_tokens(t, ids, where)
        attach(data.config, t)
