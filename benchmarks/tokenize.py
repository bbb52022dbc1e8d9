"""`just bench tokenize`: a corpus into training token files, tokreg beside the ways the field does
it today, in one run on the same JSON Lines corpus and the same tokenizer (cl100k_base), with
<|endoftext|> after every document, the ids of every contender checked equal to tokreg's first:

- tokreg: `tokreg.datasets.tokenize` (the `tokreg tokenize` pipeline), flat `.bin` layout;
- encode_batch: tokreg's `encode_batch_flat` alone on the documents already in memory (the
  ceiling the pipeline is measured against: reading, parsing and writing cost it nothing);
- nanoGPT: tiktoken `encode_ordinary_batch` in a multiprocessing pool, ids into one memmap;
- datasets.map: Hugging Face `datasets` with a fast `tokenizers` tokenizer, num_proc workers;
- datatrove: `JsonlReader` -> `DocumentTokenizer` (no shuffling);
- megatron: Megatron-LM's own `tools/preprocess_data.py` (`--tokenizer-type HuggingFaceTokenizer`
  on tokreg's HF export of cl100k_base, `--append-eod`, `--workers THREADS`), run by another
  Python that has torch and megatron-core (they need Python 3.10+, megatron-core 0.17 and
  later 3.12+; torch from PyPI brings its CUDA libraries, some 5 GB, and runs without a GPU):
  TOKREG_BENCH_MEGATRON_PYTHON names that interpreter and TOKREG_BENCH_MEGATRON_LM a Megatron-LM
  source tree of the same release (its tools/ and megatron/{training,legacy,rl,post_training}).
  Without them it is left out, saying why.

With TOKREG_BENCH_MEGATRON_PYTHON, tokreg's own Megatron layout (`--format megatron`) is also
read back by Megatron-Core's `IndexedDataset` (benchmarks/tokenize_megatron_read.py), every
document's ids checked against tokreg's flat output (untimed).

Each run is a fresh process; peak memory is its own (VmHWM) plus its largest worker's. Wall time,
best of TOKREG_BENCH_REPEAT (default 2) interleaved runs, on THREADS (2) threads/processes.

The corpus (TOKREG_BENCH_TOKENIZE_MB, default 100, of document text) is a text cut into
documents of 20 lines, written as JSON Lines: the text file TOKREG_BENCH_TOKENIZE_TEXT (e.g. the
kernel.txt of ../shared/tools/big-corpus.sh, real text, 1 GB and more), else the shared texts,
read again with a shifting cut while they are shorter than asked: repeated text makes any
per-word cache look better than it would on a real web corpus (the same for every contender).
TOKREG_BENCH_TOKENIZE_ONLY (comma-separated names) runs some contenders only.

TOKREG_BENCH_TOKENIZE_KIND=text measures plain text instead: the same text as a .txt file of
TOKREG_BENCH_TOKENIZE_MB, a document per non-empty line (tokreg's `--document auto` for text),
for tokreg, encode_batch and nanoGPT (the others read JSON Lines here).

The table gives wall time and CPU time (the process's and its workers', user + system): on a
machine shared with other work, wall time is noisy and the CPU-time ratio the fairer one.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchmarks.common import DATA, ROOT, need_data, table

THREADS = 2
CONTENDERS = ("tokreg", "encode_batch", "nanogpt", "datasets", "datatrove", "megatron")
DOC_LINES = 20


def _source_lines(sources: list[Path], shift: int) -> Iterator[str]:
    """The lines of the sources in turn, the first `shift` of them left out (streamed)."""
    n = 0
    for src in sources:
        with open(src, encoding="utf-8", errors="replace", newline="\n") as fh:
            for line in fh:
                n += 1
                if n > shift:
                    yield line.rstrip("\n")


def text_corpus(mb: int) -> tuple[Path, int, str]:
    """(a plain-text file of about `mb` MB, a document per non-empty line, bytes of document
    text in it, what it was made from): the JSON Lines corpus's documents, their lines."""
    jsonl, _, label = corpus(mb)
    path = jsonl.with_suffix(".txt")
    if not path.exists():
        tmp = path.with_suffix(".tmp")
        with open(jsonl, encoding="utf-8") as src, open(tmp, "w", encoding="utf-8", newline="\n") as fh:
            for line in src:
                fh.write(json.loads(line)["text"] + "\n")
        tmp.replace(path)
    text = sum(len(x) for x in path.read_bytes().split(b"\n"))
    return path, text, label


def corpus(mb: int) -> tuple[Path, int, str]:
    """(the JSON Lines file, bytes of document text in it, what it was made from)."""
    given = os.environ.get("TOKREG_BENCH_TOKENIZE_TEXT")
    sources = [Path(given)] if given else [DATA / n for n in ("kjv.txt", "dr.en.txt", "dr.zh-cn.txt")]
    label = f"{sources[0].name} ({sources[0].stat().st_size / 1e6:.0f} MB)" if given else "the shared texts"
    tag = f"{mb}-{sources[0].stat().st_size}-{sources[0].name}" if given else str(mb)
    path = Path(tempfile.gettempdir()) / f"tokreg-bench-{os.getuid()}-tokenize-{tag}.jsonl"
    size_file = path.with_suffix(".size")
    if path.exists() and size_file.exists():
        return path, int(size_file.read_text()), label
    text = 0
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        rep = 0
        while text < mb * 1_000_000:
            doc: list[str] = []
            for line in _source_lines(sources, rep % DOC_LINES):
                doc.append(line)
                if len(doc) == DOC_LINES:
                    body = "\n".join(doc)
                    doc = []
                    if body.strip():
                        fh.write(json.dumps({"text": body}, ensure_ascii=False) + "\n")
                        text += len(body.encode())
                        if text >= mb * 1_000_000:
                            break
            rep += 1
    tmp.replace(path)
    size_file.write_text(str(text))
    return path, text, label


def bench_registry() -> str:
    """A registry of this benchmark's own holding cl100k_base (imported once): tokreg's
    contenders load it by its ref, as `tokreg tokenize` does, not by importing the rank file."""
    import tokreg
    from benchmarks.vocabs import VOCABS

    path = Path(tempfile.gettempdir()) / f"tokreg-bench-{os.getuid()}-tokenize.db"
    with tokreg.Registry(path, create=True) as reg:
        if not any(v.name == "cl100k_base" for v in reg.versions()):
            pattern, specials = VOCABS["cl100k_base"]
            reg.import_tiktoken("cl100k_base", DATA / "cl100k_base.tiktoken", pattern=pattern, specials=specials)
    os.environ["TOKREG_BENCH_TOKENIZE_DB"] = str(path)
    return str(path)


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


def _megatron_reads_tokreg(path: Path, work: Path, ref: dict[str, Any]) -> str:
    """tokreg's Megatron layout read by Megatron-Core's own IndexedDataset, every document's ids
    compared (through the stream's hash, the document count and each document's final id)."""
    python = os.environ.get("TOKREG_BENCH_MEGATRON_PYTHON")
    if not python:
        return "Megatron-Core's reader: not run (set TOKREG_BENCH_MEGATRON_PYTHON to a Python with megatron-core)"
    if "error" in ref:
        return "Megatron-Core's reader: not run (tokreg's run failed)"
    out = work / "megatron-layout"
    shutil.rmtree(out, ignore_errors=True)
    made = subprocess.run(
        [sys.executable, "-m", "benchmarks.tokenize_child", "tokreg-megatron", str(path), str(out), str(THREADS)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    if made.returncode != 0:
        return f"Megatron-Core's reader: tokreg --format megatron failed (exit {made.returncode})"
    p = subprocess.run(
        [python, "-P", "-W", "ignore", str(ROOT / "benchmarks" / "tokenize_megatron_read.py"), str(out)],
        capture_output=True,
        text=True,
    )
    shutil.rmtree(out, ignore_errors=True)
    if p.returncode != 0:
        return f"Megatron-Core's reader FAILED on tokreg's output: {p.stderr.strip().splitlines()[-1:]}"
    got = json.loads(p.stdout.strip().splitlines()[-1])
    written = json.loads(made.stdout.strip().splitlines()[-1])
    same = (
        got["digest"] == ref["digest"] == written["digest"]
        and got["tokens"] == ref["tokens"]
        and got["documents"] == written["documents"]
        and got["eod_at_ends"]
    )
    return (
        f"Megatron-Core {got['version']} IndexedDataset read tokreg's megatron layout: {got['documents']:,} "
        f"documents, {got['tokens']:,} ids, {'every document equal to tokreg' if same else 'NOT EQUAL'}"
    )


def run() -> None:
    need_data()
    mb = int(os.environ.get("TOKREG_BENCH_TOKENIZE_MB", "100"))
    repeat = int(os.environ.get("TOKREG_BENCH_REPEAT", "2"))
    only = [n for n in os.environ.get("TOKREG_BENCH_TOKENIZE_ONLY", "").split(",") if n]
    kind = os.environ.get("TOKREG_BENCH_TOKENIZE_KIND", "jsonl")
    names = tuple(n for n in CONTENDERS if not only or n in only or n == "tokreg")
    if kind == "text":
        names = tuple(n for n in names if n in ("tokreg", "encode_batch", "nanogpt"))
    path, text, label = text_corpus(mb) if kind == "text" else corpus(mb)
    bench_registry()
    work = Path(tempfile.mkdtemp(prefix="tokreg-bench-tokenize-"))
    best: dict[str, dict[str, Any]] = {}
    try:
        for r in range(repeat):
            order = names[r % len(names) :] + names[: r % len(names)]
            for name in order:
                got = _run(name, path, work)
                print(f"  {name}: {got}", file=sys.stderr)
                cpu = min(got.get("cpu_seconds", 0.0), best.get(name, {}).get("cpu_seconds", float("inf")))
                if "error" in got or got["seconds"] < best.get(name, {}).get("seconds", float("inf")):
                    best[name] = got
                if "error" not in got:
                    best[name]["cpu_seconds"] = cpu  # the least CPU time of its runs
        megatron_read = _megatron_reads_tokreg(path, work, best["tokreg"])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    ref = best["tokreg"]
    if "error" in ref:
        sys.exit(f"tokreg's own run {ref['error']}")
    rows = []
    for name in names:
        r = best[name]
        if "error" in r:
            rows.append((name, r["error"], "", "", "", "", "", ""))
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
                f"{r['cpu_seconds']:.2f}",
                f"{r['cpu_seconds'] / ref['cpu_seconds']:.2f}x" if same == "yes" else "",
            )
        )
    table(
        f"tokenize: {text / 1e6:.0f} MB of document text from {label}, "
        f"{'plain text, a document per line' if kind == 'text' else 'JSON Lines'}, cl100k_base, {THREADS} threads, "
        f"{ref['tokens']:,} ids; load average {os.getloadavg()[0]:.1f} at the end",
        ("contender", "MB/s", "M tokens/s", "peak RSS MB", "ids == tokreg", "wall time vs tokreg", "CPU s",
         "CPU time vs tokreg"),
        rows,
    )  # fmt: skip
    ceiling = best.get("encode_batch", {"error": "not run"})
    if "error" not in ceiling:
        print(
            f"\ntokreg tokenize reaches {100 * ceiling['seconds'] / ref['seconds']:.0f}% of encode_batch's throughput "
            f"in wall time, {100 * ceiling['cpu_seconds'] / ref['cpu_seconds']:.0f}% in CPU time"
        )
    peers = [best[n] for n in names if n not in ("tokreg", "encode_batch") and "error" not in best[n]]
    if peers:
        fastest = min(peers, key=lambda r: r["seconds"])
        peak = ref["peak_rss_mb"] + ref.get("children_peak_mb", 0.0)
        fpeak = fastest["peak_rss_mb"] + fastest.get("children_peak_mb", 0.0)
        print(
            f"tokreg vs the fastest peer: {fastest['seconds'] / ref['seconds']:.1f}x less wall time, "
            f"peak memory {peak:.0f} MB vs {fpeak:.0f} MB"
        )
    print(megatron_read)
