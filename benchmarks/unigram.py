"""Unigram LM beside SentencePiece (and HF's UnigramTrainer): the same training text (the
first 80% of the lines of kjv.txt and dr.en.txt), vocab 8000, identity normalization, spaces
kept. Quality is tokens per byte on the held-out 20%; training time and peak memory each in
a fresh process; encode MB/s of tokreg and SentencePiece on the same SentencePiece-trained model
(imported into tokreg, so the ids are the same) when SentencePiece import is available."""

from __future__ import annotations

import os
import tempfile

from benchmarks.common import DATA, best_of, child, mbps, need_data, table

VOCAB = 8000


def _split(folder: str) -> tuple[str, list[str]]:
    train, held = [], []
    for name in ("kjv.txt", "dr.en.txt"):
        lines = (DATA / name).read_text(encoding="utf-8").splitlines()
        cut = len(lines) * 8 // 10
        train += lines[:cut]
        held += [x for x in lines[cut:] if x.strip()]
    path = os.path.join(folder, "train.txt")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(train) + "\n")
    return path, held


def run() -> None:
    need_data()
    import sentencepiece as spm

    import tokreg

    folder = tempfile.mkdtemp(prefix="tokreg-bench-ug-")
    corpus, held = _split(folder)
    held_bytes = sum(len(x.encode()) for x in held)
    threads = str(os.cpu_count() or 1)
    runs = {
        who: child("benchmarks.train_child", who, corpus, str(VOCAB), threads, f"{folder}/{who}")
        for who in ("tokreg-unigram", "sp-unigram", "hf-unigram")
    }

    ours = tokreg.Registry(f"{folder}/tokreg-unigram.db").load("bench")
    sp = spm.SentencePieceProcessor(model_file=f"{folder}/sp-unigram.model")
    tpb_ours = sum(map(len, ours.encode_batch(held))) / held_bytes
    tpb_sp = sum(map(len, sp.encode(held))) / held_bytes

    def mem(r: dict[str, float]) -> list[str]:
        return [f"{r['peak_rss_mb']:.0f}", f"{r['peak_rss_mb'] - r['baseline_mb']:.0f}"]

    rows = [
        ["tokreg", f"{tpb_ours:.4f}", f"{runs['tokreg-unigram']['train_only']:.2f}", *mem(runs["tokreg-unigram"])],
        ["SentencePiece", f"{tpb_sp:.4f}", f"{runs['sp-unigram']['seconds']:.2f}", *mem(runs["sp-unigram"])],
        ["HF UnigramTrainer", "", f"{runs['hf-unigram']['seconds']:.2f}", *mem(runs["hf-unigram"])],
    ]
    table(
        f"Unigram, vocab {VOCAB:,}, trained on 80% of kjv.txt + dr.en.txt ({os.path.getsize(corpus) / 1e6:.1f} MB), "
        f"tokens per byte on the other 20% (difference {100 * (tpb_ours / tpb_sp - 1):+.2f}%)",
        ["trainer", "tokens/byte held out", "train s", "peak MB", "peak above import MB"],
        rows,
    )
    print(
        "\n'peak above import' subtracts the process's peak after importing the library and before training "
        "(tokreg's import carries SQLAlchemy for the registry, ~30 MB more than sentencepiece's)."
    )

    # Encode speed on one model, the one SentencePiece trained, through both libraries.
    reg = tokreg.Registry(f"{folder}/import.db")
    reg.import_sentencepiece("sp", f"{folder}/sp-unigram.model")
    same = reg.load("sp")
    text_lines = (DATA / "dr.en.txt").read_text(encoding="utf-8").splitlines()
    n = sum(len(x.encode()) for x in text_lines)
    rows = []
    assert same.encode_batch(text_lines, threads=1) == sp.encode(text_lines), "ids differ from SentencePiece"
    t_sp = best_of(lambda: sp.encode(text_lines, num_threads=1))
    t_ours = best_of(lambda: same.encode_batch(text_lines, threads=1))
    label = "same model (SentencePiece's, imported)"
    rows.append(["dr.en.txt, per line", mbps(n, t_ours), mbps(n, t_sp), f"{t_sp / t_ours:.2f}x"])
    table(f"Unigram encode, one thread, {label}", ["input", "tokreg MB/s", "SentencePiece MB/s", "ratio"], rows)
