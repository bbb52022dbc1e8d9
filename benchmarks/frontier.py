"""The `frontier` suite (issue 28: beyond classic BPE): runs every `benchmarks/frontier_*.py`
it finds, in name order, each a module with a `run()` that prints its tables."""

from __future__ import annotations

import importlib
from pathlib import Path


def run() -> None:
    for path in sorted(Path(__file__).parent.glob("frontier_*.py")):
        importlib.import_module(f"benchmarks.{path.stem}").run()
