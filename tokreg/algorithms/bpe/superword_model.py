"""Superword BPE (SuperBPE, Liu et al., "SuperBPE: Space Travel for Language Models", arXiv
2503.13423): what a version is and the core encoder it compiles to (`_core.Encoder.superword_bpe`,
src/bpe/superword.rs). Stored as "bpe", told apart by `"model": "superword"` in its config:

    {"byte_level": true, "model": "superword", "pattern": REGEX,
     "transition": t, "stage1_merges": M, "max_words": K}

Stage 1 is byte-level BPE over the pieces of `pattern`: the tokens with ids below `t` and the
first M merges. Stage 2's merges (ranks M and up) join the pieces of a run: up to K consecutive
pieces, cut left to right, a piece with a line break a run of its own. Encoding a run: each
piece by stage 1 (tiktoken's rank rule, as a byte-level version), then stage 2's merges by rank
over the whole run. Lossless, like byte-level BPE.

Hugging Face's tokenizer.json and tiktoken's files hold one merge list over one pre-tokenization;
they cannot say "stage 1 within pieces, stage 2 within runs", so both exports refuse (`NoExport`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ... import _core
from ...errors import InputError
from .. import template
from ..interfaces import Model, exact_keys

#: The paper, as `--help` and refusals cite it.
PAPER = "SuperBPE, Liu et al. 2025, arXiv 2503.13423"


@dataclass(frozen=True)
class SuperwordConfig:
    pattern: str
    transition: int  # tokens (256 bytes + stage 1's) when stage 2 began
    stage1_merges: int
    max_words: int

    def to_json(self) -> dict[str, Any]:
        return {
            "byte_level": True,
            "model": "superword",
            "pattern": self.pattern,
            "transition": self.transition,
            "stage1_merges": self.stage1_merges,
            "max_words": self.max_words,
        }


class SuperwordBpe(Model[SuperwordConfig]):
    name = "superword_bpe"
    stored_as = "bpe"
    title = "superword BPE"

    def owns(self, config: Mapping[str, Any]) -> bool:
        return config.get("model") == "superword"

    def parse_config(self, raw: Mapping[str, Any]) -> SuperwordConfig:
        keys = {"byte_level", "model", "pattern", "transition", "stage1_merges", "max_words"}
        exact_keys(raw, keys, self.title, template.KEYS)
        numbers = [raw[k] for k in ("transition", "stage1_merges", "max_words")]
        if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in numbers) or raw["max_words"] < 1:
            raise InputError(
                f"this {self.title} version's config has a setting of the wrong type; the version is damaged"
            )
        return SuperwordConfig(str(raw["pattern"]), *numbers)

    def compile(self, content: bytes, config: SuperwordConfig) -> _core.Encoder:
        return _core.Encoder.superword_bpe(
            content, config.pattern, config.transition, config.stage1_merges, config.max_words
        )

    def lossless(self, config: SuperwordConfig) -> bool:
        return True


def refusal(ref: str, fmt: str) -> InputError:
    return InputError(
        f"{ref} is superword BPE ({PAPER}), whose two stages (merges within pieces, then merges across "
        f"the pieces of runs) a {fmt} file cannot express; nothing was written (export it as tokreg)"
    )


SUPERWORD = SuperwordBpe()
