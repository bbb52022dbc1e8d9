"""WordPiece objectives beside Hugging Face's WordPieceTrainer, in three languages and two sizes:
every trainer gets the same training text as uncased BERT (benchmarks/wordpiece_quality_child.py)
and is measured in tokens per byte of held-out text (fewer is better), with the share of those
tokens that are `[UNK]`, its training time (the median of REPEATS fresh processes, reading and
counting included) and its peak memory (the largest of them; also above the memory the process
had once its library was imported, which leaves out tokreg's larger import).

The texts (train on the first 80% of each file's lines, measure on the other 20%):

- English: kjv.txt + dr.en.txt (../shared/data)
- German: de.txt from `../shared/tools/lang-corpora.sh` (Debian's German man pages and manuals,
  in source order: the held-out fifth is mostly other sources than the training text)
- Chinese: dr.zh-cn.txt (../shared/data)

Set TOKREG_LANGCORP to the folder lang-corpora.sh wrote (default /work/langcorp) and
TOKREG_BENCH_REPEATS to the number of runs per cell (default 3).
"""

from __future__ import annotations

import os
import statistics
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.common import DATA, child, held_out_split, need_data, table, text_lines

LANGCORP = Path(os.environ.get("TOKREG_LANGCORP", "/work/langcorp"))
VOCABS = (8000, 32000)
TRAINERS = ("frequency", "likelihood", "ratio", "hf")
REPEATS = int(os.environ.get("TOKREG_BENCH_REPEATS", "3"))


def _settings() -> dict[str, list[list[str]]]:
    return {
        "English": [text_lines(DATA / "kjv.txt"), text_lines(DATA / "dr.en.txt")],
        "German": [text_lines(LANGCORP / "de.txt")],
        "Chinese": [text_lines(DATA / "dr.zh-cn.txt")],
    }


def _tokens(who: str, out: str, held: list[str]) -> tuple[int, int]:
    """(tokens, unknown tokens) on the held-out lines."""
    if who == "hf":
        import tokenizers

        hf = tokenizers.Tokenizer.from_file(out)
        ids = [e.ids for e in hf.encode_batch(held, add_special_tokens=False)]
        unk = hf.token_to_id("[UNK]")
    else:
        import tokreg

        tok = tokreg.Registry(out).load("q")
        ids = tok.encode_batch(held)
        unk = 0  # the unknown token comes first
    return sum(map(len, ids)), sum(x.count(unk) for x in ids)


def _vocab(who: str, out: str) -> int:
    """The vocabulary size reached (below the size asked when the text has too few pairs)."""
    if who == "hf":
        import tokenizers

        return int(tokenizers.Tokenizer.from_file(out).get_vocab_size())
    import tokreg

    return int(tokreg.Registry(out).load("q").vocab_size)


def run() -> None:
    need_data()
    folder = tempfile.mkdtemp(prefix="tokreg-bench-wpq-")
    threads = str(os.cpu_count() or 1)
    rows: list[list[Any]] = []
    notes: list[str] = []
    for name, texts in _settings().items():
        if not all(texts):
            notes.append(f"{name}: its text is not on this machine (run ../shared/tools/lang-corpora.sh)")
            continue
        corpus, held = held_out_split(texts, folder, name)
        mb = os.path.getsize(corpus) / 1e6
        held_bytes = sum(len(x.encode("utf-8")) for x in held)
        for vocab in VOCABS:
            hf_tokens = 0
            for who in TRAINERS[::-1]:  # HF first: the others are compared with it
                out = f"{folder}/{name}-{vocab}-{who}" + (".json" if who == "hf" else ".db")
                runs = []
                for _ in range(REPEATS):
                    if os.path.exists(out):
                        os.remove(out)
                    runs.append(child("benchmarks.wordpiece_quality_child", who, corpus, str(vocab), threads, out))
                n, unk = _tokens(who, out, held)
                hf_tokens = hf_tokens or n
                rows.append(
                    [
                        name,
                        f"{vocab:,}",
                        "HF WordPieceTrainer" if who == "hf" else f"tokreg {who}",
                        f"{n / held_bytes:.4f}",
                        f"{100 * (n / hf_tokens - 1):+.2f}%",
                        f"{100 * unk / n:.2f}%",
                        f"{min(r['seconds'] for r in runs):.2f}",
                        f"{statistics.median(r['seconds'] for r in runs):.2f}",
                        f"{max(r['peak_rss_mb'] for r in runs):.0f}",
                        f"{max(r['peak_rss_mb'] - r['baseline_mb'] for r in runs):.0f}",
                        f"{_vocab(who, out):,}",
                    ]
                )
        notes.append(f"{name}: {mb:.1f} MB trained on, {held_bytes / 1e6:.2f} MB held out")
    table(
        f"WordPiece objectives beside HF, uncased, tokens per byte on the held-out 20% (fewer is better); "
        f"{REPEATS} fresh runs each, {threads} threads",
        [
            "text",
            "vocab",
            "trainer",
            "tokens/byte",
            "vs HF",
            "[UNK]",
            "best s",
            "median s",
            "peak MB",
            "above import MB",
            "tokens",
        ],
        rows,
    )
    for note in notes:
        print(f"- {note}")
    _summary(rows)


def _summary(rows: list[list[Any]]) -> None:
    """The same figures one row per trainer (the README's table): tokens per byte in every
        setting, then the best time and peak memory of the largest text at the larger size (German at
    32,000, when it is there)."""
    settings = list(dict.fromkeys((r[0], r[1]) for r in rows))
    big = next((s for s in settings if s == ("German", "32,000")), settings[-1] if settings else None)
    out = []
    for who in dict.fromkeys(r[2] for r in rows):
        cells = {(r[0], r[1]): r for r in rows if r[2] == who}
        row = [who] + [cells[s][3] if s in cells else "" for s in settings]
        if big in cells:
            row += [cells[big][6], cells[big][8]]
        out.append(row)
    table(
        "Summary: tokens per byte on held-out text; training time and peak memory on "
        + (f"{big[0]} at {big[1]}" if big else "the last setting"),
        ["trainer"] + [f"{t} {v}" for t, v in settings] + ["best s", "peak MB"],
        out,
    )
