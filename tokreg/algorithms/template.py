"""Post-processing templates, the same for every algorithm: the special tokens that
`encode(text, add_special_tokens=True)` puts around a text (`[CLS] … [SEP]` for BERT, `<s> …`
for Llama-style SentencePiece models, `<s> … </s>` for RoBERTa).

A template lives in a version's config under `"template"`, written only when there is one, so
every version without one keeps the hash it had before templates existed:

    {"single": ["[CLS]", "$A", "[SEP]"], "pair": ["[CLS]", "$A", "[SEP]", "$B", "[SEP]"]}

Each item is `$A` (the text), `$B` (the second text of a pair) or the text of one of the
version's special tokens; `pair` is optional. It comes from a `tokenizer.json`'s post-processor
(`TemplateProcessing`, `BertProcessing`, `RobertaProcessing`, alone or in a `Sequence` beside
`ByteLevel`), or from training (`--bos`, `--eos`, `--template "[CLS] $A [SEP]"`), and is
written back as a `TemplateProcessing` by `export --format hf`.

Type ids (Hugging Face's `token_type_ids`, one per item) follow BERT's rule unless the template
says otherwise: 0 up to `$B`, 1 from `$B` to the end (`[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1`; a
single text is all 0). A post-processor whose type ids differ (RoBERTa's are all 0) stores
them, and only then, under `"type_ids"`, so every template that follows the rule keeps its hash:

    {"single": [...], "pair": [...], "type_ids": {"single": [0, 0, 0], "pair": [0, 0, 0, 0, 0, 0]}}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Optional

from ..errors import InputError
from ..formats import hf_settings

#: The config key (optional in every algorithm's config).
KEY = "template"
#: The optional keys every algorithm's config may hold beside its own: the template, and the
#: transformers settings an import carries (formats/hf_settings.py).
KEYS = frozenset({KEY}) | hf_settings.KEYS
SLOTS = ("$A", "$B")


def rule_types(items: Sequence[str]) -> tuple[int, ...]:
    """BERT's type ids for a template's items: 0 before `$B`, 1 from `$B` on."""
    at = items.index("$B") if "$B" in items else len(items)
    return tuple(0 if k < at else 1 for k in range(len(items)))


@dataclass(frozen=True)
class Template:
    single: tuple[str, ...]
    pair: Optional[tuple[str, ...]] = None
    #: (single, pair) type ids, one per item, when they differ from `rule_types`; None: the rule.
    type_ids: Optional[tuple[tuple[int, ...], Optional[tuple[int, ...]]]] = None

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"single": list(self.single)}
        if self.pair is not None:
            d["pair"] = list(self.pair)
        if self.type_ids is not None:
            single, pair = self.type_ids
            d["type_ids"] = {"single": list(single), **({"pair": list(pair)} if pair is not None else {})}
        return d

    def types(self, pair: bool) -> tuple[int, ...]:
        """The type id of each item of the single (or pair) form."""
        items = self.pair if pair else self.single
        if items is None:
            raise InputError("this version's template has no form for a pair of texts")
        if self.type_ids is not None:
            stated = self.type_ids[1 if pair else 0]
            if stated is not None:
                return stated
        return rule_types(items)

    def apply_types(self, a: int, b: Optional[int]) -> list[int]:
        """The type id of each id `apply` gives for texts of `a` (and `b`) ids."""
        items = self.single if b is None else self.pair
        out: list[int] = []
        for t, type_id in zip(items or (), self.types(b is not None)):
            out.extend([type_id] * (a if t == "$A" else (b or 0) if t == "$B" else 1))
        return out

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
    if not isinstance(raw, dict) or "single" not in raw or set(raw) - {"single", "pair", "type_ids"}:
        raise InputError("a version's template must be {'single': [...], 'pair': [...]}")
    single = _items(raw["single"], "the template", ("$A",))
    pair = _items(raw["pair"], "the pair template", ("$A", "$B")) if "pair" in raw else None
    return with_types(Template(single, pair), _stored_types(raw.get("type_ids"), single, pair))


def _stored_types(
    raw: Any, single: tuple[str, ...], pair: Optional[tuple[str, ...]]
) -> Optional[tuple[tuple[int, ...], Optional[tuple[int, ...]]]]:
    if raw is None:
        return None
    if not isinstance(raw, dict) or set(raw) - {"single", "pair"} or "single" not in raw:
        raise InputError("a version's template type_ids must be {'single': [...], 'pair': [...]}")
    out: list[Optional[tuple[int, ...]]] = []
    for form, items in (("single", single), ("pair", pair)):
        ids = raw.get(form)
        if ids is None:
            out.append(None)
            continue
        ok = isinstance(ids, list) and all(type(i) is int and 0 <= i < 2**32 for i in ids)
        if not ok or items is None or len(ids) != len(items):
            raise InputError(f"a version's template {form} type_ids must be one u32 per item of its {form} form")
        out.append(tuple(ids))
    return out[0] or rule_types(single), out[1]


def with_types(t: Template, types: Optional[tuple[tuple[int, ...], Optional[tuple[int, ...]]]]) -> Template:
    """`t` with these type ids, kept only where they differ from the rule (so the same
    template always has the same JSON, and the same hash)."""
    if types is None:
        return Template(t.single, t.pair)
    single, pair = types
    if pair is not None and t.pair is not None and pair == rule_types(t.pair):
        pair = None
    if pair is None and single == rule_types(t.single):
        return Template(t.single, t.pair)
    return Template(t.single, t.pair, (single, pair))


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


def _hf_items(items: Any, where: str) -> tuple[list[str], tuple[int, ...]]:
    """The items of a TemplateProcessing form and their type ids."""
    if not isinstance(items, list):
        raise InputError(f"{where}: the TemplateProcessing template must be a list")
    out, types = [], []
    for it in items:
        if isinstance(it, dict) and isinstance(it.get("SpecialToken"), dict):
            out.append(str(it["SpecialToken"].get("id")))
            body = it["SpecialToken"]
        elif isinstance(it, dict) and isinstance(it.get("Sequence"), dict) and it["Sequence"].get("id") in ("A", "B"):
            out.append("$" + it["Sequence"]["id"])
            body = it["Sequence"]
        else:
            raise InputError(f"{where}: unreadable TemplateProcessing item {it!r:.60}")
        type_id = body.get("type_id", 0)
        if type(type_id) is not int or not 0 <= type_id < 2**32:
            raise InputError(f"{where}: the TemplateProcessing item {it!r:.60} has type_id {type_id!r:.20}")
        types.append(type_id)
    return out, tuple(types)


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
    types: Optional[tuple[tuple[int, ...], Optional[tuple[int, ...]]]] = None
    if kind in ("BertProcessing", "RobertaProcessing"):
        try:
            (sep, sep_id), (cls, cls_id) = post["sep"], post["cls"]
        except (KeyError, TypeError, ValueError):
            raise InputError(f"{where}: {kind} needs 'sep' and 'cls' as [token, id]") from None
        pairs = {str(sep): sep_id, str(cls): cls_id}
        cls, sep = str(cls), str(sep)
        single = [cls, "$A", sep]
        pair = [cls, "$A", sep, "$B", sep] if kind == "BertProcessing" else [cls, "$A", sep, sep, "$B", sep]
        if kind == "RobertaProcessing":  # RoBERTa gives every token type 0
            types = ((0,) * len(single), (0,) * len(pair))
    elif kind == "TemplateProcessing":
        single, single_types = _hf_items(post.get("single"), where)
        pair, pair_types = _hf_items(post.get("pair"), where) if post.get("pair") is not None else (None, None)
        types = (single_types, pair_types)
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
    t = with_types(t, types)
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

    def items(seq: Sequence[str], types: Sequence[int]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for x, type_id in zip(seq, types):
            if x in SLOTS:
                out.append({"Sequence": {"id": x[1], "type_id": type_id}})
            else:
                out.append({"SpecialToken": {"id": x, "type_id": type_id}})
        return out

    # without a pair form, HF's own default for a pair: the single form once for each text
    pair = t.pair if t.pair is not None else (*t.single, *[x.replace("$A", "$B") for x in t.single])
    pair_types = t.types(True) if t.pair is not None else rule_types(pair)
    return {
        "type": "TemplateProcessing",
        "single": items(t.single, t.types(False)),
        "pair": items(pair, pair_types),
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
