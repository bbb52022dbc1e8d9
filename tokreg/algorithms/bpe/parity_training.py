"""Training parity-aware BPE (`--algo parity-bpe`; Foroutan et al., "Parity-aware Byte Pair
Encoding: Improving Cross-lingual Fairness in Tokenization", arXiv 2508.04796): byte-level BPE
whose every merge goes to the language compressed worst so far, instead of to the pair most
frequent over all languages. The merge loop is the Rust core's (src/bpe/parity.rs).

Which language is worst:

- with a parallel set (`--parallel CODE=PATH` for every language: the same content in each, as
  `tokreg eval --parallel` takes): the language whose development text has the most tokens;
- without one: the language whose training text has the fewest bytes per token so far (the
  paper's `--ratio` fallback with equal ratios). Scripts differ in bytes per character (Chinese
  and Japanese take 3 bytes a character in UTF-8, English 1), so this is not a like-for-like
  comparison; give a parallel set when you have one.

`--global-merges N` takes the first N merges by the summed counts (the paper's hybrid variant);
`--window W` (with `--window-alpha A`) lets no language win more than A/L of the last W parity
merges while another could take its turn (the paper's moving-window variant, L languages).

What it makes is a plain byte-level BPE version: the same config, the same encoder, the same
hash as `--algo bpe` would give to the same merges, and it exports to tokenizer.json and
.tiktoken like one. What is parity's own is the record (`ParityRecord`): per merge the
language it went to and each language's gain; per language its bytes and tokens.

Inputs carry their language by `--lang CODE=PATH`: PATH an input file, or a folder whose files
are that language's (a folder per language); without positional inputs, the `--lang` paths are
the corpus. Or, for JSON Lines inputs, by a field of each record (`--lang-field lang`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Optional

from ... import _core, patterns
from ...data import ParityRecord, TokenizerData
from ...errors import InputError
from ..interfaces import LanguagePlan, Trainer, check_languages
from ..options import Progress, TrainOptions, below_alphabet, flag
from .model import ByteBpeConfig
from .pattern_options import PatternOptions
from .training import trained_result

#: The paper, as `--help` cites it.
PAPER = "parity-aware BPE, Foroutan et al. 2025, arXiv 2508.04796"


def _pairs(entries: Sequence[str], flag_name: str) -> list[tuple[str, str]]:
    """`CODE=PATH` entries as (code, path), refusing anything else in one line."""
    out = []
    for e in entries:
        code, sep, path = e.partition("=")
        if not sep or not code or not path or any(c in code for c in "/\\ "):
            raise InputError(f"{flag_name} {e!r} is not CODE=PATH (e.g. {flag_name} de=corpus/de/)")
        out.append((code, path))
    return out


@dataclass(frozen=True)
class ParityOptions(PatternOptions):
    """Options of a parity-aware BPE run (`--algo parity-bpe`)."""

    run_name = "parity-bpe"

    vocab_size: int
    lang: tuple[str, ...] = flag(
        (),
        metavar="CODE=PATH",
        help=f"The language of an input file, or of every file under a folder ({PAPER}); repeatable, one or more "
        "per language. Without INPUTS, these paths are the corpus.",
    )
    parallel: tuple[str, ...] = flag(
        (),
        metavar="CODE=PATH",
        help="A development text per language, the same content in each (as tokreg eval --parallel takes): the "
        "language with the most tokens on it gets the next merge. Without it: the fewest bytes per token on its "
        "own training text.",
    )
    lang_field: str = flag(
        "",
        metavar="NAME",
        help="JSON Lines inputs: the field of each record that holds its language code (instead of --lang).",
    )
    global_merges: int = flag(
        0,
        metavar="N",
        help="The first N merges by the count over all languages (the paper's hybrid variant); when one language "
        "dominates the corpus, 85% of the merges keeps its text's tokens per byte near plain BPE's (README).",
    )
    window: int = flag(
        0,
        metavar="W",
        help="The paper's moving-window variant: a language that won more than --window-alpha / (number of "
        "languages) of the last W parity merges waits behind the others (0: off; the paper's W is 100).",
    )
    window_alpha: int = flag(2, metavar="A", help="The moving window's share: A / (number of languages) of its merges.")
    pattern: str = flag(
        "", metavar="NAME|REGEX", help="Pre-tokenizer: gpt2, cl100k, o200k or a regex [default: cl100k]."
    )
    max_token_length: int = flag(0, metavar="N", help="Never learn a token longer than N bytes (0: no limit).")
    min_frequency: int = 0
    special: tuple[str, ...] = ()
    template: Optional[str] = None
    threads: int = 0
    memory_limit: Optional[int] = None
    max_piece_bytes: int = 0
    sample_bytes: int = 0

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> ParityOptions:
        d = dict(d)
        d["lang"] = tuple(d.get("lang", ()))
        d["parallel"] = tuple(d.get("parallel", ()))
        return super().from_json(d)

    def plan(self) -> LanguagePlan:
        """The languages: codes sorted (the core breaks ties between languages by this order)."""
        train: dict[str, list[str]] = {}
        for code, path in _pairs(self.lang, "--lang"):
            train.setdefault(code, []).append(os.path.abspath(path))
        dev: dict[str, str] = {}
        for code, path in _pairs(self.parallel, "--parallel"):
            if code in dev:
                raise InputError(f"--parallel gives two texts for {code}; give one development text per language")
            dev[code] = os.path.abspath(path)
        dev_sorted = {c: dev[c] for c in sorted(dev)}
        if self.lang_field:
            if train:
                raise InputError("give the languages with --lang or with --lang-field, not both")
            return LanguagePlan({}, dev_sorted, self.lang_field)  # the languages are known once read
        check_languages(train, dev)
        return LanguagePlan({c: tuple(train[c]) for c in sorted(train)}, dev_sorted)


class ParityTrainer(Trainer):
    options_type = ParityOptions

    def check(self, options: TrainOptions, sizes: Sequence[int]) -> None:
        assert isinstance(options, ParityOptions)
        opts = options
        opts.check_common()
        specials = len(dict.fromkeys(opts.special))
        if min(sizes) < 256 + specials:
            raise below_alphabet(min(sizes), f"byte-level BPE needs at least {256 + specials} (256 bytes + specials)")
        if opts.global_merges < 0:
            raise InputError(f"--global-merges must be 0 or more, not {opts.global_merges}")
        if opts.sample_bytes:
            raise InputError(
                "--sample-bytes does not apply to --algo parity-bpe: each language is counted whole "
                "(give smaller inputs)"
            )
        if opts.window < 0:
            raise InputError(f"--window must be 0 (off) or more, not {opts.window}")
        if opts.window_alpha < 1:
            raise InputError(
                f"--window-alpha must be 1 or more (a share of at least 1 / languages), not {opts.window_alpha}"
            )
        if patterns.resolve(opts.pattern_or_default())[0] == "whitespace":
            raise InputError("parity-aware BPE is byte-level: choose gpt2, cl100k, o200k or a regex for --pattern")
        opts.plan()

    def counting(self, options: TrainOptions) -> dict[str, Any]:
        """The pieces of the pattern, as plain byte-level BPE counts them (per language)."""
        assert isinstance(options, ParityOptions)
        _, regex = patterns.resolve(options.pattern_or_default())
        return {"splitting": "pieces", "pattern": regex, "max_piece_bytes": options.max_piece_bytes}

    def utf8_hint(self, options: TrainOptions) -> Optional[str]:
        return None

    def languages(self, options: TrainOptions) -> Optional[LanguagePlan]:
        assert isinstance(options, ParityOptions)
        return options.plan()

    def train_counts(
        self, counts: _core.Counts, options: TrainOptions, sizes: Sequence[int], progress: Optional[Progress] = None
    ) -> tuple[list[TokenizerData], dict[str, Any]]:
        raise InputError(
            "parity-aware BPE counts each language apart and cannot train from one count of the whole corpus "
            "(--from-counts); give the inputs with --lang"
        )

    def train_languages(
        self,
        train: dict[str, _core.Counts],
        dev: dict[str, _core.Counts],
        options: TrainOptions,
        sizes: Sequence[int],
        progress: Optional[Progress] = None,
    ) -> tuple[list[TokenizerData], dict[str, Any]]:
        assert isinstance(options, ParityOptions)
        opts = options
        specials = list(dict.fromkeys(opts.special))
        codes = tuple(sorted(train))
        out, (chosen, gains, train_bytes, dev_bytes, costs) = _core.train_parity(
            [train[c] for c in codes],
            [dev[c] for c in codes] if dev else [],
            max(sizes) - len(specials),
            min_frequency=opts.min_frequency,
            max_token_bytes=opts.max_token_length,
            snapshots=[s - len(specials) for s in sizes],
            global_merges=opts.global_merges,
            window=opts.window,
            alpha=opts.window_alpha,
            progress=progress,
        )
        pattern_name, regex = patterns.resolve(opts.pattern_or_default())
        config = ByteBpeConfig(regex).to_json()
        datas, info = trained_result(out, "byte", specials, config, pattern_name)
        n = len(codes)
        for data, (train_tokens, dev_tokens) in zip(datas, costs):
            m = len(data.merges)
            data.parity = ParityRecord(
                languages=codes,
                chosen=chosen[:m],
                gains=gains[: m * n],
                train_bytes=train_bytes,
                train_tokens=train_tokens,
                dev_bytes=dev_bytes if dev else None,
                dev_tokens=dev_tokens if dev else None,
            )
        return datas, info


TRAINER = ParityTrainer()
