"""The options `tokreg train` offers are read ahead of time from the options classes
(tokreg/cli/train_flags.py): they must be what the classes say today, and a byte-level BPE run
must not import the other trainers."""

from __future__ import annotations

import subprocess
import sys

from tokreg.cli import train_flags


def test_rendered_flags_are_the_options_classes() -> None:
    # On failure: python -m tokreg.cli.train_flags > tokreg/cli/train_flags.py && ruff format it
    assert train_flags.render() == (train_flags.ALGORITHMS, train_flags.FLAGS)


def test_a_bpe_run_imports_no_other_trainer() -> None:
    code = (
        "import sys; from tokreg import algorithms; from tokreg.cli import train\n"
        "opts = train._options_for('bpe', {'pattern': 'gpt2'}, train.common_options(300, 0, (), 0, None))\n"
        "algorithms.trainer_for(opts)\n"
        "print(sorted(m for m in sys.modules if m.endswith('training')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines()[-1] == "['tokreg.algorithms.bpe.training', 'tokreg.training']"
