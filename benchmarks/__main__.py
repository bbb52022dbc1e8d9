"""`python -m benchmarks [SUITE...]` (or `just bench`): runs the suites and prints Markdown tables."""

from __future__ import annotations

import argparse
import importlib

from benchmarks.common import machine

SUITES = [
    "train_bpe",
    "encode",
    "versus",
    "worst_case",
    "load",
    "unigram",
    "wordpiece",
    "serve",
    "long_lines",
    "train_scale",
    "record",
]


def main() -> None:
    ap = argparse.ArgumentParser(prog="just bench", description=__doc__)
    ap.add_argument("suites", nargs="*", choices=SUITES + [[]], help="which suites (default: all)")
    args = ap.parse_args()
    print(f"Machine: {machine()}")
    for name in args.suites or SUITES:
        mod = importlib.import_module(f"benchmarks.{name}")
        mod.run()


if __name__ == "__main__":
    main()
