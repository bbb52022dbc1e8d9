"""Recording a version in the registry: a 200k-token byte-level vocabulary (o200k_base,
imported: 199,998 tokens and 199,742 merges) and a 32k one, `Registry.add` timed in a fresh
process (compiling, encoding the samples, hashing and writing the rows in one transaction),
wall and CPU seconds, best of 3; and the process start-up of `tokreg --version`."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time

from benchmarks.common import DATA, need_data, table

CHILD = """
import json, sys, time, tokreg
reg = tokreg.Registry(sys.argv[1])
data = tokreg.transfer.read_tiktoken(sys.argv[2], pattern=sys.argv[3])
if int(sys.argv[4]) < len(data.tokens):
    keep = int(sys.argv[4])
    data.tokens = data.tokens[:keep]
    data.merges = [m for m in data.merges if m.result < keep]
t, c = time.perf_counter(), time.process_time()
reg.add("bench", data)
print(json.dumps({"seconds": time.perf_counter() - t, "cpu": time.process_time() - c, "tokens": len(data.tokens)}))
"""


def run() -> None:
    need_data()
    rows = []
    for name, size in (("o200k_base", 200_000), ("cl100k_base", 32_000)):
        best: dict[str, float] = {}
        for _ in range(3):
            db = tempfile.mktemp(suffix=".db")
            subprocess.run([sys.executable, "-c", "import sys, tokreg; tokreg.Registry(sys.argv[1])", db], check=True)
            p = subprocess.run(
                [sys.executable, "-c", CHILD, db, str(DATA / f"{name}.tiktoken"), name[:-5], str(size)],
                capture_output=True,
                text=True,
                check=True,
            )
            import json

            r = json.loads(p.stdout.strip().splitlines()[-1])
            for k in ("seconds", "cpu"):
                best[k] = min(best.get(k, 1e9), r[k])
            best["tokens"] = r["tokens"]
        rows.append([f"{name} ({int(best['tokens']):,} tokens)", f"{best['seconds']:.2f}", f"{best['cpu']:.2f}"])
    table("Recording a version (Registry.add), best of 3", ["version", "wall s", "CPU s"], rows)
    starts = []
    for _ in range(5):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "tokreg", "--version"], check=True, capture_output=True)
        starts.append(time.perf_counter() - t)
    print(f"\nProcess start-up, `python -m tokreg --version`: best {min(starts):.2f} s of 5.")
