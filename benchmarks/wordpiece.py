"""WordPiece beside Hugging Face tokenizers: training time on kjv.txt + dr.en.txt at vocab 8000
(uncased), and encode MB/s on one vocabulary (HF's, imported into tokreg: same ids), one thread."""

from __future__ import annotations

import os
import tempfile

from benchmarks.common import DATA, best_of, child, inputs, mbps, need_data, table


def run(vocab: int = 8000) -> None:
    need_data()
    import tokenizers

    import tokreg
    from tokreg import WordPieceOptions

    folder = tempfile.mkdtemp(prefix="tokreg-bench-wp-")
    corpus = os.path.join(folder, "train.txt")
    with open(corpus, "wb") as fh:
        fh.write((DATA / "kjv.txt").read_bytes() + (DATA / "dr.en.txt").read_bytes())
    threads = str(os.cpu_count() or 1)
    tk = child("benchmarks.train_child", "tokreg-wordpiece", corpus, str(vocab), threads, f"{folder}/tk")
    hf = child("benchmarks.train_child", "hf-wordpiece", corpus, str(vocab), threads, f"{folder}/hf")
    table(
        f"WordPiece training, vocab {vocab:,}, uncased, kjv.txt + dr.en.txt (5.2 MB), {threads} threads",
        ["trainer", "train s", "peak MB", "peak above import MB"],
        [
            [
                "tokreg",
                f"{tk['train_only']:.2f}",
                f"{tk['peak_rss_mb']:.0f}",
                f"{tk['peak_rss_mb'] - tk['baseline_mb']:.0f}",
            ],
            [
                "HF WordPieceTrainer",
                f"{hf['seconds']:.2f}",
                f"{hf['peak_rss_mb']:.0f}",
                f"{hf['peak_rss_mb'] - hf['baseline_mb']:.0f}",
            ],
        ],
    )

    hf_tok = tokenizers.Tokenizer.from_file(f"{folder}/hf.json")
    hf_tok.model.save(folder)  # vocab.txt
    reg = tokreg.Registry(f"{folder}/wp.db")
    reg.import_wordpiece("bert", os.path.join(folder, "vocab.txt"), WordPieceOptions(vocab_size=0, lowercase=True))
    ours = reg.load("bert")
    os.environ["RAYON_NUM_THREADS"] = "1"
    rows = []
    for label, text in inputs().items():
        lines = text.splitlines()
        n = sum(len(x.encode()) for x in lines)
        expect = [e.ids for e in hf_tok.encode_batch(lines, add_special_tokens=False)]
        if ours.encode_batch(lines, threads=1) != expect:
            raise SystemExit(f"WordPiece ids differ from HF on {label}; not benchmarking")
        t_ours = best_of(lambda: ours.encode_batch(lines, threads=1))
        t_hf = best_of(lambda: hf_tok.encode_batch(lines, add_special_tokens=False), repeat=1)
        rows.append([label, mbps(n, t_ours), mbps(n, t_hf), f"{t_hf / t_ours:.1f}x"])
    table(
        "WordPiece encode, one thread, per line, HF's vocabulary (same ids)",
        ["input", "tokreg MB/s", "HF tokenizers MB/s", "ratio"],
        rows,
    )
