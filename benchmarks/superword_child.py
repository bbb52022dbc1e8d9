"""One training run of `benchmarks.frontier_superword` in its own process, for a clean time and
peak-memory figure: `python -m benchmarks.superword_child ALGO CORPUS VOCAB T K HELD_OUT DB`,
ALGO `bpe` (plain byte-level, cl100k) or `superbpe` (T: transition point, 0 for the default;
K: max words). Prints the run's times (wall, CPU of every thread of the process, and CPU of the
calling thread, which runs the serial parts: the merge loops and Python), peak memory and the
tokens of the held-out text."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from benchmarks.common import baseline_mb, report


def main() -> None:
    algo, corpus, vocab, t, k, held_out, db = sys.argv[1:8]
    subprocess.run(
        [sys.executable, "-c", "import sys, tokreg; tokreg.Registry(sys.argv[1], create=True)", db], check=True
    )
    import tokreg

    reg = tokreg.Registry(db)
    base = baseline_mb()
    opts = (
        tokreg.BpeOptions(vocab_size=int(vocab), pattern="cl100k")
        if algo == "bpe"
        else tokreg.SuperwordOptions(vocab_size=int(vocab), pattern="cl100k", transition=int(t), max_words=int(k))
    )
    start, cpu, own = time.perf_counter(), time.process_time(), time.thread_time()
    v = reg.train("bench", [corpus], opts)
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu
    serial_cpu_seconds = time.thread_time() - own  # the calling thread: the merge loops, Python
    run = reg.show(v.ref).training_run
    assert run is not None
    text = Path(held_out).read_text(encoding="utf-8")
    tok = reg.load(v.ref)
    start = time.perf_counter()
    ids = tok.encode(text)
    encode_seconds = time.perf_counter() - start
    assert tok.decode(ids) == text
    report(
        seconds=seconds,
        cpu_seconds=cpu_seconds,
        serial_cpu_seconds=serial_cpu_seconds,
        train_only=run["count_seconds"] + run["train_seconds"],
        vocab=v.vocab_size,
        transition=v.config.get("transition"),
        tokens=len(ids),
        held_out_bytes=len(text.encode("utf-8")),
        encode_seconds=encode_seconds,
        baseline_mb=base,
    )


if __name__ == "__main__":
    main()
