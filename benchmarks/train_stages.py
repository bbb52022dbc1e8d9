"""Where a small `tokreg train` spends its time, stage by stage, beside gigabpe's whole run:
`python -m benchmarks.train_stages [RUNS] CORPUS...` (default 5 runs each, interleaved, every run
a fresh process; byte-level BPE, 32k, GPT-2's split; gigabpe with `pretokenizer="bytelevel"`).

Each stage is the time from the mark before it to its own, in milliseconds: wall time (from
the process's start, as `scale_child.py` counts it), CPU time of the whole process (every
thread) and CPU time of the command's own thread (the difference is the threads beside it:
the core's counting pool, the registry's opening, the measure). The marks come from wrappers
put around tokreg's functions by the child before the command runs (a few microseconds each);
the child imports the lean SQLite recorder on its own thread to wrap it, where a real run
imports it on the opening thread while the core trains: that import is its own line, apart.
The registry exists before the run (as in `train_scale`). Per stage: median (best) of the runs.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

Mark = tuple[str, float, float, float]


def _child(who: str, corpus: str, db: str) -> None:
    from benchmarks.scale_child import since_start

    t0 = time.perf_counter() - since_start()
    marks: list[Mark] = [("start", 0.0, 0.0, 0.0)]

    def mark(label: str) -> None:
        marks.append((label, (time.perf_counter() - t0) * 1e3, time.process_time() * 1e3, time.thread_time() * 1e3))

    mark("interpreter")
    if who == "gigabpe":
        import gigabpe

        mark("import")
        gigabpe.train_bpe([corpus], 32_000, pretokenizer="bytelevel")
        mark("count and train")
    else:
        _tokreg(corpus, db, mark)
    rows = [(marks[i][0], *(marks[i][k] - marks[i - 1][k] for k in (1, 2, 3))) for i in range(1, len(marks))]
    rows.append(("whole run", marks[-1][1], marks[-1][2], marks[-1][3]))
    print(json.dumps(rows), flush=True)
    os._exit(0)


def _tokreg(corpus: str, db: str, mark: Callable[[str], None]) -> None:
    import tokreg.cli
    import tokreg.cli.train  # noqa: F401  (the command's module, as the group imports it)

    mark("import")
    from tokreg import _core, console
    from tokreg.cli import opening
    from tokreg.store import bulk_rows, sqlite_write
    from tokreg.training import counting_local, train_run

    mark("(the recorder's import: on the opening thread in a real run)")

    def wrap(owner: Any, name: str, before: str = "", after: str = "") -> None:
        f = getattr(owner, name)

        def marked(*args: Any, **kwargs: Any) -> Any:
            if before:
                mark(before)
            try:
                return f(*args, **kwargs)
            finally:
                if after:
                    mark(after)

        setattr(owner, name, marked)

    wrap(counting_local, "count_sources", before="setup (click, options, trainer module)", after="counting")
    wrap(_core, "train_bpe", after="training (core)")
    wrap(train_run, "train_unmeasured", after="rows, content, hashes")
    wrap(opening.Opening, "registry", after="wait for the registry")
    tables = iter(["insert tokens", "insert merges"])
    insert = bulk_rows.insert

    def insert_marked(*args: Any, **kwargs: Any) -> None:
        insert(*args, **kwargs)
        mark(next(tables, "insert other rows"))

    bulk_rows.insert = insert_marked

    class Marked:
        """The recorder's connection, marking before and after its COMMIT."""

        def __init__(self, conn: Any):
            self.conn = conn

        def execute(self, sql: str, *params: Any) -> Any:
            if sql == "COMMIT":
                mark("samples, runs, rounds")
            out = self.conn.execute(sql, *params)
            if sql == "COMMIT":
                mark("commit")
            return out

        def __getattr__(self, name: str) -> Any:
            return getattr(self.conn, name)

    record = sqlite_write.SqliteRecorder.record_trained

    def record_marked(self: Any, *args: Any, **kwargs: Any) -> Any:
        conn, self._conn = self._conn, Marked(self._conn)
        try:
            return record(self, *args, **kwargs)
        finally:
            self._conn = conn

    sqlite_write.SqliteRecorder.record_trained = record_marked  # type: ignore[method-assign]
    wrap(sqlite_write.SqliteRecorder, "close", before="output", after="close (checkpoint)")
    console.leave_at_once = lambda: None  # the marks are printed after the command
    argv = ["train", "bench", corpus, "--vocab-size", "32000", "--db", db, "-q", "--json", "--pattern", "gpt2"]
    out = sys.stdout
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115  (the command's JSON: not the marks)
    try:
        tokreg.cli.main(argv)
    except SystemExit as e:
        if e.code:
            raise
    finally:
        sys.stdout = out


def _table(who: str, runs: list[list[list[Any]]]) -> None:
    print(f"\n{who}:\n\n| stage | wall ms | CPU ms (process) | CPU ms (command's thread) |\n|---|---|---|---|")
    for i, (label, *_) in enumerate(runs[0]):
        cells = []
        for k in (1, 2, 3):
            xs = [r[i][k] for r in runs]
            cells.append(f"{statistics.median(xs):.1f} ({min(xs):.1f})")
        print(f"| {label} | {' | '.join(cells)} |")


def run(runs: int = 5, corpora: tuple[str, ...] = ()) -> None:
    work = Path(tempfile.mkdtemp(prefix="tokreg-stages-"))
    for corpus in corpora:
        results: dict[str, list[list[list[Any]]]] = {"tokreg": [], "gigabpe": []}
        loads = []
        for r in range(runs):
            for who in results:
                db = str(work / f"{who}{r}.db")
                if who == "tokreg":
                    make = "import sys, tokreg; tokreg.Registry(sys.argv[1], create=True)"
                    subprocess.run([sys.executable, "-c", make, db], check=True)
                args = [sys.executable, "-m", "benchmarks.train_stages", "--child", who, corpus, db]
                p = subprocess.run(args, capture_output=True, text=True, check=True)
                results[who].append(json.loads(p.stdout.strip().splitlines()[-1]))
                loads.append(os.getloadavg()[0])
        print(f"\n### {Path(corpus).name}: {runs} runs each, interleaved, load {min(loads):.1f}-{max(loads):.1f}")
        for who, got in results.items():
            _table(who, got)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        _child(*sys.argv[2:5])
    elif sys.argv[1:2] and sys.argv[1].isdigit():
        run(int(sys.argv[1]), tuple(sys.argv[2:]))
    else:
        run(5, tuple(sys.argv[1:]))
