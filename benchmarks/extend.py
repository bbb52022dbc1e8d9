"""Extending a version (`just bench extend`): what the new tokens buy on held-out text of the new
language, and what they leave alone.

- cl100k_base (imported) + 5,000 tokens learned on the first 80% of the lines of dr.zh-cn.txt:
  tokens per byte on the other 20% before and after, and kjv.txt's lines whose ids changed,
  without and with `--keep-text kjv.txt`;
- a Unigram version trained on English (80% of kjv.txt + dr.en.txt, vocab 8,000, byte fallback)
  + 5,000 pieces from the same Chinese: the same figures, with the English held out as the
  kept text.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from benchmarks.common import DATA, need_data, table

ADD = 5000


def _split(name: str, folder: Path) -> tuple[Path, list[str]]:
    lines = (DATA / name).read_text(encoding="utf-8").splitlines(keepends=True)
    cut = len(lines) * 8 // 10
    path = folder / f"{name}.train"
    path.write_text("".join(lines[:cut]), encoding="utf-8")
    return path, [x for x in lines[cut:] if x.strip()]


def _tpb(tok: object, lines: list[str]) -> float:
    ids = tok.encode_ordinary_batch(lines)  # type: ignore[attr-defined]
    return sum(map(len, ids)) / sum(len(x.encode()) for x in lines)


def _changed(a: object, b: object, lines: list[str]) -> int:
    x, y = a.encode_ordinary_batch(lines), b.encode_ordinary_batch(lines)  # type: ignore[attr-defined]
    return sum(p != q for p, q in zip(x, y))


def run() -> None:
    need_data()
    import tokreg
    from tokreg.algorithms import UnigramOptions

    folder = Path(tempfile.mkdtemp(prefix="tokreg-bench-extend-"))
    reg = tokreg.Registry(folder / "r.db", create=True)
    zh_train, zh_held = _split("dr.zh-cn.txt", folder)
    kjv = DATA / "kjv.txt"
    kjv_lines = kjv.read_text(encoding="utf-8").splitlines()
    rows = []

    reg.import_tiktoken(
        "cl100k_base", DATA / "cl100k_base.tiktoken", pattern="cl100k", specials={"<|endoftext|>": 100257}
    )
    base = reg.load("cl100k_base")
    for label, keep in (("cl100k-zh", None), ("cl100k-zh-keep", kjv)):
        t0 = time.perf_counter()
        reg.extend("cl100k_base", label, [zh_train], ADD, keep_text=keep)
        seconds = time.perf_counter() - t0
        ext = reg.load(label)
        rows.append(
            [
                "cl100k_base (imported)" + (", --keep-text kjv.txt" if keep else ""),
                f"{base.vocab_size:,} -> {ext.vocab_size:,}",
                f"{_tpb(base, zh_held):.4f}",
                f"{_tpb(ext, zh_held):.4f}",
                f"{100 * (_tpb(ext, zh_held) / _tpb(base, zh_held) - 1):+.1f}%",
                f"{_changed(base, ext, kjv_lines):,} of {len(kjv_lines):,} (kjv.txt)",
                f"{seconds:.1f}",
            ]
        )

    en_lines: list[str] = []
    en_held: list[str] = []
    for name in ("kjv.txt", "dr.en.txt"):
        lines = (DATA / name).read_text(encoding="utf-8").splitlines(keepends=True)
        cut = len(lines) * 8 // 10
        en_lines += lines[:cut]
        en_held += lines[cut:]
    (folder / "en.train").write_text("".join(en_lines), encoding="utf-8")
    (folder / "en.held").write_text("".join(en_held), encoding="utf-8")
    held_en = [x.rstrip("\n") for x in en_held]
    reg.train("en-ug", [folder / "en.train"], UnigramOptions(vocab_size=8000, byte_fallback=True))
    base = reg.load("en-ug")
    for label, keep in (("en-ug-zh", None), ("en-ug-zh-keep", folder / "en.held")):
        t0 = time.perf_counter()
        reg.extend("en-ug", label, [zh_train], ADD, keep_text=keep)
        seconds = time.perf_counter() - t0
        ext = reg.load(label)
        rows.append(
            [
                "Unigram 8,000 on English" + (", --keep-text (held-out English)" if keep else ""),
                f"{base.vocab_size:,} -> {ext.vocab_size:,}",
                f"{_tpb(base, zh_held):.4f}",
                f"{_tpb(ext, zh_held):.4f}",
                f"{100 * (_tpb(ext, zh_held) / _tpb(base, zh_held) - 1):+.1f}%",
                f"{_changed(base, ext, held_en):,} of {len(held_en):,} (held-out English)",
                f"{seconds:.1f}",
            ]
        )
    reg.close()
    table(
        f"Extend with {ADD:,} tokens from 80% of dr.zh-cn.txt ({os.path.getsize(zh_train) / 1e6:.2f} MB); "
        "tokens per byte on the other 20%",
        ["base", "vocab", "tokens/byte before", "after", "change", "lines whose ids changed", "extend s"],
        rows,
    )
