"""What every benchmark shares: where the data is, a timer, peak memory of a child process,
the machine's load while a table was measured, and the table printer (which prints that load
under every table, with the wall and CPU time the table took, so a reader can judge a noisy
machine)."""

from __future__ import annotations

import json
import os
import platform
import resource
import subprocess
import sys
import sysconfig
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("TOKREG_TEST_DATA", ROOT.parent / "shared" / "data"))

CL100K_SPECIALS = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}
O200K_SPECIALS = {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}


def need_data() -> None:
    if not (DATA / "kjv.txt").exists():
        sys.exit(f"benchmark data not found in {DATA}; set TOKREG_TEST_DATA to the shared data folder")


def text_lines(path: Path, limit: int = 0) -> list[str]:
    """The lines of a text file (its first `limit` characters when given); none when it is not
    on this machine."""
    if not path.exists():
        return []
    with open(path, encoding="utf-8", errors="replace") as fh:
        return (fh.read(limit) if limit else fh.read()).splitlines()


def held_out_split(texts: list[list[str]], folder: str, name: str) -> tuple[str, list[str]]:
    """Writes the first 80% of each text's lines to `folder/name.txt` (the training text) and
    returns its path with the other 20% of every text (its non-blank lines: the held-out text)."""
    train: list[str] = []
    held: list[str] = []
    for lines in texts:
        cut = len(lines) * 8 // 10
        train += lines[:cut]
        held += [x for x in lines[cut:] if x.strip()]
    path = os.path.join(folder, f"{name}.txt")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(train) + "\n")
    return path, held


def stdlib_source(limit: int = 4_000_000) -> str:
    """The Python standard library's own source: a code corpus present on every machine."""
    out, size = [], 0
    for p in sorted(Path(sysconfig.get_path("stdlib")).glob("*.py")):
        t = p.read_text(encoding="utf-8", errors="replace")
        out.append(t)
        size += len(t.encode())
        if size >= limit:
            break
    return "".join(out)


def inputs() -> dict[str, str]:
    need_data()
    return {
        "kjv.txt (English)": (DATA / "kjv.txt").read_text(encoding="utf-8"),
        "dr.en.txt (English, technical)": (DATA / "dr.en.txt").read_text(encoding="utf-8"),
        "dr.zh-cn.txt (Chinese)": (DATA / "dr.zh-cn.txt").read_text(encoding="utf-8"),
        "stdlib *.py (code)": stdlib_source(),
    }


def best_of(fn: Callable[[], Any], repeat: int = 3, clock: Callable[[], float] = time.perf_counter) -> float:
    """The fastest of `repeat` runs, in seconds (the least disturbed by the machine); `clock`
    may be `time.process_time` for single-threaded work on a shared machine."""
    best = float("inf")
    for _ in range(repeat):
        t = clock()
        fn()
        best = min(best, clock() - t)
    return best


def child(module: str, *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Runs `python -m module args...` in a fresh process (with `env` added to its environment),
    which prints one JSON line ending with its own peak RSS (see `report`); returns that JSON. A
    fresh process per run keeps one library's memory out of another's figure."""
    p = subprocess.run(
        [sys.executable, "-m", module, *args],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
    )
    if p.returncode != 0:
        raise RuntimeError(f"{module} {' '.join(args)} failed (exit {p.returncode})")
    result: dict[str, Any] = json.loads(p.stdout.strip().splitlines()[-1])
    return result


def peak_mb() -> float:
    """This process's peak resident memory, in MB. VmHWM belongs to the address space made at
    exec, so it is this program's own peak; ru_maxrss would not do here: Linux carries it over
    exec, so a child would report the benchmark parent's size as its own."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def baseline_mb() -> float:
    """Peak memory so far: taken after a library is imported and before it works, so that the
    final peak minus this is the memory the work itself needed."""
    return peak_mb()


def report(**values: Any) -> None:
    """Prints a child's result as one JSON line, with this process's peak memory in MB."""
    values["peak_rss_mb"] = peak_mb()
    print(json.dumps(values))


class _Load:
    """The 1-minute load average, sampled every second by a daemon thread from the first call
    to `take` on; each table reports the range seen since the one before, with the wall time
    and the CPU time (this process and the children it waited for) spent since then."""

    def __init__(self) -> None:
        self.seen: list[float] = []
        self.tables = 0  # printed so far: the first has no table above it to share a run with
        self.lock = threading.Lock()
        self.thread: threading.Thread | None = None
        self.clocks = self._clocks()

    @staticmethod
    def _clocks() -> tuple[float, float]:
        """(wall, CPU of this process and its waited-for children) seconds."""
        t = os.times()
        return time.perf_counter(), t.user + t.system + t.children_user + t.children_system

    def spent(self) -> tuple[float, float]:
        """The wall and CPU seconds since the last call (or the first `start`)."""
        wall0, cpu0 = self.clocks
        self.clocks = self._clocks()
        return self.clocks[0] - wall0, self.clocks[1] - cpu0

    def _run(self) -> None:
        while True:
            with self.lock:
                self.seen.append(os.getloadavg()[0])
            time.sleep(1.0)

    def start(self) -> None:
        if self.thread is None:
            self.clocks = self._clocks()
            self.thread = threading.Thread(target=self._run, daemon=True)
            self.thread.start()

    def take(self) -> str:
        """The range since the last call (and starts sampling on the first)."""
        self.start()
        with self.lock:
            seen = self.seen + [os.getloadavg()[0]]
            self.seen = []
        return f"{min(seen):.1f}-{max(seen):.1f}" if max(seen) - min(seen) >= 0.05 else f"{seen[0]:.1f}"


LOAD = _Load()


def start_load_watch() -> None:
    """Starts sampling the load average (the first table's range starts here)."""
    LOAD.start()


def table(title: str, headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    cells = [[str(c) for c in r] for r in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    print(f"\n### {title}\n")
    print("| " + " | ".join(h.ljust(w) for h, w in zip(headers, widths)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in cells:
        print("| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |")
    load = LOAD.take()
    wall, cpu = LOAD.spent()
    LOAD.tables += 1
    if wall < 0.5 and LOAD.tables > 1:
        # Printed right after the one above: measured in the same runs, nothing of its own to time.
        print("\nMeasured in the same runs as the table above (its load average and times cover this one).")
    else:
        print(
            f"\nLoad average (1 min) while measured: {load} on {os.cpu_count()} cores; "
            f"the table took {wall:.1f} s wall, {cpu:.1f} s CPU (this process and its children: CPU above wall "
            "means several cores, CPU well below wall times the cores used means waiting for a busy machine)."
        )
    sys.stdout.flush()


def machine() -> str:
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next((ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name")), cpu)
    except OSError:
        pass
    import importlib.metadata as md

    def v(pkg: str) -> str:
        try:
            return md.version(pkg)
        except md.PackageNotFoundError:
            return "absent"

    return (
        f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, tokreg {v('tokreg')}, "
        f"tiktoken {v('tiktoken')}, tokenizers {v('tokenizers')}, sentencepiece {v('sentencepiece')}"
    )


def mbps(nbytes: int, seconds: float) -> str:
    return f"{nbytes / seconds / 1e6:.1f}"
