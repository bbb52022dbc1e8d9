"""`tokreg train`'s (and `tokreg count`'s) algorithm options as data: the `flag()` fields of
every training options class (algorithms/<family>/training.py), read ahead of time by `render`
so that the command does not import every trainer and its model (about 20 ms of CPU at each
start) to offer their options. tests/test_train_flags.py checks that the data below is what
`render` gives; after changing a `flag()` field, write it again:

    python -m tokreg.cli.train_flags > tokreg/cli/train_flags.py && ruff format tokreg/cli/train_flags.py

FLAGS: field name -> (its flag, e.g. "--pattern" or "--strip-accents/--keep-accents"; the run
names of the algorithms that have it; the click.option arguments: "type" is "str", "int",
"float" or the tuple of choices). ALGORITHMS: every trainer's run name, in registration order.
"""

from __future__ import annotations

import typing
from typing import Any

#: Options every algorithm's run takes as the command's own (not per-algorithm flags).
COMMON = frozenset(
    {
        "vocab_size",
        "min_frequency",
        "special",
        "template",
        "threads",
        "memory_limit",
        "max_piece_bytes",
        "sample_bytes",
    }
)

Rendered = dict[str, tuple[str, tuple[str, ...], dict[str, Any]]]


def render() -> tuple[tuple[str, ...], Rendered]:
    """(ALGORITHMS, FLAGS) read from the options classes (every trainer imported)."""
    from .. import algorithms  # here: this is what the data below saves the command from

    owners: dict[str, list[tuple[str, Any, Any]]] = {}
    classes = algorithms.option_types()
    for cls in classes:
        hints = typing.get_type_hints(cls)
        for f in cls.fields():
            if f.name in COMMON or "help" not in f.metadata:
                continue
            owners.setdefault(f.name, []).append((cls.run_name, f, hints[f.name]))
    return tuple(c.run_name for c in classes), {name: _flag(name, of) for name, of in owners.items()}


def _flag(name: str, owners: list[tuple[str, Any, Any]]) -> tuple[str, tuple[str, ...], dict[str, Any]]:
    """One field name's flag, shared by the algorithms in `owners` ((run name, field, type))."""
    _, f, kind = owners[0]
    meta = f.metadata
    spec = str(meta["flag"] or "--" + name.replace("_", "-"))
    defaults = [d for _, fld, _ in owners if (d := fld.default) not in (None, False, "", ())]
    shown = " / ".join(str(d) for d in defaults)
    helps = list(dict.fromkeys(fld.metadata["help"] for _, fld, _ in owners))
    if len(helps) == 1:
        help_ = f"[{', '.join(a for a, _, _ in owners)}] {meta['help']}" + (f" [default: {shown}]" if shown else "")
    else:  # one flag, a meaning per algorithm: each says its own, with its default
        help_ = " ".join(f"[{a}] {fld.metadata['help']} [default: {fld.default}]" for a, fld, _ in owners)
    attrs: dict[str, Any] = {"help": help_, "default": None}
    base = typing.get_args(kind)[0] if typing.get_origin(kind) is typing.Union else kind
    if "/" in spec:
        pass  # an on/off pair: None when neither is given
    elif base is bool:
        attrs.update(is_flag=True, default=False)
    elif typing.get_origin(base) is tuple:  # a repeatable option (--lang de=de.txt --lang ja=ja.txt)
        attrs.update(multiple=True, type="str", default=())
    elif meta["choices"]:
        # A flag several algorithms share (--normalization) offers every owner's choices;
        # `_options_for` checks the value against the chosen algorithm's own.
        attrs["type"] = tuple(dict.fromkeys(c for _, fld, _ in owners for c in fld.metadata["choices"]))
    else:
        attrs["type"] = base.__name__
    if meta["metavar"]:
        attrs["metavar"] = meta["metavar"]
    return spec, tuple(a for a, _, _ in owners), attrs


def source() -> str:
    """This module's text with the data `render` gives."""
    with open(__file__, encoding="utf-8") as fh:
        text = fh.read()
    head = text[: text.rindex("\n# -- rendered") + 1]
    import pprint  # here: only writing this module again needs it, not every `tokreg train`

    algos, flags = render()
    body = pprint.pformat(flags, width=120, sort_dicts=False)
    return (
        f"{head}# -- rendered by `render` (do not edit below)\n\nALGORITHMS = {algos!r}\n\nFLAGS: Rendered = {body}\n"
    )


if __name__ == "__main__":
    print(source(), end="")

# -- rendered by `render` (do not edit below)

ALGORITHMS = ("bpe", "wordpiece", "unigram", "superbpe", "parity-bpe", "picky")

FLAGS: Rendered = {
    "pattern": (
        "--pattern",
        ("bpe", "superbpe", "parity-bpe", "picky"),
        {
            "help": "[bpe] Pre-tokenizer: gpt2, cl100k, o200k, whitespace, or a regex [default: cl100k; whitespace "
            "with --char-level]. [default: ] [superbpe] Stage 1's pre-tokenizer: gpt2, cl100k, o200k or a "
            "regex [default: cl100k]. [default: ] [parity-bpe] Pre-tokenizer: gpt2, cl100k, o200k or a regex "
            "[default: cl100k]. [default: ] [picky] Pre-tokenizer: gpt2, cl100k, o200k or a regex [default: "
            "cl100k]. [default: ]",
            "default": None,
            "type": "str",
            "metavar": "NAME|REGEX",
        },
    ),
    "char_level": (
        "--char-level",
        ("bpe",),
        {"help": "[bpe] Classic BPE over characters instead of bytes.", "default": False, "is_flag": True},
    ),
    "end_of_word_suffix": (
        "--end-of-word-suffix",
        ("bpe",),
        {
            "help": "[bpe] End-of-word symbol for --char-level, e.g. '</w>'.",
            "default": None,
            "type": "str",
            "metavar": "S",
        },
    ),
    "max_token_length": (
        "--max-token-length",
        ("bpe", "wordpiece", "superbpe", "parity-bpe", "picky"),
        {
            "help": "[bpe] Never learn a token longer than N bytes (0: no limit). [default: 0] [wordpiece] "
            "Never learn a token longer than N characters, prefix not counted (0: no limit). "
            "[default: 0] [superbpe] Never learn a token longer than N bytes (0: no limit). "
            "[default: 0] [parity-bpe] Never learn a token longer than N bytes (0: no limit). "
            "[default: 0] [picky] Never learn a token longer than N bytes (0: no limit). [default: "
            "0]",
            "default": None,
            "type": "int",
            "metavar": "N",
        },
    ),
    "objective": (
        "--objective",
        ("wordpiece",),
        {
            "help": "[wordpiece] What a merge maximises: frequency (the pair's count, as Hugging Face's "
            "WordPieceTrainer), likelihood (the gain in corpus log-likelihood, Google's WordPiece) or "
            "ratio (count(ab) / (count(a) * count(b)), tokreg's only choice before this option). [default: "
            "frequency]",
            "default": None,
            "type": ("frequency", "likelihood", "ratio"),
        },
    ),
    "lowercase": (
        "--lowercase",
        ("wordpiece",),
        {"help": "[wordpiece] Lowercase the text (uncased BERT).", "default": False, "is_flag": True},
    ),
    "strip_accents": (
        "--strip-accents/--keep-accents",
        ("wordpiece",),
        {"help": "[wordpiece] Remove accents [default: when --lowercase, as BERT does].", "default": None},
    ),
    "unicode_normalization": (
        "--normalization",
        ("wordpiece", "unigram"),
        {
            "help": "[wordpiece] Unicode normalization before the BERT steps. [default: none] "
            "[unigram] SentencePiece's normalization rule (spm_train "
            "--normalization_rule_name): nmt_nfkc (spm_train's default: NFKC plus whitespace "
            "and control-character cleanup), nfkc, nmt_nfkc_cf / nfkc_cf (plus case folding), "
            "identity (none; tokreg's default, so that text decodes back as it was). [default: "
            "identity]",
            "default": None,
            "type": ("none", "nfc", "nfkc", "nfd", "nfkd", "nmt_nfkc", "nmt_nfkc_cf", "nfkc_cf", "identity"),
        },
    ),
    "continuing_prefix": (
        "--prefix",
        ("wordpiece",),
        {"help": "[wordpiece] Continuation prefix. [default: ##]", "default": None, "type": "str", "metavar": "P"},
    ),
    "unk_token": (
        "--unk-token",
        ("wordpiece", "unigram"),
        {
            "help": "[wordpiece, unigram] Unknown token. [default: [UNK] / <unk>]",
            "default": None,
            "type": "str",
            "metavar": "T",
        },
    ),
    "limit_alphabet": (
        "--limit-alphabet",
        ("wordpiece",),
        {
            "help": "[wordpiece] Keep only the N most frequent characters.",
            "default": None,
            "type": "int",
            "metavar": "N",
        },
    ),
    "max_input_chars_per_word": (
        "--max-word-chars",
        ("wordpiece",),
        {
            "help": "[wordpiece] Longer words encode as the unknown token. [default: 100]",
            "default": None,
            "type": "int",
            "metavar": "N",
        },
    ),
    "byte_fallback": (
        "--byte-fallback/--no-byte-fallback",
        ("unigram",),
        {
            "help": "[unigram] Add the 256 <0xNN> byte pieces, so nothing is unknown: a newline, a tab or a "
            "character the corpus lacks decodes back as it was. On by default in tokreg, off in "
            "spm_train: --no-byte-fallback gives spm_train's vocabulary, where they become <unk>. "
            "[default: True]",
            "default": None,
        },
    ),
    "shrinking_factor": (
        "--shrinking-factor",
        ("unigram",),
        {
            "help": "[unigram] Fraction of pieces kept per prune round. [default: 0.75]",
            "default": None,
            "type": "float",
        },
    ),
    "max_piece_length": (
        "--max-piece-length",
        ("unigram",),
        {
            "help": "[unigram] Longest piece, in characters. [default: 16]",
            "default": None,
            "type": "int",
            "metavar": "N",
        },
    ),
    "split_by_unicode_script": (
        "--split-by-unicode-script/--no-split-by-unicode-script",
        ("unigram",),
        {
            "help": "[unigram] No piece mixes Unicode scripts (Hiragana and Katakana count as Han). [default: True]",
            "default": None,
        },
    ),
    "split_by_number": (
        "--split-by-number/--no-split-by-number",
        ("unigram",),
        {"help": "[unigram] Digits are a script of their own. [default: True]", "default": None},
    ),
    "split_by_whitespace": (
        "--split-by-whitespace/--no-split-by-whitespace",
        ("unigram",),
        {
            "help": "[unigram] Pieces only start with ▁; off: ▁ may sit inside a piece (whole lines are "
            "trained on). [default: True]",
            "default": None,
        },
    ),
    "split_digits": (
        "--split-digits",
        ("unigram",),
        {"help": "[unigram] Every digit is a piece of its own.", "default": False, "is_flag": True},
    ),
    "character_coverage": (
        "--character-coverage",
        ("unigram",),
        {
            "help": "[unigram] Fraction of the characters' occurrences that single-character pieces must "
            "cover; rarer characters become unknown (or bytes). spm_train's default is 0.9995; "
            "tokreg's keeps every character. [default: 1.0]",
            "default": None,
            "type": "float",
            "metavar": "F",
        },
    ),
    "control_symbols": (
        "--control-symbols",
        ("unigram",),
        {
            "help": "[unigram] Comma-separated control pieces (never matched in text), after --special.",
            "default": None,
            "type": "str",
            "metavar": "A,B",
        },
    ),
    "user_defined_symbols": (
        "--user-defined-symbols",
        ("unigram",),
        {
            "help": "[unigram] Comma-separated pieces always matched whole, and never normalized.",
            "default": None,
            "type": "str",
            "metavar": "A,B",
        },
    ),
    "remove_extra_whitespaces": (
        "--remove-extra-whitespaces",
        ("unigram",),
        {
            "help": "[unigram] Strip spaces at both ends and collapse runs of spaces, as spm_train "
            "does by default (lossy, hence off by default).",
            "default": False,
            "is_flag": True,
        },
    ),
    "transition": (
        "--transition",
        ("superbpe",),
        {
            "help": "[superbpe] The transition point t of SuperBPE, Liu et al. 2025, arXiv 2503.13423: stage 1 "
            "learns ordinary tokens up to T tokens, stage 2 then merges across spaces (0: 90% of the "
            "smallest --vocab-size).",
            "default": None,
            "type": "int",
            "metavar": "T",
        },
    ),
    "max_words": (
        "--max-words",
        ("superbpe",),
        {
            "help": "[superbpe] Stage 2 merges within runs of up to K pre-tokens (cut left to right; a line break "
            "is a run of its own). [default: 4]",
            "default": None,
            "type": "int",
            "metavar": "K",
        },
    ),
    "lang": (
        "--lang",
        ("parity-bpe",),
        {
            "help": "[parity-bpe] The language of an input file, or of every file under a folder (parity-aware BPE, "
            "Foroutan et al. 2025, arXiv 2508.04796); repeatable, one or more per language. Without INPUTS, "
            "these paths are the corpus.",
            "default": (),
            "multiple": True,
            "type": "str",
            "metavar": "CODE=PATH",
        },
    ),
    "parallel": (
        "--parallel",
        ("parity-bpe",),
        {
            "help": "[parity-bpe] A development text per language, the same content in each (as tokreg eval "
            "--parallel takes): the language with the most tokens on it gets the next merge. Without it: "
            "the fewest bytes per token on its own training text.",
            "default": (),
            "multiple": True,
            "type": "str",
            "metavar": "CODE=PATH",
        },
    ),
    "lang_field": (
        "--lang-field",
        ("parity-bpe",),
        {
            "help": "[parity-bpe] JSON Lines inputs: the field of each record that holds its language code "
            "(instead of --lang).",
            "default": None,
            "type": "str",
            "metavar": "NAME",
        },
    ),
    "global_merges": (
        "--global-merges",
        ("parity-bpe",),
        {
            "help": "[parity-bpe] The first N merges by the count over all languages (the paper's hybrid "
            "variant); when one language dominates the corpus, 85% of the merges keeps its text's "
            "tokens per byte near plain BPE's (README).",
            "default": None,
            "type": "int",
            "metavar": "N",
        },
    ),
    "window": (
        "--window",
        ("parity-bpe",),
        {
            "help": "[parity-bpe] The paper's moving-window variant: a language that won more than --window-alpha / "
            "(number of languages) of the last W parity merges waits behind the others (0: off; the paper's W "
            "is 100).",
            "default": None,
            "type": "int",
            "metavar": "W",
        },
    ),
    "window_alpha": (
        "--window-alpha",
        ("parity-bpe",),
        {
            "help": "[parity-bpe] The moving window's share: A / (number of languages) of its merges. [default: 2]",
            "default": None,
            "type": "int",
            "metavar": "A",
        },
    ),
    "threshold": (
        "--threshold",
        ("picky",),
        {
            "help": "[picky] The IoS threshold tau of PickyBPE, Chizhov et al. 2024, arXiv 2409.04599: after each "
            "merge, a part of the pair with f(pair) / f(part) above TAU is removed and split back into its "
            "parents. [default: 0.9]",
            "default": None,
            "type": "float",
            "metavar": "TAU",
        },
    ),
    "residue_below": (
        "--residue-below",
        ("picky",),
        {
            "help": "[picky] The residue rule (0: off): a token whose ratio F1/(F1+F2) on the training text "
            "(LiteToken's, Sun et al. 2026, arXiv 2602.04706; F1 its occurrences left, F2 all it lost "
            "to merges and removals) falls below R stays a merge step but leaves the vocabulary when "
            "cheap enough (see --residue-cost), its slot going to another merge (after Scaffold-BPE, "
            "Lian et al. 2024, arXiv 2404.17808).",
            "default": None,
            "type": "float",
            "metavar": "R",
        },
    ),
    "residue_min_seen": (
        "--residue-min-seen",
        ("picky",),
        {
            "help": "[picky] The residue rule judges a token once F1+F2 reaches N. [default: 10]",
            "default": None,
            "type": "int",
            "metavar": "N",
        },
    ),
    "residue_cost": (
        "--residue-cost",
        ("picky",),
        {
            "help": "[picky] The residue rule's budget: a residue leaves while its F1 is at most K times the "
            "count of the last merge (what its slot buys back); 1 keeps compression level with BPE, "
            "larger removes more residues and costs tokens. [default: 1.0]",
            "default": None,
            "type": "float",
            "metavar": "K",
        },
    ),
}
