"""tokreg's byte-level encoder beside every peer, in one interleaved run on the same inputs:
tiktoken, fastokens, splintr-rs, tokie, bpe-openai, rs-bpe and HF tokenizers (those installed).

Three measures, all single-threaded, and a fourth on 2 threads:

- cold: a fresh encoder object and a fresh `str` (no UTF-8 copy cached in it), each text seen
  once by that encoder;
- warm: the same text again, with the same encoder: it measures the peers' caches more than
  their encoders;
- stream: one fresh encoder over 100 MB or more of distinct 64 KB documents (the kernel source
  plus every multilingual text, shuffled): the steady state of tokenizing a dataset, where a
  cache helps only as much as pieces really recur;
- batch: the first 24 MB of those documents in one batch call on 2 threads.

The ids of each contender's first timed call on every input (and on every document) are
compared with tiktoken's, outside the timed part; one that differs is reported as such, not
timed.
Runs are interleaved (contender order rotates every repetition) and the best of
`REPEAT` is kept, which on a shared machine is the least disturbed run. Single-thread
measures are CPU time of the process (`time.process_time`: what the contender ran, not the
time slices other jobs took); batches on 2 threads are wall time, which is what a batch is for. Single-thread measures
run in a child process with RAYON_NUM_THREADS=1 (so no Rust peer parallelizes one text), batches
in another with 2.

Environment: TOKREG_BENCH_VOCAB (cl100k_base, o200k_base or both, comma-separated),
TOKREG_BENCH_STREAM_MB (default 100), TOKREG_BENCH_REPEAT (default 3).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

from benchmarks.common import ROOT, table

ENV_ONE = {"RAYON_NUM_THREADS": "1", "RAYON_RS_NUM_CPUS": "1", "TOKENIZERS_PARALLELISM": "false"}
ENV_TWO = {"RAYON_NUM_THREADS": "2", "RAYON_RS_NUM_CPUS": "2", "TOKENIZERS_PARALLELISM": "true"}


def _child(mode: str, vocab: str, env: dict[str, str]) -> dict[str, Any]:
    p = subprocess.run(
        [sys.executable, "-m", "benchmarks.versus_child", mode, vocab],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, **env},
    )
    if p.returncode != 0:
        raise RuntimeError(f"benchmarks.versus_child {mode} {vocab} failed (exit {p.returncode})")
    result: dict[str, Any] = json.loads(p.stdout.strip().splitlines()[-1])
    return result


def _cell(r: dict[str, Any], key: str) -> str:
    if "error" in r:
        return r["error"]
    return f"{r['bytes'] / r[key] / 1e6:.1f}"


def _ratio(row: dict[str, dict[str, Any]], key: str) -> str:
    ours = row.get("tokreg", {})
    if key not in ours:
        return "-"
    peers = [(r["bytes"] / r[key], name) for name, r in row.items() if name != "tokreg" and key in r]
    if not peers:
        return "-"
    best, name = max(peers)
    return f"{ours['bytes'] / ours[key] / best:.2f}x ({name})"


def _speed_table(title: str, results: dict[str, dict[str, dict[str, Any]]], names: list[str], key: str) -> None:
    rows = []
    for label, row in results.items():
        rows.append([label] + [_cell(row[n], key) if n in row else "-" for n in names] + [_ratio(row, key)])
    table(title, ["input"] + names + ["tokreg / fastest peer"], rows)


def run() -> None:
    vocabs = os.environ.get("TOKREG_BENCH_VOCAB", "cl100k_base").split(",")
    for vocab in vocabs:
        one = _child("single", vocab, ENV_ONE)
        two = _child("batch", vocab, ENV_TWO)
        names = list(one["versions"])
        print(
            f"\nContenders ({vocab}): "
            + ", ".join(f"{n} {v} ({one['sources'][n]})" for n, v in one["versions"].items())
        )
        _speed_table(
            f"Cold, {vocab}, one thread: MB/s of CPU time (fresh encoder, text seen once)", one["single"], names, "cold"
        )
        _speed_table(f"Warm, {vocab}, one thread: MB/s of CPU time (the same text again)", one["single"], names, "warm")
        rows = {one["stream_label"]: one["stream"], two["batch_label"]: two["batch"]}
        _speed_table(f"Stream (CPU time) and batch (wall time), {vocab}: MB/s", rows, names, "seconds")
