"""A loaded version as another library's tokenizer object: `Tokenizer.to_hf()` (a
`tokenizers.Tokenizer`) and `Tokenizer.to_transformers()` (a `transformers.PreTrainedTokenizerFast`),
both giving tokreg's ids. They are built from the same `tokenizer.json` that
`tokreg export --format hf` writes (each algorithm's HF codec), and checked the same way
(export_check.py: the check texts with every special token, compared id for id), so the same
versions can be converted and the same ones are refused (character-level BPE with an
end-of-word suffix; SentencePiece BPE with normalization rules), with the reason.

Neither library is a dependency of tokreg: `pip install 'tokreg[hf]'` or `'tokreg[transformers]'`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .. import algorithms
from ..algorithms import template
from ..data import TokenizerData
from ..errors import InputError
from ..formats import hf_settings
from . import export_check

if TYPE_CHECKING:
    from .tokenizer import Tokenizer


def _module(name: str, extra: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError:
        raise InputError(f"this needs the {name} package: pip install 'tokreg[{extra}]'") from None


def hf_json(tok: Tokenizer) -> str:
    """The version as a Hugging Face tokenizer.json string."""
    data = TokenizerData.from_content(tok.content)
    algo = algorithms.of(data.algorithm, data.config)
    if algo.hf is None:
        raise InputError(f"{tok.ref} is {algo.model.title}, which has no Hugging Face tokenizer.json form")
    return algo.hf.write(data, tok.ref).decode("utf-8")


def to_hf(tok: Tokenizer) -> Any:
    """The `tokenizers.Tokenizer` of `export --format hf`'s file, checked as that export is
    (export_check.py): refused in one line if it would give other ids than tok; with the padding,
    truncation and offset trimming an imported file had (formats/hf_settings.py)."""
    tokenizers = _module("tokenizers", "hf")
    raw = hf_settings.into_json(hf_json(tok).encode("utf-8"), hf_settings.of_config(tok.config))
    hf = tokenizers.Tokenizer.from_str(raw.decode("utf-8"))
    padding, truncation = hf.padding, hf.truncation
    hf.no_padding()  # they change what a batch looks like, not its ids
    hf.no_truncation()
    encode, framed = export_check.hf_encoder(hf, tok)
    judge = f"tokenizers {tokenizers.__version__}"
    export_check.compare(encode, tok, judge, "its tokenizers object would not give tokreg's ids", framed=framed)
    if padding is not None:
        hf.enable_padding(**padding)
    if truncation is not None:
        hf.enable_truncation(**truncation)
    return hf


def transformers_kwargs(tok: Tokenizer, transformers: Any = None) -> dict[str, Any]:
    """The `PreTrainedTokenizerFast` keyword arguments of `tok`: the roles and settings an import
    carried, or for a version whose files stated no roles, the rule's (hf_settings.rule_roles:
    cls/sep from the template's first and last tokens, the algorithm's unknown token, the
    specials named [PAD], <pad>, [MASK], <s>, </s> …). With `transformers`, the defaults of the
    class the files named fill what they left unsaid, as AutoTokenizer does."""
    settings = hf_settings.of_config(tok.config)
    t = tok.template
    first = t.single[0] if t is not None and t.single[0] not in template.SLOTS else None
    last = t.single[-1] if t is not None and t.single[-1] not in template.SLOTS else None
    unk = tok.config.get("unk_token") if isinstance(tok.config.get("unk_token"), str) else None
    rule = hf_settings.rule_roles(tok.special_tokens, first, last, unk)
    pair_types = t is not None and t.pair is not None and any(t.types(True))
    kwargs = hf_settings.init_kwargs(settings, rule, pair_types)
    if transformers is not None and settings is not None:
        for key, value in hf_settings.class_defaults(transformers, settings.get("tokenizer_class")).items():
            kwargs.setdefault(key, value)
    return kwargs


def extra_specials(tok: Tokenizer) -> list[str]:
    """The special tokens transformers should know as "additional": those the files listed,
    or, for a version whose files stated no roles, every special token without a role."""
    settings = hf_settings.of_config(tok.config)
    if settings is not None and "roles" in settings:
        return list(settings.get("extra_special_tokens", []))
    return sorted(tok.special_tokens, key=tok.special_tokens.__getitem__)


def to_transformers(tok: Tokenizer, **overrides: Any) -> Any:
    """`to_hf()` as a `transformers.PreTrainedTokenizerFast` with the version's roles and
    settings (`transformers_kwargs`); `overrides` are passed on (e.g. `model_max_length=512`)."""
    transformers = _module("transformers", "transformers")
    hf = to_hf(tok)
    kwargs = {**transformers_kwargs(tok, transformers), **overrides}
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=hf, **kwargs)
    # transformers learns which added tokens are special from these lists (skip_special_tokens).
    specials = [s for s in extra_specials(tok) if s not in fast.all_special_tokens]
    if specials:
        fast.add_special_tokens({"additional_special_tokens": specials})
    return fast


def tokenizer_config(tok: Tokenizer) -> dict[str, Any]:
    """The tokenizer_config.json beside `export --format hf`'s tokenizer.json in a directory, so
    that `AutoTokenizer.from_pretrained(directory)` has `to_transformers()`'s roles and settings.
    The named class's defaults are resolved (when transformers is installed), since the file
    names the generic class."""
    try:
        transformers = importlib.import_module("transformers")
    except ImportError:
        transformers = None
    return hf_settings.tokenizer_config(transformers_kwargs(tok, transformers), extra_specials(tok))


def check_pretrained(folder: str, tok: Tokenizer) -> None:
    """Refuses, in one line, a directory `export --format hf` made unless
    `AutoTokenizer.from_pretrained(folder)` has `to_transformers()`'s special-token roles and
    gives tok's ids on the check texts (export_check.py). Skipped without transformers."""
    try:
        transformers = importlib.import_module("transformers")
    except ImportError:
        return
    auto = transformers.AutoTokenizer.from_pretrained(folder)
    want = {k: v for k, v in transformers_kwargs(tok, transformers).items() if k in hf_settings.ROLES}
    got = {k: v for k, v in auto.special_tokens_map.items() if k in hf_settings.ROLES}
    if got != want:
        raise InputError(
            f"{tok.ref}: transformers {transformers.__version__} reads the exported directory with the roles {got}, "
            f"not {want}; nothing was written"
        )

    def encode(batch: list[str]) -> list[list[int]]:
        plain = auto(batch, add_special_tokens=False)["input_ids"]
        if tok.template is None:
            return [list(ids) for ids in plain]
        full = auto(batch, add_special_tokens=True)["input_ids"]
        return [[*p, -1, *f] for p, f in zip(plain, full)]

    judge = f"transformers {transformers.__version__}"
    export_check.compare(
        encode,
        tok,
        judge,
        "AutoTokenizer over the exported directory would not give tokreg's ids",
        framed=bool(tok.template),
    )
