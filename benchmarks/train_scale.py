"""Training at corpus scale: whole processes, tokreg's `tokreg train` (recording in the
registry included) beside the other trainers, interleaved, the best and the median of several
runs (one run on the largest corpora), every run in a fresh process with the same vocabulary
size. Each run reports (`scale_child.py`) its wall time from process start, its CPU time
(every thread) and its peak resident memory when training returns, then, not timed, what its
output is: how many of the 256 byte tokens it holds and its tokens per byte on the start of the
corpus, which the table gives beside tokreg's (a trainer that is not doing the same job shows
there).

Corpora: the multilingual mix (the lines of ../langcorp/de.txt, ja.txt and the shared kjv.txt,
dr.en.txt, dr.zh-cn.txt taken in turn; its first 1, 6 and 20 MB), the Python standard library's
source (6 MB), and from `../corpus` (made by `../shared/tools/big-corpus.sh`;
TOKREG_BIG_CORPUS overrides): the kernel documentation in six languages (kernel-docs/*.txt,
concatenated), the first 1, 20 and 100 MB and the whole 1 GB of kernel.txt, 1 GB of kernel text with
randomly varied words (benchmarks/varied.py).

BPE is byte-level on GPT-2's split for every trainer (the options each gets are listed in
`scale_child.py`); SentencePiece splits its own way and falls back to bytes. A run that fails,
passes TIMEOUT seconds or needs more than MEMORY_CAP is reported as such: that is a result.
"""

from __future__ import annotations

import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Optional

from benchmarks.common import DATA, ROOT, stdlib_source, table

BIG = Path(os.environ.get("TOKREG_BIG_CORPUS", ROOT.parent / "corpus"))
LANG = Path(os.environ.get("TOKREG_LANG_CORPUS", ROOT.parent / "langcorp"))
TIMEOUT = int(os.environ.get("TOKREG_BENCH_TIMEOUT", "1800"))
MEMORY_CAP = os.environ.get("TOKREG_BENCH_MEMORY_CAP", "20G")
BPE_PEERS = ["gigabpe", "fast-bpe-rs", "rustbpe", "bpeasy", "sentencepiece", "hf"]
#: TOKREG_SCALE_PEERS=gigabpe,rustbpe,fast-bpe-rs: the peers of every table, instead of each table's own.
PEERS = [p for p in os.environ.get("TOKREG_SCALE_PEERS", "").split(",") if p]
#: TOKREG_SCALE_BASE=DIR: also time "tokreg-base", run in DIR (a checkout of another commit: its
#: tokreg with its built core, and its benchmarks), interleaved with this one: a branch against its parent.
BASE = os.environ.get("TOKREG_SCALE_BASE")


def _cap_bytes() -> int:
    units = {"G": 1 << 30, "M": 1 << 20}
    return int(float(MEMORY_CAP[:-1]) * units[MEMORY_CAP[-1]])


#: `python -c _BASE_MIGRATIONS TREE MODULE ARGS...` (or `TREE -c CODE ARGS...`): runs MODULE (CODE)
#: with `tokreg.migrations` taken from TREE/migrations. An editable install maps that package to
#: its own checkout whatever tokreg is first on the path, so BASE's tokreg would otherwise create
#: and check registries with this checkout's migrations (and refuse a revision it does not know).
_BASE_MIGRATIONS = """
import runpy, sys
from importlib.machinery import PathFinder
tree = sys.argv.pop(1)
class Migrations:
    @staticmethod
    def find_spec(name, path=None, target=None):
        return PathFinder.find_spec(name, [tree]) if name == "tokreg.migrations" else None
sys.meta_path.insert(0, Migrations)
if sys.argv[1] == "-c":
    del sys.argv[1]
    code = sys.argv.pop(1)
    exec(compile(code, "<base>", "exec"), {"__name__": "__main__"})
else:
    runpy.run_module(sys.argv.pop(1), run_name="__main__", alter_sys=True)
"""


def run_one(who: str, algo: str, corpus: Path, vocab: int, out: str) -> dict[str, Any]:
    """One fresh process: {"seconds", "cpu", "peak_mb", "vocab", ...} (see scale_child) or {"failed"}."""
    env, cwd, boot = None, ROOT, []
    if who == "tokreg-base":  # BASE's package and child: `-m` puts the working folder first on the path
        env, cwd, boot = {**os.environ, "PYTHONPATH": str(BASE)}, Path(str(BASE)), ["-c", _BASE_MIGRATIONS, str(BASE)]
    if who.startswith("tokreg"):  # a registry that exists: creating one runs the migrations, a one-time cost
        make = "import sys, tokreg; tokreg.Registry(sys.argv[1], create=True)"
        subprocess.run([sys.executable, *boot, "-c", make, out + ".db"], check=True, env=env, cwd=cwd)
    child = "tokreg" if who == "tokreg-base" else who
    args = [child, algo, str(corpus), str(vocab), "gpt2", out]
    cmd = [sys.executable, *(boot or ["-m"]), "benchmarks.scale_child", *args]

    def limit() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (_cap_bytes(), _cap_bytes()))

    try:
        p = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, timeout=TIMEOUT, preexec_fn=limit, env=env)
    except subprocess.TimeoutExpired:
        return {"failed": f"> {TIMEOUT} s"}
    if p.returncode != 0:
        why = "out of memory" if "memory" in p.stderr.lower() or "alloc" in p.stderr.lower() else f"exit {p.returncode}"
        return {"failed": f"{why} (cap {MEMORY_CAP})"}
    result: dict[str, Any] = json.loads(p.stdout.strip().splitlines()[-1])
    return result


def compare(title: str, algo: str, corpus: Path, vocab: int, who: list[str], runs: int) -> list[dict[str, Any]]:
    out = tempfile.mkdtemp(prefix="tokreg-scale-")
    results: dict[str, list[dict[str, Any]]] = {w: [] for w in who}
    for r in range(runs):
        for w in who:  # interleaved: a slow moment of the machine falls on every contender
            if results[w] and "failed" in results[w][-1]:
                continue
            results[w].append(run_one(w, algo, corpus, vocab, f"{out}/{w}{r}"))
    rows = []
    summary = []
    tk = [x for x in results.get("tokreg", []) if "failed" not in x]
    tk_best = min(x["seconds"] for x in tk) if tk else None
    tk_cpu = min(x["cpu"] for x in tk) if tk else None
    tk_tpb = tk[0].get("tokens_per_byte") if tk else None
    for w in who:
        ok = [x for x in results[w] if "failed" not in x]
        if not ok:
            rows.append([w, results[w][-1]["failed"]] + [""] * 9)
            continue
        best = min(x["seconds"] for x in ok)
        med = statistics.median(x["seconds"] for x in ok)
        cpu = min(x["cpu"] for x in ok)
        peak = max(x["peak_mb"] for x in ok)
        tpb = ok[0].get("tokens_per_byte")
        kind = f"{ok[0]['byte_tokens']}" if "byte_tokens" in ok[0] else ""
        vs_tpb = f"{tpb / tk_tpb:.3f}" if tpb and tk_tpb else ""
        ratio = f"{best / tk_best:.2f}x" if tk_best else ""
        cpu_ratio = f"{cpu / tk_cpu:.2f}x" if tk_cpu else ""
        rows.append(
            [w, f"{best:.2f}", f"{med:.2f}", f"{cpu:.2f}", f"{peak:,.0f}", f"{ok[0]['vocab']:,}", kind, vs_tpb]
            + [ratio, cpu_ratio]
        )
        summary.append({"who": w, "best": best, "median": med, "cpu": cpu, "peak_mb": peak})
    size = corpus.stat().st_size / 1e6
    table(
        f"{title} ({size:,.1f} MB), vocab {vocab:,}, {runs} run(s)",
        ["trainer", "best s", "median s", "CPU s", "peak MB", "vocab", "byte tokens", "tokens/byte vs tokreg"]
        + ["time vs tokreg", "CPU vs tokreg"],
        rows,
    )
    return summary


def _concat(paths: list[Path], dest: Path) -> Path:
    if not dest.exists():
        with dest.open("wb") as out:
            for p in paths:
                out.write(p.read_bytes())
    return dest


def _head(src: Path, dest: Path, size: int) -> Path:
    if not dest.exists():
        with src.open("rb") as fh:
            raw = fh.read(size)
        dest.write_bytes(raw[: raw.rindex(b"\n") + 1])
    return dest


def _mixed(dest: Path) -> Optional[Path]:
    """The multilingual mix: one line of each text in turn (German, Japanese, English, English
    technical, Chinese), so that any head of it is multilingual; None without ../langcorp."""
    if dest.exists():
        return dest
    paths = [LANG / "de.txt", LANG / "ja.txt"] + [DATA / n for n in ("kjv.txt", "dr.en.txt", "dr.zh-cn.txt")]
    if not all(p.exists() for p in paths):
        return None
    texts = [p.read_bytes().splitlines(keepends=True) for p in paths]
    with dest.open("wb") as out:
        for k in range(max(len(t) for t in texts)):
            for t in texts:
                if k < len(t):
                    out.write(t[k])
    return dest


def corpora(work: Path, keys: set[str]) -> dict[str, Optional[Path]]:
    docs = sorted((BIG / "kernel-docs").glob("*.txt"))
    kernel = BIG / "kernel.txt"
    varied = work / "varied-1g.txt"
    if kernel.exists() and not varied.exists() and "varied1g" in keys:  # 1 GB to write: only when asked
        subprocess.run(
            [sys.executable, "-m", "benchmarks.varied", str(kernel), str(varied), "1000"], check=True, cwd=ROOT
        )
    mixed = _mixed(work / "mixed.txt")
    source = work / "stdlib-6mb.py.txt"
    if not source.exists():
        source.write_text(stdlib_source(6_000_000), encoding="utf-8")
    return {
        "mixed1": _head(mixed, work / "mixed-1mb.txt", 1_000_000) if mixed else None,
        "mixed6": _head(mixed, work / "mixed-6mb.txt", 6_000_000) if mixed else None,
        "mixed20": _head(mixed, work / "mixed-20mb.txt", 20_000_000) if mixed else None,
        "source6": source,
        "kernel1": _head(kernel, work / "kernel-1mb.txt", 1_000_000) if kernel.exists() else None,
        "kernel20": _head(kernel, work / "kernel-20mb.txt", 20_000_000) if kernel.exists() else None,
        "docs": _concat(docs, work / "kernel-docs.txt") if docs else None,
        "kernel100": _head(kernel, work / "kernel-100mb.txt", 100_000_000) if kernel.exists() else None,
        "kernel1g": kernel if kernel.exists() else None,
        "varied1g": varied if varied.exists() else None,
    }


def stale_bytecode(tree: Path) -> list[str]:
    """The modules of `tree`'s tokreg whose compiled file is missing or older than their source.
    With PYTHONDONTWRITEBYTECODE set, every run of such a checkout compiles them again (a few
    edited modules: ~5% of a 1 MB run), which is no part of what the table compares."""
    out = []
    for py in sorted((tree / "tokreg").rglob("*.py")):
        pyc = Path(importlib.util.cache_from_source(str(py)))
        if not pyc.exists() or pyc.stat().st_mtime < py.stat().st_mtime:
            out.append(str(py.relative_to(tree)))
    return out


def _warn_stale() -> None:
    if not os.environ.get("PYTHONDONTWRITEBYTECODE"):
        return
    for tree in [ROOT, *([Path(BASE)] if BASE else [])]:
        stale = stale_bytecode(tree)
        if stale:
            print(
                f"\nNote: {len(stale)} module(s) of {tree} have no up-to-date .pyc and PYTHONDONTWRITEBYTECODE is "
                f"set, so each run compiles them (e.g. {stale[0]}); `python -m compileall -q tokreg` there first."
            )


def run() -> None:
    _warn_stale()
    work = Path(os.environ.get("TOKREG_BENCH_WORK", tempfile.gettempdir())) / "tokreg-scale-corpora"
    work.mkdir(exist_ok=True)
    only = os.environ.get("TOKREG_SCALE_ONLY", "")
    c = corpora(work, {x.split(":")[0] for x in only.split(",")} if only else {"varied1g"})
    plan = [
        ("mixed1", "Byte-level BPE, multilingual mix, first 1 MB", "bpe", BPE_PEERS, 5),
        ("kernel1", "Byte-level BPE, kernel.txt first 1 MB", "bpe", BPE_PEERS, 5),
        ("mixed6", "Byte-level BPE, multilingual mix, first 6 MB", "bpe", BPE_PEERS, 3),
        ("source6", "Byte-level BPE, Python standard library source", "bpe", BPE_PEERS, 3),
        ("mixed20", "Byte-level BPE, multilingual mix, first 20 MB", "bpe", BPE_PEERS, 3),
        ("kernel20", "Byte-level BPE, kernel.txt first 20 MB", "bpe", BPE_PEERS, 3),
        ("docs", "Byte-level BPE, kernel documentation in six languages", "bpe", BPE_PEERS, 3),
        ("kernel100", "Byte-level BPE, kernel.txt first 100 MB", "bpe", BPE_PEERS, 2),
        ("kernel100", "WordPiece, kernel.txt first 100 MB", "wordpiece", ["hf"], 1),
        ("kernel100", "Unigram, kernel.txt first 100 MB", "unigram", ["sentencepiece", "hf"], 1),
        ("kernel1g", "Byte-level BPE, kernel.txt 1 GB", "bpe", ["gigabpe", "rustbpe", "sentencepiece", "hf"], 1),
        ("varied1g", "Byte-level BPE, 1 GB of kernel text with randomly varied words", "bpe", ["gigabpe"], 1),
    ]
    # TOKREG_SCALE_ONLY=docs,kernel100:bpe picks corpora (and an algorithm on one);
    # TOKREG_SCALE_RUNS=1 caps the runs of each table.
    picked = [x.split(":") for x in only.split(",")] if only else []
    most = int(os.environ.get("TOKREG_SCALE_RUNS", "0")) or None
    for key, title, algo, peers, runs in plan:
        if picked and not any(p[0] == key and (len(p) == 1 or p[1] == algo) for p in picked):
            continue
        runs = min(runs, most or runs)
        corpus = c[key]
        if corpus is None:
            print(f"\n({title}: corpus not found, skipped; ../shared/tools/big-corpus.sh {BIG} makes the kernel ones)")
            continue
        base = ["tokreg-base"] if BASE else []
        compare(title, algo, corpus, 32_000, ["tokreg", *base, *(PEERS or peers)], runs)


if __name__ == "__main__":
    run()
