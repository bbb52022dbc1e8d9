"""Loading: `tokreg.load(name@1)` from the registry to a ready encoder (fresh process each time,
so no in-process cache helps), beside tiktoken building its Encoding from the same file."""

from __future__ import annotations

from benchmarks.common import child, table
from benchmarks.vocabs import VOCABS, db_path


def run() -> None:
    db = db_path()
    rows = []
    for name in VOCABS:
        ours = [child("benchmarks.load_child", "tokreg", name, db)["seconds"] for _ in range(3)]
        theirs = [child("benchmarks.load_child", "tiktoken", name, db)["seconds"] for _ in range(3)]
        rows.append([name, f"{min(ours):.3f}", f"{min(theirs):.3f}"])
    table(
        "Load to a ready encoder (best of 3 fresh processes)",
        ["vocab", "tokreg.load s", "tiktoken Encoding s"],
        rows,
    )
