"""PickyBPE (Chizhov, Arnett, Korotkova and Yamshchikov, "BPE Gets Picky: Efficient Vocabulary
Refinement During Tokenizer Training", EMNLP 2024, arXiv 2409.04599): what a version is and the
core encoder it compiles to (`_core.Encoder.picky_bpe`, src/bpe/picky.rs). Stored as "bpe", told
apart by `"model": "picky"` in its config:

    {"byte_level": true, "model": "picky", "pattern": REGEX,
     "removals": [[RANK, ID], ...], "threshold": TAU}

plus, for a run with the residue rule, "residue_below": R, "residue_min_seen": N and
"residue_cost": K (recorded, so the hash covers them; encoding does not read them: the residues
that left are removal events after the last merge like any other).

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
#: The residue measure `--residue-below` applies during training, as `--help` cites it.
RESIDUES = "LiteToken's, Sun et al. 2026, arXiv 2602.04706"
#: The budget the residue rule borrows.
SCAFFOLD = "after Scaffold-BPE, Lian et al. 2024, arXiv 2404.17808"
#: The kind of a token removed for good.
REMOVED = "removed"


@dataclass(frozen=True)
class PickyConfig:
    pattern: str
    removals: tuple[tuple[int, int], ...]  # (rank of the merge it follows, token id), in order
    threshold: Optional[float] = None  # tau of the run
    residues: Optional[tuple[float, int, float]] = None  # (R, N, K) of the residue rule; None: off

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "byte_level": True,
            "model": "picky",
            "pattern": self.pattern,
            "removals": [list(r) for r in self.removals],
        }
        if self.threshold is not None:
            out["threshold"] = self.threshold
        if self.residues is not None:
            out["residue_below"], out["residue_min_seen"], out["residue_cost"] = self.residues
        return out


class PickyBpe(Model[PickyConfig]):
    name = "picky_bpe"
    stored_as = "bpe"
    title = "PickyBPE"

    def owns(self, config: Mapping[str, Any]) -> bool:
        return config.get("model") == "picky"

    def parse_config(self, raw: Mapping[str, Any]) -> PickyConfig:
        exact_keys(
            raw,
            {"byte_level", "model", "pattern", "removals"},
            self.title,
            template.KEYS | {"threshold", "residue_below", "residue_min_seen", "residue_cost"},
        )
        removals = raw["removals"]
        ok = isinstance(removals, list) and all(
            isinstance(r, list) and len(r) == 2 and all(isinstance(x, int) and x >= 0 for x in r) for r in removals
        )
        tau = raw.get("threshold")
        below, seen, cost = raw.get("residue_below"), raw.get("residue_min_seen"), raw.get("residue_cost")
        rule_ok = (below is None) == (seen is None) == (cost is None) and (
            below is None
            or (isinstance(below, (int, float)) and isinstance(seen, int) and isinstance(cost, (int, float)))
        )
        if not ok or not rule_ok or (tau is not None and not isinstance(tau, (int, float))):
            raise InputError(
                f"this {self.title} version's config has a setting of the wrong type; the version is damaged"
            )
        rule = (
            (float(below), int(seen), float(cost))
            if below is not None and seen is not None and cost is not None
            else None
        )
        return PickyConfig(str(raw["pattern"]), tuple((a, b) for a, b in removals), tau, rule)

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
