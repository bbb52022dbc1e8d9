"""What transformers keeps beside a tokenizer: the special-token roles (`pad_token`, `cls_token`
…), `model_max_length`, padding and truncation sides, `model_input_names` and
`clean_up_tokenization_spaces` of `tokenizer_config.json` / `special_tokens_map.json`, and the
`padding` / `truncation` objects of a `tokenizer.json`. They change what `tok(batch,
padding=True, truncation=True)` gives, so an import carries them in the version's content
(config key `"hf_settings"`, written only when a file states one, so every other version keeps
its hash; the same files give the same hash), `to_transformers()` / `to_hf()` apply them, and
`export --format hf` to a directory writes them back. What an import does not carry is named
(`Imported.dropped`), never dropped silently.

    {"roles": {"cls_token": "[CLS]", "pad_token": "[PAD]", ...}, "model_max_length": 512,
     "padding_side": "left", "tokenizer_class": "BertTokenizer", "padding": {...}}

`roles` is present (maybe empty) when a tokenizer_config.json or special_tokens_map.json was
read: then the roles are exactly the file's, as `AutoTokenizer` gives them. A version without
stated roles (trained, or a tokenizer.json imported alone) gets them by `rule_roles`.
`tokenizer_class` is kept only to resolve, as `AutoTokenizer` does, the class's own defaults
(`model_input_names`, `padding_side`, `truncation_side`) the files do not state; the live object
itself is always a `PreTrainedTokenizerFast` over tokreg's tokenizer.json.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Optional

from ..errors import InputError
from ..files import read_input
from . import hf_json, strict_json

#: The config key (optional in every algorithm's config).
KEY = "hf_settings"
KEYS = frozenset({KEY})
ROLES = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")
SIDES = ("left", "right")
CONFIG = "tokenizer_config.json"
SPECIALS_MAP = "special_tokens_map.json"
#: A model_max_length at or above this is transformers' "no limit" (its VERY_LARGE_INTEGER, 1e30).
NO_LIMIT = 2**53
#: tokenizer_config.json keys that say where files were, not how to tokenize.
_BOOKKEEPING = frozenset(
    {"backend", "name_or_path", "added_tokens_decoder", "tokenizer_file", "vocab_file", "merges_file",
     "special_tokens_map_file", "is_local"}
)  # fmt: skip
_SCALARS = ("model_max_length", "padding_side", "truncation_side", "clean_up_tokenization_spaces", "tokenizer_class")
_EXTRA = ("additional_special_tokens", "extra_special_tokens")
#: The names `rule_roles` gives a role to (besides the template's first and last tokens).
_NAMED = {
    "pad_token": ("[PAD]", "<pad>", "<|pad|>", "<|padding|>"),
    "mask_token": ("[MASK]", "<mask>", "<|mask|>"),
    "unk_token": ("[UNK]", "<unk>", "<|unk|>"),
    "bos_token": ("<s>", "<bos>", "[BOS]", "<|begin_of_text|>", "<|startoftext|>", "<|bos|>"),
    "eos_token": ("</s>", "<eos>", "[EOS]", "<|end_of_text|>", "<|endoftext|>", "<|eos|>"),
    "cls_token": ("[CLS]", "<cls>"),
    "sep_token": ("[SEP]", "<sep>"),
}


class NotCarried(UserWarning):
    """An import read settings tokreg does not carry (the CLI prints it as a `tokreg: warning:` line)."""


@dataclass(frozen=True)
class Imported:
    """What an import read beside the model: the settings to store (None: none), and one
    readable item per thing it does not carry."""

    settings: Optional[dict[str, Any]]
    dropped: tuple[str, ...]


def tokenizer_json(path: str) -> str:
    """The tokenizer.json an `import hf` argument names: the file, or the one in a directory."""
    if os.path.isdir(path):
        inside = os.path.join(path, "tokenizer.json")
        if not os.path.isfile(inside):
            raise InputError(f"{path}: a directory without a tokenizer.json; give the tokenizer.json file")
        return inside
    return path


def _text(value: Any) -> Optional[str]:
    """A token as the files write it: a string, or an AddedToken object with its `content`."""
    if isinstance(value, dict):
        value = value.get("content")
    return value if isinstance(value, str) and value else None


def _sibling(folder: str, name: str) -> Optional[dict[str, Any]]:
    path = os.path.join(folder, name)
    if not os.path.isfile(path):
        return None
    doc = strict_json.loads(read_input(path, f"give the {name}"), path, name)
    if not isinstance(doc, dict):
        raise InputError(f"{path}: not a {name} (not a JSON object)")
    return doc


def read(path: str, doc: Mapping[str, Any], specials: Iterable[str]) -> Imported:
    """The settings of the tokenizer.json at `path` (its document `doc`) and of the
    tokenizer_config.json / special_tokens_map.json beside it. `specials`: the texts of the
    version's special tokens, the only tokens a role can name (a role naming another text would
    make transformers add a token at a new id)."""
    out: dict[str, Any] = {}
    dropped: list[str] = []
    for name, shape in (("padding", _PADDING), ("truncation", _TRUNCATION)):
        value = doc.get(name)
        if isinstance(value, dict) and _shaped(value, shape):
            out[name] = value
        elif value is not None:
            dropped.append(f"tokenizer.json {name} {value!r:.60} (not in the shape tokenizers writes)")
    trim = _trimmed(doc.get("post_processor"))
    if trim is not None:
        out["trim_offsets"] = trim
    folder = os.path.dirname(os.path.abspath(path))
    config, smap = _sibling(folder, CONFIG), _sibling(folder, SPECIALS_MAP)
    if config is None and smap is None:
        return Imported(out or None, tuple(dropped))
    known = set(specials)
    stated: dict[str, Any] = dict(config or {})
    # As transformers 5 reads them: special_tokens_map.json only when the config has no
    # added_tokens_decoder, and then its values win.
    if smap is not None and "added_tokens_decoder" not in stated:
        stated.update(smap)
    roles: dict[str, str] = {}
    for role in ROLES:
        if stated.get(role) is None:
            continue
        text = _text(stated[role])
        if text is not None and text in known:
            roles[role] = text
        else:
            dropped.append(f"{role} {stated[role]!r:.40} (not a special token of the tokenizer.json)")
    out["roles"] = roles
    extra: list[str] = []
    for key in _EXTRA:
        value = stated.get(key)
        if isinstance(value, list):
            for item in value:
                text = _text(item)
                if text is not None and text in known and text not in extra:
                    extra.append(text)
                else:
                    dropped.append(f"{key} item {item!r:.40} (not a special token of the tokenizer.json)")
        elif value not in (None, {}):
            dropped.append(f"{key} {value!r:.40}")
    if extra:
        out["extra_special_tokens"] = extra
    for key in _SCALARS:
        value = stated.get(key)
        if value is None or (key == "model_max_length" and type(value) in (int, float) and value >= NO_LIMIT):
            continue  # transformers' own "no limit" (1e30, as an int or a float) is the default
        if _valid(key, value):
            out[key] = value
        else:
            dropped.append(f"{key} {value!r:.40}")
    names = stated.get("model_input_names")
    if names is not None:
        if isinstance(names, list) and names and all(isinstance(n, str) for n in names):
            out["model_input_names"] = names
        else:
            dropped.append(f"model_input_names {names!r:.40}")
    carried = {*ROLES, *_EXTRA, *_SCALARS, "model_input_names"}
    dropped += sorted(k for k in stated if k not in carried and k not in _BOOKKEEPING)
    return Imported(out, tuple(dropped))


def _u32(v: Any) -> bool:
    return type(v) is int and 0 <= v < 2**32


def _fixed(v: Any) -> bool:
    return v == "BatchLongest" or (isinstance(v, dict) and set(v) == {"Fixed"} and _u32(v["Fixed"]))


#: The keys of tokenizer.json's padding and truncation objects, each with its test: only an
#: object in the shape tokenizers writes is carried (it is applied by tokenizers as it is).
_PADDING: dict[str, Callable[[Any], bool]] = {
    "strategy": _fixed,
    "direction": lambda v: v in ("Left", "Right"),
    "pad_to_multiple_of": lambda v: v is None or _u32(v),
    "pad_id": _u32,
    "pad_type_id": _u32,
    "pad_token": lambda v: isinstance(v, str),
}
_TRUNCATION: dict[str, Callable[[Any], bool]] = {
    "direction": lambda v: v in ("Left", "Right"),
    "max_length": _u32,
    "strategy": lambda v: v in ("LongestFirst", "OnlyFirst", "OnlySecond"),
    "stride": _u32,
}


def _shaped(value: Mapping[str, Any], shape: Mapping[str, Callable[[Any], bool]]) -> bool:
    return set(value) == set(shape) and all(test(value[k]) for k, test in shape.items())


def _trimmed(post: Any) -> Optional[dict[str, bool]]:
    """{"add_prefix_space": …} when the post-processor trims byte-level offsets (RoBERTa's, or a
    ByteLevel one with trim_offsets): the spans then leave out a token's leading space. It
    changes no id, only `return_offsets_mapping`; tokreg's template is a TemplateProcessing,
    which does not trim, so the setting is carried here and written back as a ByteLevel step."""
    if not isinstance(post, dict):
        return None
    if post.get("type") == "Sequence":
        found = [t for t in map(_trimmed, post.get("processors") or []) if t is not None]
        return found[0] if found else None
    if post.get("type") in ("RobertaProcessing", "ByteLevel") and post.get("trim_offsets", True) is True:
        return {"add_prefix_space": post.get("add_prefix_space", True) is True}
    return None


def warn_dropped(where: str, imported: Imported) -> None:
    """One warning naming everything the import read and does not carry (none: no warning)."""
    if imported.dropped:
        warnings.warn(
            NotCarried(f"{where}: not carried by tokreg (transformers settings): {'; '.join(imported.dropped)}"),
            stacklevel=3,
        )


def warn_file_only(config: Mapping[str, Any], where: str) -> None:
    """One warning when a tokenizer.json alone is written for a version whose settings live in
    tokenizer_config.json (roles, model_max_length, sides …): a file alone does not hold them."""
    settings = of_config(config) or {}
    left = sorted(set(settings) - set(_json_part(settings)))
    if left:
        warnings.warn(
            NotCarried(
                f"{where}: a tokenizer.json alone does not hold the version's {', '.join(left)}; export to a "
                f"directory (-o DIR) to write them to its {CONFIG} too"
            ),
            stacklevel=3,
        )


def _valid(key: str, value: Any) -> bool:
    if key == "model_max_length":
        return type(value) is int and value > 0
    if key in ("padding_side", "truncation_side"):
        return value in SIDES
    if key == "clean_up_tokenization_spaces":
        return isinstance(value, bool)
    return isinstance(value, str) and bool(value)


def of_config(config: Mapping[str, Any]) -> Optional[dict[str, Any]]:
    """The settings of a stored config (None without), checked enough to apply."""
    raw = config.get(KEY)
    if raw is None:
        return None
    allowed = {"roles", "extra_special_tokens", "model_input_names", "padding", "truncation", "trim_offsets", *_SCALARS}
    if not isinstance(raw, dict) or set(raw) - allowed:
        raise InputError(f"a version's {KEY} has settings this tokreg does not know; upgrade tokreg to load it")
    return dict(raw)


def attach(config: dict[str, Any], settings: Optional[Mapping[str, Any]]) -> dict[str, Any]:
    """`config` with the settings set (or left without them)."""
    if settings:
        config[KEY] = dict(settings)
    return config


# -- applying them --------------------------------------------------------------------------------


def rule_roles(
    specials: Iterable[str], first: Optional[str], last: Optional[str], unk: Optional[str]
) -> dict[str, str]:
    """The roles of a version whose files state none (a trained version, a tokenizer.json alone):
    `cls_token` is the template's first token (`first`) and `sep_token` its last (`last`); the
    unknown token is the algorithm's (`unk`); every role with no token yet takes the first
    special token named as in `_NAMED` ([PAD], <pad>, [MASK], <s>, </s>, <|endoftext|> …)."""
    have = set(specials)
    roles: dict[str, str] = {}
    if first is not None:
        roles["cls_token"] = first
    if last is not None:
        roles["sep_token"] = last
    if unk is not None and unk in have:
        roles["unk_token"] = unk
    for role, names in _NAMED.items():
        if role not in roles:
            found = next((n for n in names if n in have), None)
            if found is not None:
                roles[role] = found
    return {r: roles[r] for r in ROLES if r in roles}


def class_defaults(transformers: Any, name: Optional[str]) -> dict[str, Any]:
    """The defaults of the transformers class `name` the files named (AutoTokenizer builds that
    class, so they hold where the files state nothing): model_input_names and the two sides."""
    cls = getattr(transformers, name, None) if name else None
    if not isinstance(cls, type):
        return {}
    return {
        attr: list(getattr(cls, attr)) if attr == "model_input_names" else getattr(cls, attr)
        for attr in ("model_input_names", "padding_side", "truncation_side")
        if getattr(cls, attr, None) is not None
    }


def init_kwargs(settings: Optional[Mapping[str, Any]], rule: Mapping[str, str], pair_types: bool) -> dict[str, Any]:
    """The keyword arguments of `PreTrainedTokenizerFast` for these settings: the stated roles,
    or `rule` (the `rule_roles`) when none are stated; a rule version takes token_type_ids only
    when its template gives a pair other type ids than 0 (`pair_types`)."""
    s = dict(settings or {})
    roles = s.get("roles")
    out: dict[str, Any] = dict(rule if roles is None else roles)
    for key in _SCALARS:
        if key in s and key != "tokenizer_class":
            out[key] = s[key]
    if "model_input_names" in s:
        out["model_input_names"] = list(s["model_input_names"])
    elif roles is None:
        out["model_input_names"] = ["input_ids", *(["token_type_ids"] if pair_types else []), "attention_mask"]
    return out


def _json_part(settings: Optional[Mapping[str, Any]]) -> dict[str, Any]:
    """What of the settings a tokenizer.json holds: padding, truncation, offset trimming."""
    return {k: v for k, v in (settings or {}).items() if k in ("padding", "truncation", "trim_offsets")}


def into_json(raw: bytes, settings: Optional[Mapping[str, Any]]) -> bytes:
    """A tokenizer.json's bytes with the `padding`, `truncation` and offset trimming of
    `settings` (the same bytes when there are none). None of them changes an id: padding and
    truncation change the length of what a batch gives, trimming the offsets."""
    part = _json_part(settings)
    if not part:
        return raw
    doc = json.loads(raw)
    doc.update({k: v for k, v in part.items() if k != "trim_offsets"})
    trim = part.get("trim_offsets")
    if trim is not None:
        step = {
            "type": "ByteLevel",
            "add_prefix_space": trim["add_prefix_space"],
            "trim_offsets": True,
            "use_regex": True,
        }
        post = doc.get("post_processor")
        doc["post_processor"] = step if post is None else {"type": "Sequence", "processors": [step, post]}
    return hf_json.dumps(doc)


def tokenizer_config(kwargs: Mapping[str, Any], extra: Iterable[str]) -> dict[str, Any]:
    """The tokenizer_config.json `export --format hf` writes beside tokenizer.json: the resolved
    keyword arguments, the other special tokens, and the generic class, which AutoTokenizer
    builds from tokenizer.json as it is (a model's own class would rebuild parts of it)."""
    out: dict[str, Any] = {"tokenizer_class": "PreTrainedTokenizerFast", **kwargs}
    roles = {v for v in kwargs.values() if isinstance(v, str)}  # model_input_names is a list
    extra = [t for t in extra if t not in roles]
    if extra:
        out["additional_special_tokens"] = extra
    return out
