"""What the options of the byte-level BPE variants that split on one pattern (superword, parity-
aware, PickyBPE) share: the pattern, cl100k when none is given, and the pattern's name that a
run records beside its options (derived, so not read back as an option)."""

from __future__ import annotations

from typing import Any

from ..options import OptionsT, TrainOptions


class PatternOptions(TrainOptions):
    """A base with no fields of its own: each subclass (a frozen dataclass) declares `pattern`
    as its own command-line flag."""

    pattern: str

    @classmethod
    def from_json(cls: type[OptionsT], d: dict[str, Any]) -> OptionsT:
        d = {k: v for k, v in d.items() if k != "pattern_name"}  # recorded beside the options, derived
        return super().from_json(d)

    def pattern_or_default(self) -> str:
        return self.pattern or "cl100k"
