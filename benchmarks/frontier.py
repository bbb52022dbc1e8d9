"""`just bench frontier`: the tokenizer methods beyond classic BPE (issue 28), each beside plain
BPE: runs every `benchmarks/frontier_*.py` it finds (superword, parity, residues, stochastic
encodings), in name order, each module's `run()`."""

from __future__ import annotations

import importlib
from pathlib import Path


def run() -> None:
    for path in sorted(Path(__file__).parent.glob("frontier_*.py")):
        importlib.import_module(f"benchmarks.{path.stem}").run()
