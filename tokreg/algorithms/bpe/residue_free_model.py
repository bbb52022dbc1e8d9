"""A byte-level BPE version without its residues (issue 28, item 3c; residues as LiteToken
defines them, arXiv 2602.04706): what it is and the core encoder it compiles to
(`_core.Encoder.residue_free_bpe`, src/bpe/residue_free.rs). Made from a byte-level BPE version
by `tokreg drop-residues` (versions/no_residues.py). Stored as "bpe", its parent's config plus
`"model": "residue_free"` and the ids taken out:

    {"byte_level": true, "pattern": REGEX, "model": "residue_free", "removed": [ID, ...]}

Encoding is the parent's, then each emitted removed token split into its parents (PickyBPE's
removal, Chizhov et al., arXiv 2409.04599, applied after the merges): every other id, and every
segmentation that emitted no removed token, is the parent's. The removed tokens keep their ids
as holes (kind `removed`), so a model trained on the parent keeps its embedding rows.

A tokenizer.json or .tiktoken file cannot say "this token is formed but never emitted", so
both exports refuse in one line.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ... import _core
from ...errors import InputError
from .. import template
from ..interfaces import Model, exact_keys
from .model import GAPS_KEYS, gaps_json, gaps_of

WHAT = "byte-level BPE without its residues (LiteToken, arXiv 2602.04706; PickyBPE's removals, arXiv 2409.04599)"


@dataclass(frozen=True)
class ResidueFreeConfig:
    pattern: str
    removed: tuple[int, ...]  # ascending
    keep_gaps: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "byte_level": True,
            "model": "residue_free",
            "pattern": self.pattern,
            "removed": list(self.removed),
            **gaps_json(self.keep_gaps),
        }


class ResidueFreeBpe(Model[ResidueFreeConfig]):
    name = "residue_free_bpe"
    stored_as = "bpe"
    title = "residue-free BPE"

    def owns(self, config: Mapping[str, Any]) -> bool:
        return config.get("model") == "residue_free"

    def parse_config(self, raw: Mapping[str, Any]) -> ResidueFreeConfig:
        exact_keys(raw, {"byte_level", "model", "pattern", "removed"}, self.title, GAPS_KEYS | template.KEYS)
        removed = raw["removed"]
        if not isinstance(removed, list) or not all(isinstance(i, int) and i >= 0 for i in removed):
            raise InputError(
                f"this {self.title} version's config has a setting of the wrong type; the version is damaged"
            )
        return ResidueFreeConfig(str(raw["pattern"]), tuple(removed), gaps_of(raw, self.title))

    def display_config(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        return {**raw, "removed": f"{len(raw.get('removed', []))} token ids (kind 'removed' in the vocab view)"}

    def compile(self, content: bytes, config: ResidueFreeConfig) -> _core.Encoder:
        return _core.Encoder.residue_free_bpe(content, config.pattern, list(config.removed), keep_gaps=config.keep_gaps)

    def lossless(self, config: ResidueFreeConfig) -> bool:
        return True


def refusal(ref: str, fmt: str) -> InputError:
    return InputError(
        f"{ref} is {WHAT}: its removed tokens are formed by merges but never emitted, which a {fmt} file "
        "cannot express; nothing was written (export it as tokreg)"
    )


RESIDUE_FREE = ResidueFreeBpe()
