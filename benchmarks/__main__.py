"""`python -m benchmarks [SUITE...]` (or `just bench`): runs the suites and prints Markdown tables."""

from __future__ import annotations

import argparse
import compileall
import importlib

from benchmarks.common import ROOT, machine, start_load_watch

SUITES = [
    "train_bpe",
    "encode",
    "versus",
    "worst_case",
    "load",
    "start",
    "unigram",
    "unigram_quality",
    "wordpiece",
    "wordpiece_quality",
    "serve",
    "long_lines",
    "train_scale",
    "record",
    "extend",
    "tokenize",
    "frontier",
]


def main() -> None:
    ap = argparse.ArgumentParser(prog="just bench", description=__doc__)
    ap.add_argument("suites", nargs="*", choices=SUITES + [[]], help="which suites (default: all)")
    args = ap.parse_args()
    print(f"Machine: {machine()}")
    # Fresh processes start as an installed tokreg starts: from compiled modules. An editable
    # install under PYTHONDONTWRITEBYTECODE=1 (as on the shared machine) would otherwise compile
    # tokreg's own source at every start, while the peers' wheels come compiled.
    compileall.compile_dir(str(ROOT / "tokreg"), quiet=1)
    start_load_watch()
    for name in args.suites or SUITES:
        mod = importlib.import_module(f"benchmarks.{name}")
        mod.run()


if __name__ == "__main__":
    main()
