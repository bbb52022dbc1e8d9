"""PickyBPE (Chizhov, Arnett, Korotkova and Yamshchikov, "BPE Gets Picky: Efficient Vocabulary
Refinement During Tokenizer Training", EMNLP 2024, arXiv 2409.04599): what a version is and the
core encoder it compiles to (`_core.Encoder.picky_bpe`, src/bpe/picky.rs). Stored as "bpe", told
apart by `"model": "picky"` in its config:

    {"byte_level": true, "model": "picky", "pattern": REGEX,
     "removals": [[RANK, ID], ...], "threshold": TAU}

`removals` are the removal events, in order: token ID left the vocabulary right after the merge
of rank RANK, its occurrences split into its parents (each parent that was itself removed by
then into its own parents). Encoding replays the merges and removals in that order on each piece
of `pattern`. Tokens of kind `removed` are the ones a removal took out for good: they keep an id
(the merges name them) but no segmentation ends with one, and the vocabulary size leaves them
out. `threshold` is the IoS threshold tau of the run (recorded; encoding does not read it).

Hugging Face's tokenizer.json and tiktoken's files hold merges (or ranks) and nothing that
splits a token again, so both exports refuse (`NoExport`): no file of theirs gives these ids.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Optional

from ... import _core
from ...errors import InputError
from .. import template
from ..interfaces import Model, exact_keys

#: The paper, as `--help` and refusals cite it.
PAPER = "PickyBPE, Chizhov et al. 2024, arXiv 2409.04599"
#: The kind of a token removed for good.
REMOVED = "removed"


@dataclass(frozen=True)
class PickyConfig:
    pattern: str
    removals: tuple[tuple[int, int], ...]  # (rank of the merge it follows, token id), in order
    threshold: Optional[float] = None  # tau of the run

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "byte_level": True,
            "model": "picky",
            "pattern": self.pattern,
            "removals": [list(r) for r in self.removals],
        }
        if self.threshold is not None:
            out["threshold"] = self.threshold
        return out


class PickyBpe(Model[PickyConfig]):
    name = "picky_bpe"
    stored_as = "bpe"
    title = "PickyBPE"

    def owns(self, config: Mapping[str, Any]) -> bool:
        return config.get("model") == "picky"

    def parse_config(self, raw: Mapping[str, Any]) -> PickyConfig:
        exact_keys(raw, {"byte_level", "model", "pattern", "removals"}, self.title, template.KEYS | {"threshold"})
        removals = raw["removals"]
        ok = isinstance(removals, list) and all(
            isinstance(r, list) and len(r) == 2 and all(isinstance(x, int) and x >= 0 for x in r) for r in removals
        )
        tau = raw.get("threshold")
        if not ok or (tau is not None and not isinstance(tau, (int, float))):
            raise InputError(
                f"this {self.title} version's config has a setting of the wrong type; the version is damaged"
            )
        return PickyConfig(str(raw["pattern"]), tuple((a, b) for a, b in removals), tau)

    def display_config(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        out = dict(raw)
        out["removals"] = f"{len(raw.get('removals', []))} removal events (tokreg show lists them)"
        return out

    def compile(self, content: bytes, config: PickyConfig) -> _core.Encoder:
        return _core.Encoder.picky_bpe(content, config.pattern, list(config.removals))

    def lossless(self, config: PickyConfig) -> bool:
        return True


def refusal(ref: str, fmt: str) -> InputError:
    return InputError(
        f"{ref} is PickyBPE ({PAPER}), whose removal events (a token split back into its parents "
        f"between merges) a {fmt} file cannot express; nothing was written (export it as tokreg)"
    )


PICKY = PickyBpe()
