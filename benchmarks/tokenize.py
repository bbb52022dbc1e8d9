"""`just bench tokenize`: a corpus into training token files, tokreg beside the ways the field does
it today, in one run on the same JSON Lines corpus and the same tokenizer (cl100k_base), with
<|endoftext|> after every document, the ids of every contender checked equal to tokreg's first:

- tokreg: `tokreg.datasets.tokenize` (the `tokreg tokenize` pipeline), flat `.bin` layout;
- encode_batch: tokreg's `encode_batch_flat` alone on the documents already in memory (the
  ceiling the pipeline is measured against: reading, parsing and writing cost it nothing);
- nanoGPT: tiktoken `encode_ordinary_batch` in a multiprocessing pool, ids into one memmap;
- datasets.map: Hugging Face `datasets` with a fast `tokenizers` tokenizer, num_proc workers;
- datatrove: `JsonlReader` -> `DocumentTokenizer` (no shuffling).
Megatron-LM's preprocess_data.py needs torch and Megatron-Core, which this machine does not
have: it is left out and said so.

Each run is a fresh process; peak memory is its own (VmHWM) plus its largest worker's. Wall time,
best of TOKREG_BENCH_REPEAT (default 2) interleaved runs, on THREADS (2) threads/processes.

The corpus (TOKREG_BENCH_TOKENIZE_MB, default 100) is the shared texts cut into documents of 20
lines, repeated with a shifting cut until it is big enough: repeated text makes any per-word
cache look better than it would on a real web corpus (the same for every contender here).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.common import DATA, ROOT, need_data, table

THREADS = 2
CONTENDERS = ("tokreg", "encode_batch", "nanogpt", "datasets", "datatrove")


def corpus(mb: int) -> tuple[Path, int]:
    path = Path(tempfile.gettempdir()) / f"tokreg-bench-{os.getuid()}-tokenize-{mb}.jsonl"
    lines: list[str] = []
    for name in ("kjv.txt", "dr.en.txt", "dr.zh-cn.txt"):
        lines += (DATA / name).read_text(encoding="utf-8").split("\n")
    text = 0
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        rep = 0
        while text < mb * 1_000_000:
            shift = rep % 20
            for i in range(shift, len(lines), 20):
                doc = "\n".join(lines[i : i + 20])
                if doc.strip():
                    fh.write(json.dumps({"text": doc}, ensure_ascii=False) + "\n")
                    text += len(doc.encode())
            rep += 1
    tmp.replace(path)
    return path, text


def _run(name: str, path: Path, work: Path) -> dict[str, Any]:
    out = work / name
    shutil.rmtree(out, ignore_errors=True)
    env = {**os.environ, "RAYON_NUM_THREADS": str(THREADS), "TOKENIZERS_PARALLELISM": "true"}
    p = subprocess.run(
        [sys.executable, "-m", "benchmarks.tokenize_child", name, str(path), str(out), str(THREADS)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=ROOT,
        env=env,
    )
    shutil.rmtree(out, ignore_errors=True)
    if p.returncode != 0:
        return {"error": f"failed (exit {p.returncode})"}
    result: dict[str, Any] = json.loads(p.stdout.strip().splitlines()[-1])
    return result


def run() -> None:
    need_data()
    mb = int(os.environ.get("TOKREG_BENCH_TOKENIZE_MB", "100"))
    repeat = int(os.environ.get("TOKREG_BENCH_REPEAT", "2"))
    path, text = corpus(mb)
    work = Path(tempfile.mkdtemp(prefix="tokreg-bench-tokenize-"))
    best: dict[str, dict[str, Any]] = {}
    try:
        for r in range(repeat):
            order = CONTENDERS[r % len(CONTENDERS) :] + CONTENDERS[: r % len(CONTENDERS)]
            for name in order:
                got = _run(name, path, work)
                if "error" in got or got["seconds"] < best.get(name, {}).get("seconds", float("inf")):
                    best[name] = got
    finally:
        shutil.rmtree(work, ignore_errors=True)
    ref = best["tokreg"]
    rows = []
    for name in CONTENDERS:
        r = best[name]
        if "error" in r:
            rows.append((name, r["error"], "", "", "", ""))
            continue
        same = "yes" if r["digest"] == ref["digest"] and r["tokens"] == ref["tokens"] else "NO (not timed)"
        peak = r["peak_rss_mb"] + r.get("children_peak_mb", 0.0)
        rows.append(
            (
                name,
                f"{text / r['seconds'] / 1e6:.1f}" if same == "yes" else "",
                f"{r['tokens'] / r['seconds'] / 1e6:.2f}" if same == "yes" else "",
                f"{peak:.0f}",
                same,
                f"{r['seconds'] / ref['seconds']:.2f}x" if same == "yes" else "",
            )
        )
    rows.append(("Megatron-LM preprocess_data.py", "not installed (needs torch)", "", "", "", ""))
    table(
        f"tokenize: {text / 1e6:.0f} MB of JSON Lines text, cl100k_base, {THREADS} threads, {ref['tokens']:,} ids",
        ("contender", "MB/s", "M tokens/s", "peak RSS MB", "ids == tokreg", "wall time vs tokreg"),
        rows,
    )
    ceiling = best["encode_batch"]
    if "error" not in ceiling:
        print(
            f"\ntokreg tokenize reaches {100 * ceiling['seconds'] / ref['seconds']:.0f}% of encode_batch's throughput"
        )
