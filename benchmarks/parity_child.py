"""One training run of `benchmarks.frontier_parity` in its own process, for a clean time and
peak-memory figure: `python -m benchmarks.parity_child SPEC DB`, SPEC a JSON object with "algo"
(`bpe` or `parity-bpe`), "vocab", "train" (code -> file), "dev" (code -> file; parity with a
parallel set only), "global_merges", "window", "window_alpha", and "eval" (code -> file: the parallel texts measured).
Prints the run's wall and CPU times, peak memory, and the tokens and bytes of each eval text."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.common import baseline_mb, report


def main() -> None:
    spec, db = json.loads(sys.argv[1]), sys.argv[2]
    subprocess.run(
        [sys.executable, "-c", "import sys, tokreg; tokreg.Registry(sys.argv[1], create=True)", db], check=True
    )
    import tokreg

    reg = tokreg.Registry(db)
    base = baseline_mb()
    train = spec["train"]
    if spec["algo"] == "bpe":
        inputs, opts = list(train.values()), tokreg.BpeOptions(vocab_size=spec["vocab"], pattern="cl100k")
    else:
        inputs = []
        opts = tokreg.ParityOptions(
            vocab_size=spec["vocab"],
            pattern="cl100k",
            lang=tuple(f"{c}={p}" for c, p in train.items()),
            parallel=tuple(f"{c}={p}" for c, p in spec.get("dev", {}).items()),
            global_merges=spec.get("global_merges", 0),
            window=spec.get("window", 0),
            window_alpha=spec.get("window_alpha", 2),
        )
    wall, cpu = time.perf_counter(), time.process_time()
    v = reg.train("bench", inputs, opts)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    run = reg.show(v.ref).training_run
    assert run is not None
    tok = reg.load(v.ref)
    tokens, nbytes = {}, {}
    for code, path in spec["eval"].items():
        text = Path(path).read_text(encoding="utf-8")
        tokens[code], nbytes[code] = len(tok.encode(text)), len(text.encode("utf-8"))
    report(
        seconds=wall,
        cpu_seconds=cpu,
        train_seconds=run["train_seconds"],
        content_hash=v.content_hash,
        tokens=tokens,
        bytes=nbytes,
        baseline_mb=base,
    )


if __name__ == "__main__":
    main()
