"""Parity-aware BPE (Foroutan et al., arXiv 2508.04796) beside tokreg's byte-level BPE on a corpus
where one language dominates: the Gini coefficient of the tokens of parallel texts (the same
manual in English and Chinese), their premium spread, the global bytes per token (of the parallel
texts, and of held-out text shaped like the training corpus), training time (wall and CPU, with
its ratio to plain BPE's from the same interleaved rounds) and peak memory, at three sizes.

Corpus: the kernel documentation of `big-corpus.sh` (/work/bigcorp/kernel-docs; TOKREG_BENCH_CORPUS
for another folder), English dominant: the first 8 MB of lines of en.txt and the first 0.4 MB of
zh_CN.txt (Simplified Chinese), each without its last 10% of lines, which are held out.
Parallel texts: the Debian Reference in English and Simplified Chinese (dr.en.txt, dr.zh-cn.txt
of the test data), cut at the same chapter headings ("Chapter N." / "第 N 章"): the front
matter and the odd chapters are the development set parity-aware BPE compares languages on
(`--parallel`), the even chapters the texts measured, which no trainer saw.

Variants (all but "no parallel" with the parallel set): plain BPE over both languages;
parity-aware BPE; without the parallel set (the worst language by bytes per token on its own
training text); the paper's hybrid variant with a quarter of the merges global first (its own
setting) and with 85% of them (the recommendation when the corpus is dominated by one language:
parity only for the last 15% of the merges); the paper's moving-window variant (window 100, alpha
1: each language at most half of the last 100 parity merges).

"tok/byte vs BPE" is the change in tokens per byte (the issue's target: within 2% of plain BPE),
pooled over the texts measured: over the parallel texts, as the paper measures global compression
(every language the same content), and over the held-out kernel docs, weighted as the training
corpus is (mostly English), which charges every merge given to Chinese to English."""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.common import DATA, child, need_data, table
from tokreg.evaluation.metrics import gini

CORPUS = Path(os.environ.get("TOKREG_BENCH_CORPUS", "/work/bigcorp/kernel-docs"))
EN_BYTES = 8_000_000
ZH_BYTES = 400_000
#: A chapter heading of the Debian Reference, in English and in Chinese.
CHAPTER = re.compile(r"^(?:Chapter\s(\d+)\.|第\s(\d+)\s章)\s")  # \s: the manual puts no-break spaces there
SIZES = (4_000, 8_000, 16_000)
#: The hybrid curve's shares of global merges.
SHARES = (0.0, 0.25, 0.5, 0.75, 0.8, 0.85, 0.9, 0.95)
REPEAT = int(os.environ.get("TOKREG_BENCH_REPEAT", "2"))


def _write(folder: Path, name: str, lines: list[str]) -> str:
    p = folder / name
    p.write_text("".join(lines), encoding="utf-8")
    return str(p)


def _prepare(folder: Path) -> dict[str, Any]:
    files: dict[str, Any] = {"train": {}, "held": {}, "dev": {}, "eval": {}}
    for code, name, limit in (("en", "en.txt", EN_BYTES), ("zh", "zh_CN.txt", ZH_BYTES)):
        lines = (CORPUS / name).read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
        if limit:
            total, cut = 0, 0
            while cut < len(lines) and total < limit:
                total += len(lines[cut].encode("utf-8"))
                cut += 1
            lines = lines[:cut]
        held = len(lines) * 9 // 10
        files["train"][code] = _write(folder, f"train-{code}.txt", lines[:held])
        files["held"][code] = _write(folder, f"held-{code}.txt", lines[held:])
    for code, name in (("en", "dr.en.txt"), ("zh", "dr.zh-cn.txt")):
        dev, measured = _chapters((DATA / name).read_text(encoding="utf-8").splitlines(keepends=True))
        files["dev"][code] = _write(folder, f"dev-{code}.txt", dev)
        files["eval"][code] = _write(folder, f"eval-{code}.txt", measured)
    return files


def _chapters(lines: list[str]) -> tuple[list[str], list[str]]:
    """(front matter and odd chapters, even chapters) of the manual."""
    dev: list[str] = []
    measured: list[str] = []
    chapter = 0
    for line in lines:
        m = CHAPTER.match(line)
        if m:
            chapter = int(m.group(1) or m.group(2))
        (measured if chapter and chapter % 2 == 0 else dev).append(line)
    return dev, measured


def _variants(files: dict[str, Any], vocab: int) -> dict[str, dict[str, Any]]:
    measured = {**files["eval"], **{f"held-{c}": p for c, p in files["held"].items()}}
    base = {"vocab": vocab, "train": files["train"], "eval": measured}
    parity = {**base, "algo": "parity-bpe", "dev": files["dev"]}
    return {
        "BPE": {**base, "algo": "bpe"},
        "parity": parity,
        "parity (no parallel)": {**base, "algo": "parity-bpe"},
        "hybrid 25%": {**parity, "global_merges": (vocab - 256) // 4},
        "hybrid 85%": {**parity, "global_merges": (vocab - 256) * 85 // 100},
        "window 100, alpha 1": {**parity, "window": 100, "window_alpha": 1},
    }


def run() -> None:
    need_data()
    if not (CORPUS / "en.txt").exists():
        print(f"\nparity-aware BPE: {CORPUS} not found (run ../shared/tools/big-corpus.sh); skipped")
        return
    folder = Path(tempfile.mkdtemp(prefix="tokreg-frontier-parity-"))
    files = _prepare(folder)
    results: dict[tuple[int, str], list[dict[str, Any]]] = {}
    for round_ in range(REPEAT):  # interleaved: every variant once per round, each in a fresh process
        for vocab in SIZES:
            for label, spec in _variants(files, vocab).items():
                db = folder / f"r{round_}-{vocab}-{''.join(c for c in label if c.isalnum())}.db"
                results.setdefault((vocab, label), []).append(
                    child("benchmarks.parity_child", json.dumps(spec), str(db))
                )
    rows = []
    for vocab in SIZES:
        plain = _best(results[(vocab, "BPE")])
        for label in _variants(files, vocab):
            rows.append(_row(label, vocab, _best(results[(vocab, label)]), plain, results[(vocab, label)]))
    sizes = {k: Path(p).stat().st_size for k, p in files["train"].items()}
    table(
        "Parity-aware BPE vs byte-level BPE (cl100k pieces), trained on kernel docs "
        f"en {sizes['en'] / 1e6:.1f} MB + zh {sizes['zh'] / 1e6:.2f} MB; measured on the even chapters of the "
        f"Debian Reference en / zh-cn; best of {REPEAT} interleaved rounds",
        [
            "tokenizer",
            "vocab",
            "parallel en tok",
            "parallel zh tok",
            "Gini",
            "vs BPE",
            "spread",
            "parallel bytes/tok",
            "tok/byte vs BPE",
            "held-out bytes/tok",
            "tok/byte vs BPE",
            "train s wall",
            "CPU s (x BPE)",
            "peak MB",
        ],
        rows,
    )
    _curve(folder, files, {vocab: _best(results[(vocab, "BPE")]) for vocab in SIZES})


def _curve(folder: Path, files: dict[str, Any], plain: dict[int, dict[str, Any]]) -> None:
    """The hybrid variant over the share of merges taken by the global count first: one run
    each (the tokens do not depend on the run; the ratios are to the BPE rows above)."""
    rows = []
    for vocab in SIZES:
        parity = _variants(files, vocab)["parity"]
        for share in SHARES:
            spec = {**parity, "global_merges": round((vocab - 256) * share)}
            r = child("benchmarks.parity_child", json.dumps(spec), str(folder / f"curve-{vocab}-{share}.db"))
            g, _, parallel, held = _measures(r)
            pg, _, pparallel, pheld = _measures(plain[vocab])
            both = g <= pg / 2 and pheld / held - 1 <= 0.02
            rows.append(
                [
                    f"{vocab:,}",
                    f"{share:.0%}",
                    f"{g:.4f}",
                    f"{100 * (g / pg - 1):+.0f}%",
                    f"{100 * (pparallel / parallel - 1):+.2f}%",
                    f"{100 * (pheld / held - 1):+.2f}%",
                    "yes" if both else "no",
                ]
            )
    table(
        "Parity-aware BPE, hybrid: the share of merges by the global count first, then parity (parallel set)",
        ["vocab", "global", "Gini", "vs BPE", "parallel tok/byte vs BPE", "held-out tok/byte vs BPE", "both targets"],
        rows,
    )


def _best(runs: list[dict[str, Any]]) -> dict[str, Any]:
    return min(runs, key=lambda r: r["cpu_seconds"])


def _measures(r: dict[str, Any]) -> tuple[float, float, float, float]:
    t, b = r["tokens"], r["bytes"]
    g = gini([t["en"], t["zh"]])
    spread = max(t["en"], t["zh"]) / min(t["en"], t["zh"])
    parallel = (b["en"] + b["zh"]) / (t["en"] + t["zh"])
    held = (b["held-en"] + b["held-zh"]) / (t["held-en"] + t["held-zh"])
    return g, spread, parallel, held


def _row(label: str, vocab: int, r: dict[str, Any], plain: dict[str, Any], runs: list[dict[str, Any]]) -> list[Any]:
    assert len({x["content_hash"] for x in runs}) == 1, f"{label} {vocab}: runs differ"
    g, spread, parallel, held = _measures(r)
    pg, _, pparallel, pheld = _measures(plain)
    return [
        label,
        f"{vocab:,}",
        f"{r['tokens']['en']:,}",
        f"{r['tokens']['zh']:,}",
        f"{g:.4f}",
        f"{100 * (g / pg - 1):+.0f}%" if pg >= 0.005 else "-",  # a ratio of two near-zero Ginis says nothing
        f"{spread:.3f}",
        f"{parallel:.3f}",
        f"{100 * (pparallel / parallel - 1):+.2f}%",
        f"{held:.3f}",
        f"{100 * (pheld / held - 1):+.2f}%",
        f"{r['seconds']:.1f}",
        f"{r['cpu_seconds']:.1f} ({r['cpu_seconds'] / plain['cpu_seconds']:.2f}x)",
        f"{r['peak_rss_mb']:.0f} ({r['peak_rss_mb'] - r['baseline_mb']:.0f})",
    ]
