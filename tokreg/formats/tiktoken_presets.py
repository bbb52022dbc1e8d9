"""What a `.tiktoken` file does not say, for the well-known encodings: the split pattern and the
special tokens at their official ids (`tokreg import tiktoken FILE --preset NAME`).

    >>> p = PRESETS["cl100k_base"]
    >>> p.pattern, p.specials["<|endoftext|>"], p.ranks, p.top
    ('cl100k', 100257, 100256, 100255)

OpenAI's encodings are as tiktoken's `tiktoken_ext/openai_public.py` defines them (patterns,
special ids, `explicit_n_vocab`); gpt2 is r50k_base under its older name. Llama 3 is Meta's
original layout (`llama3/tokenizer.py`): cl100k's original regex, 128,000 ranks, then 256
specials. Later Llama 3.x files rename some reserved slots (3.1: `<|finetune_right_pad_id|>`
128004, `<|eom_id|>` 128008, `<|python_tag|>` 128010): `--special TOKEN=ID` replaces whichever
preset token has that name or that id.

tiktoken's o200k_harmony has no preset: it gives `<|endofprompt|>` and `<|reserved_200018|>` the
same id, 200018, and an id is one token here (import o200k_base's file with --preset o200k_base
and --special for the harmony tokens, choosing one of the two names).

`ranks` and `top` say which file a preset belongs to (how many ordinary ranks, the highest one):
a file that differs is not that encoding's, and `check` refuses it rather than give its tokens
another encoding's ids. p50k's ranks skip 50256, the id of `<|endoftext|>`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import InputError

# Meta's spelling (llama3/tokenizer.py), which is cl100k's before tiktoken's possessive rewrite;
# the two differ on whitespace that ends a text (" \n  " is two pieces here, one in cl100k).
LLAMA3_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)

ENDOFTEXT, FIM_PREFIX, FIM_MIDDLE, FIM_SUFFIX = "<|endoftext|>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>"
ENDOFPROMPT = "<|endofprompt|>"


@dataclass(frozen=True)
class Preset:
    name: str
    pattern: str  # a built-in pattern name (patterns.BUILTIN) or a regex
    specials: dict[str, int] = field(hash=False)
    ranks: int  # how many ordinary ranks the official file has
    top: int  # its highest rank


def _llama3_specials() -> dict[str, int]:
    names = [
        "<|begin_of_text|>",
        "<|end_of_text|>",
        *(f"<|reserved_special_token_{i}|>" for i in range(4)),
        "<|start_header_id|>",
        "<|end_header_id|>",
        "<|reserved_special_token_4|>",
        "<|eot_id|>",
        *(f"<|reserved_special_token_{i}|>" for i in range(5, 251)),
    ]
    return {s: 128000 + i for i, s in enumerate(names)}


_R50K = {ENDOFTEXT: 50256}
PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset("gpt2", "gpt2", _R50K, ranks=50256, top=50255),
        Preset("r50k_base", "gpt2", _R50K, ranks=50256, top=50255),
        Preset("p50k_base", "gpt2", _R50K, ranks=50280, top=50280),
        Preset(
            "p50k_edit",
            "gpt2",
            {ENDOFTEXT: 50256, FIM_PREFIX: 50281, FIM_MIDDLE: 50282, FIM_SUFFIX: 50283},
            ranks=50280,
            top=50280,
        ),
        Preset(
            "cl100k_base",
            "cl100k",
            {ENDOFTEXT: 100257, FIM_PREFIX: 100258, FIM_MIDDLE: 100259, FIM_SUFFIX: 100260, ENDOFPROMPT: 100276},
            ranks=100256,
            top=100255,
        ),
        Preset("o200k_base", "o200k", {ENDOFTEXT: 199999, ENDOFPROMPT: 200018}, ranks=199998, top=199997),
        Preset("llama3", LLAMA3_PATTERN, _llama3_specials(), ranks=128000, top=127999),
    )
}


def get(name: str) -> Preset:
    """The preset called `name`; InputError listing the presets when there is none."""
    try:
        return PRESETS[name]
    except KeyError:
        raise InputError(f"--preset {name!r} is not a preset; choose one of {', '.join(PRESETS)}") from None


def specials(preset: Preset, extra: dict[str, int]) -> dict[str, int]:
    """The preset's specials with `extra` (`--special`) applied: an extra token replaces the
    preset token of the same name or the same id (a renamed reserved slot), or is added."""
    taken = set(extra.values())
    out = {s: i for s, i in preset.specials.items() if s not in extra and i not in taken}
    out.update(extra)
    return out


def check(preset: Preset, ranks: dict[bytes, int], where: str) -> None:
    """Refuses a rank map that is not `preset`'s file: another number of ranks, or another
    highest rank."""
    n, top = len(ranks), max(ranks.values(), default=-1)
    if (n, top) != (preset.ranks, preset.top):
        raise InputError(
            f"{where} has {n:,} ranks (highest {top}), but {preset.name}'s file has {preset.ranks:,} "
            f"(highest {preset.top}); it is not the {preset.name} file: choose its preset, or give "
            "--pattern and --special instead (nothing was imported)"
        )
