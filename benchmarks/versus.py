"""tokreg's byte-level encoder beside every peer, in one interleaved run on the same inputs:
tiktoken, fastokens, splintr-rs, tokie, bpe-openai, rs-bpe, quicktok, riptoken, kitoken and HF
tokenizers (those installed; how each loads its vocabulary: `peers.py`).

Three measures, all single-threaded, and a fourth on 2 threads:

- cold: a fresh encoder object and a fresh `str` (no UTF-8 copy cached in it), each text seen
  once by that encoder;
- warm: the same text again, with the same encoder: it measures the peers' caches more than
  their encoders;
- stream: one fresh encoder over 100 MB or more of distinct 64 KB documents, in four
  compositions (`texts.MIXES`): mixed (the kernel source plus every multilingual text,
  shuffled: about 60% code), prose, CJK and code (as much of each as the machine has): the
  steady state of tokenizing a dataset, where a cache helps only as much as pieces really recur;
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
TOKREG_BENCH_STREAM_MB (default 100), TOKREG_BENCH_STREAM_MIX (the compositions, comma-separated;
default all four), TOKREG_BENCH_REPEAT (default 3), TOKREG_BENCH_CONTENDERS (a comma-separated
subset of the contenders; tiktoken, the reference, always runs).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from typing import Any

from benchmarks.common import ROOT, table

ENV_ONE = {"RAYON_NUM_THREADS": "1", "RAYON_RS_NUM_CPUS": "1", "TOKENIZERS_PARALLELISM": "false"}
ENV_TWO = {"RAYON_NUM_THREADS": "2", "RAYON_RS_NUM_CPUS": "2", "TOKENIZERS_PARALLELISM": "true"}


def _child(mode: str, vocab: str, name: str, env: dict[str, str]) -> dict[str, Any]:
    p = subprocess.run(
        [sys.executable, "-m", "benchmarks.versus_child", mode, vocab, name],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, **env},
    )
    lines = p.stdout.strip().splitlines()
    if p.returncode != 0:
        failed = f"exit {p.returncode}" if p.returncode > 0 else f"killed by signal {-p.returncode}"
        last = json.loads(lines[-1]) if lines and lines[-1].startswith("{") else {}
        if "at" not in last:
            return {"failed": failed}
        # The process died on input `at`: keep the inputs it finished, and say which one it was.
        last["single"][last.pop("at")] = {"error": f"process died ({failed})"}
        return last  # type: ignore[no-any-return]
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def _turns(mode: str, vocab: str, names: list[str], env: dict[str, str], reps: int) -> dict[str, list[dict[str, Any]]]:
    """Every contender's turns, interleaved, the order rotating each repetition."""
    out: dict[str, list[dict[str, Any]]] = {n: [] for n in names}
    for rep in range(reps):
        for name in names[rep % len(names) :] + names[: rep % len(names)]:
            out[name].append(_child(mode, vocab, name, env))
    return out


def _best(runs: list[dict[str, Any]], key: str) -> dict[str, Any]:
    """One measure's best of several turns: {"bytes", key: best, key + "_median"}, or the error."""
    ok = [r for r in runs if key in r]
    if not ok:
        return {"error": next((r.get("error") or r.get("failed") for r in runs), "failed")}
    best = min(ok, key=lambda r: r[key])
    return {**best, key + "_median": statistics.median(r[key] for r in ok)}


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
    from benchmarks.peers import available

    vocabs = os.environ.get("TOKREG_BENCH_VOCAB", "cl100k_base").split(",")
    reps = int(os.environ.get("TOKREG_BENCH_REPEAT", "3"))
    from benchmarks.texts import MIXES

    only = [n for n in os.environ.get("TOKREG_BENCH_CONTENDERS", "").split(",") if n]
    names = [c.name for c in available() if not only or c.name in only or c.name == "tiktoken"]
    mixes = [m for m in os.environ.get("TOKREG_BENCH_STREAM_MIX", ",".join(MIXES)).split(",") if m]
    for vocab in vocabs:
        single = _turns("single", vocab, names, ENV_ONE, reps)
        streams = {
            m: _turns("stream", vocab, names, {**ENV_ONE, "TOKREG_BENCH_STREAM_MIX": m}, max(1, reps - 1))
            for m in mixes
        }
        batches = _turns("batch", vocab, names, ENV_TWO, max(1, reps - 1))
        first = {n: next((r for r in single[n] if "version" in r), {}) for n in names}
        print(
            f"\nContenders ({vocab}): "
            + ", ".join(f"{n} {first[n].get('version', '?')} ({first[n].get('source', '?')})" for n in names)
        )
        labels = list(next((r["single"] for n in names for r in single[n] if "single" in r), {}))
        results: dict[str, dict[str, dict[str, Any]]] = {}
        for label in labels:
            row = {}
            for n in names:
                runs = [r["single"][label] for r in single[n] if "single" in r and label in r["single"]]
                if not runs:  # no turn reached this input: its process failed first
                    why = next((r["failed"] for r in single[n] if "failed" in r), None)
                    runs = [{"error": f"process {why}" if why else "not reached (died on an earlier input)"}]
                cold, warm = _best(runs or [{}], "cold"), _best(runs or [{}], "warm")
                row[n] = {**cold, "warm": warm.get("warm", float("inf"))} if "cold" in cold else cold
            results[label] = row
        _speed_table(
            f"Cold, {vocab}, one thread: MB/s of CPU time (fresh process and encoder, text seen once)",
            results,
            names,
            "cold",
        )
        _speed_table(f"Warm, {vocab}, one thread: MB/s of CPU time (the same text again)", results, names, "warm")
        batch_label = next((r["label"] for n in names for r in batches[n] if "label" in r), "batch")
        stream_rows: dict[str, dict[str, dict[str, Any]]] = {}
        for m, turns in streams.items():
            label = next((r["label"] for n in names for r in turns[n] if "label" in r), m)
            stream_rows[label] = {n: _best([r.get("stream", r) for r in turns[n]], "seconds") for n in names}
        batch_row = {n: _best([r.get("batch", r) for r in batches[n]], "seconds") for n in names}
        _speed_table(f"Stream, {vocab}: MB/s of CPU time (best; median below)", stream_rows, names, "seconds")
        _speed_table(
            f"Stream, {vocab}: MB/s of CPU time, median of {max(1, reps - 1)} turns",
            stream_rows,
            names,
            "seconds_median",
        )
        _speed_table(f"Batch, {vocab}: MB/s of wall time", {batch_label: batch_row}, names, "seconds")
        _speed_table(f"Batch, {vocab}: MB/s of CPU time (both threads)", {batch_label: batch_row}, names, "cpu")
