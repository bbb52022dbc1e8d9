"""Unigram quality beside SentencePiece: both trainers get the same training text and matched
options (benchmarks/unigram_quality_child.py says which), at 8,000 and 32,000 pieces, and each
model is measured in tokens on held-out text (fewer is better): its own language's held-out
lines, and a related language's (trained on one, measured on the other). Training time and peak
memory come from a fresh process per run.

The texts. Each is cut into blocks of 100 lines; when it is larger than its budget, every k-th
block is taken (so that every source in the file is sampled); of those blocks, every fifth is
held out and never trained on, the others are the training text.

- English: kjv.txt + dr.en.txt (../shared/data), all of them
- KJV: kjv.txt alone (for the KJV -> Debian Reference pair)
- German: /work/langcorp/de.txt (built by ../shared/tools/lang-corpora.sh), 4 MB
- Japanese: /work/langcorp/ja.txt, 4 MB
- Chinese: dr.zh-cn.txt (../shared/data), all of it
- code: Python's standard library (the running Python's stdlib `*.py` files, site-packages
  left out, in sorted path order until 8 MB; the table's note names the first and last file)

Pairs (train -> measure): German -> English, English -> German, Japanese -> Chinese,
Chinese -> Japanese, KJV -> Debian Reference (dr.en.txt's held-out blocks). Set
TOKREG_LANG_DATA to the folder of de.txt and ja.txt; a text that is not on this machine, or too
small for a size, says so under the table instead of a row.
"""

from __future__ import annotations

import json
import os
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.common import DATA, child, need_data, table

LANG = Path(os.environ.get("TOKREG_LANG_DATA", "/work/langcorp"))
VOCABS = (8000, 32000)
BLOCK = 100  # lines per block
BUDGET = 4_000_000  # bytes of text per language before the split
CODE_BUDGET = 8_000_000  # code needs more to fill 32,000 pieces

# (row name, model trained on, held-out text measured)
PAIRS = [
    ("German -> English", "German", "English"),
    ("English -> German", "English", "German"),
    ("Japanese -> Chinese", "Japanese", "Chinese"),
    ("Chinese -> Japanese", "Chinese", "Japanese"),
    ("KJV -> Debian Reference", "KJV", "dr.en"),
]


def _lines(path: Path) -> list[str]:
    if not path.exists():
        return []
    with open(path, encoding="utf-8", errors="replace") as fh:
        return [x for x in fh.read().splitlines() if x.strip()]


def stdlib_files(limit: int = CODE_BUDGET) -> list[Path]:
    """The `*.py` files of this Python's standard library (site-packages left out), in sorted
    path order, until `limit` bytes."""
    root = Path(sysconfig.get_path("stdlib"))
    out, size = [], 0
    for p in sorted(x for x in root.rglob("*.py") if "site-packages" not in x.relative_to(root).parts):
        out.append(p)
        size += p.stat().st_size
        if size >= limit:
            break
    return out


def split(lines: list[str], budget: int = 0) -> tuple[list[str], list[str]]:
    """(training lines, held-out lines): blocks of BLOCK lines, every k-th block when the text
    is larger than `budget` bytes, every fifth of those held out."""
    blocks = [lines[i : i + BLOCK] for i in range(0, len(lines), BLOCK)]
    size = sum(len(x.encode()) + 1 for x in lines)
    step = max(1, -(-size // budget)) if budget else 1
    taken = blocks[::step]
    train = [x for j, b in enumerate(taken) if j % 5 != 4 for x in b]
    held = [x for j, b in enumerate(taken) if j % 5 == 4 for x in b]
    return train, held


def texts() -> tuple[dict[str, list[str]], dict[str, list[str]], str]:
    """name -> training lines, name -> held-out lines, and a note on the code files."""
    kjv, dr = _lines(DATA / "kjv.txt"), _lines(DATA / "dr.en.txt")
    files = stdlib_files()
    code = [x for p in files for x in p.read_text(encoding="utf-8", errors="replace").splitlines() if x.strip()]
    parts = {
        "English": [split(kjv), split(dr)],
        "KJV": [split(kjv)],
        "dr.en": [split(dr)],
        "German": [split(_lines(LANG / "de.txt"), BUDGET)],
        "Japanese": [split(_lines(LANG / "ja.txt"), BUDGET)],
        "Chinese": [split(_lines(DATA / "dr.zh-cn.txt"))],
        "code": [split(code)],
    }
    train = {k: [x for t, _ in v for x in t] for k, v in parts.items()}
    held = {k: [x for _, h in v for x in h] for k, v in parts.items()}
    root = Path(sysconfig.get_path("stdlib"))
    first, last = files[0].relative_to(root), files[-1].relative_to(root)
    note = f"code: {len(files)} files of {root}, {first} to {last} in sorted path order"
    return train, held, note


def run() -> None:
    need_data()
    import sentencepiece as spm

    import tokreg

    folder = tempfile.mkdtemp(prefix="tokreg-bench-ugq-")
    threads = str(os.cpu_count() or 1)
    train, held, code_note = texts()
    rows: list[list[Any]] = []
    notes: list[str] = [code_note]
    models: dict[tuple[str, int], tuple[Any, Any, float]] = {}
    for name in ("English", "German", "Japanese", "Chinese", "code", "KJV"):
        if not train[name]:
            notes.append(f"{name}: its text is not on this machine")
            continue
        corpus = f"{folder}/{name}.txt"
        with open(corpus, "w", encoding="utf-8") as fh:
            fh.write("\n".join(train[name]) + "\n")
        mb = os.path.getsize(corpus) / 1e6
        for vocab in VOCABS:
            out = f"{folder}/{name}-{vocab}"
            ours_run = child("benchmarks.unigram_quality_child", "tokreg", corpus, str(vocab), threads, out + ".db")
            matched = json.dumps(tokreg.UnigramOptions(vocab_size=vocab, byte_fallback=False).spm_train_options())
            sp_run = child("benchmarks.unigram_quality_child", "sp", corpus, str(vocab), threads, out, matched)
            failed = [f"{who}: {r['error']}" for who, r in (("tokreg", ours_run), ("spm", sp_run)) if "error" in r]
            if failed:
                notes.append(f"{name} ({mb:.2f} MB) at vocab {vocab:,}: not trained; " + "; ".join(failed))
                continue
            ours = tokreg.Registry(out + ".db").load("q")
            sp = spm.SentencePieceProcessor(model_file=out + ".model")
            models[(name, vocab)] = (ours, sp, mb)
            if name != "KJV":
                rows.append(_row(name, mb, vocab, ours, sp, held[name], ours_run, sp_run))
            for pair, src, dst in PAIRS:
                if src == name and held[dst]:
                    rows.append(_row(pair, mb, vocab, ours, sp, held[dst], ours_run, sp_run))
            print(f"  {name} {vocab}: done", file=sys.stderr, flush=True)
    order = [n for n in ("English", "German", "Japanese", "Chinese", "code")] + [p[0] for p in PAIRS]
    rows.sort(key=lambda r: (order.index(r[0]), int(r[2].replace(",", ""))))
    table(
        "Unigram beside SentencePiece, matched options: tokens on held-out text (fewer is better)",
        [
            "trained -> measured",
            "train MB",
            "vocab",
            "tokreg tokens",
            "spm tokens",
            "tokreg vs spm",
            "tokreg train s",
            "spm train s",
            "tokreg peak MB",
            "spm peak MB",
        ],
        rows,
    )
    for note in notes:
        print(f"\n{note}")


def _row(name: str, mb: float, vocab: int, ours: Any, sp: Any, held: list[str], o: dict, s: dict) -> list[Any]:
    n_ours = sum(map(len, ours.encode_batch(held)))
    n_sp = sum(map(len, sp.encode(held)))
    return [
        name,
        f"{mb:.1f}",
        f"{vocab:,}",
        f"{n_ours:,}",
        f"{n_sp:,}",
        f"{100 * (n_ours / n_sp - 1):+.2f}%",
        f"{o['seconds']:.1f}",
        f"{s['seconds']:.1f}",
        f"{o['peak_rss_mb']:.0f}",
        f"{s['peak_rss_mb']:.0f}",
    ]
