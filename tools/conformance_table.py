"""Prints issue 23's conformance table: every layout of tests/conformance/layouts.py built as
real files are, taken into a fresh registry, and compared with its reference library on every
line of the shared corpora and on N generated texts (tests/conformance/strategies.py).

    python tools/conformance_table.py                    # every layout, every line, 200 texts
    python tools/conformance_table.py --lines 300 --examples 20 --layout hf-bert-uncased

Each cell is "lines compared / lines differing" (the corpora's lines and the generated texts
together), "refused: <reason>" when tokreg refused in one line, "n/a: <reason>", or
"error: <what raised>"; the export cell has one figure per format. Under the table, the first
differing line of every cell that has one. The figures are computed here, each run; the rules
of each comparison are in tests/conformance/references.py. Needs the shared data
(TOKREG_TEST_DATA, default ../shared/data) and tokenizers, transformers, sentencepiece, tiktoken.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.conformance import run, strategies  # noqa: E402
from tests.conformance.layouts import BY_NAME, LAYOUTS, Context  # noqa: E402
from tests.conftest import CORPORA  # noqa: E402
from tests.spm_models import RULE_TSV, VARIANTS, train, training_lines  # noqa: E402
from tokreg import Registry  # noqa: E402


def spm_trainer(folder: Path) -> Context:
    """A Context whose SentencePiece models are trained here, as tests/spm_models.py trains them."""
    made: dict[str, Path] = {}

    def model(variant: str) -> Path:
        if variant not in made:
            options = dict(VARIANTS[variant])
            if options.get("normalization_rule_tsv") == "RULE":
                (folder / "rule.tsv").write_text(RULE_TSV)
                options["normalization_rule_tsv"] = str(folder / "rule.tsv")
            made[variant] = folder / f"{variant}.model"
            made[variant].write_bytes(train(training_lines(), **options))
        return made[variant]

    return Context(folder, model)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--lines", type=int, default=None, help="the first N lines of each corpus (default: every line)")
    ap.add_argument("--examples", type=int, default=200, help="generated texts added to the lines (default 200)")
    ap.add_argument("--layout", action="append", choices=sorted(BY_NAME), help="only these layouts (repeatable)")
    args = ap.parse_args(argv)
    texts = run.corpus_lines(CORPORA, args.lines) + strategies.drawn(strategies.BORDER, args.examples)
    layouts = [BY_NAME[n] for n in args.layout] if args.layout else LAYOUTS
    which = "every line" if args.lines is None else f"the first {args.lines} lines"
    print(f"{len(texts):,} texts: {which} of {', '.join(CORPORA)}, and {args.examples} generated (strategies.BORDER)")
    rows, firsts = [], []
    with tempfile.TemporaryDirectory(prefix="tokreg-conformance-") as tmp:
        reg = Registry(Path(tmp) / "registry.db", create=True)
        spm_folder = Path(tmp) / "spm"
        spm_folder.mkdir()
        shared = spm_trainer(spm_folder)
        for layout in layouts:
            started = time.perf_counter()
            folder = Path(tmp) / layout.name
            folder.mkdir()
            built = run.build(layout, Context(folder, shared.spm), reg)
            cells = {c: built.cell(c, "all", texts) for c in run.COLUMNS}
            rows.append([layout.name] + [cells[c].figure() for c in run.COLUMNS])
            firsts += [
                f"- {layout.name} / {c}: {cells[c].why()}" for c in run.COLUMNS if not cells[c].ok or cells[c].first
            ]
            print(f"  {layout.name}: {time.perf_counter() - started:.0f}s", file=sys.stderr)
        reg.close()
    print()
    print("| layout | " + " | ".join(run.COLUMNS) + " |")
    print("|---" * (len(run.COLUMNS) + 1) + "|")
    for row in rows:
        print("| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |")
    if firsts:
        print("\nFirst difference of each cell that has one:\n")
        print("\n".join(firsts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
