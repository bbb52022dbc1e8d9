"""Seeded stochastic encodings (issue 28, item 4) beside the peers that have one: tokreg's
BPE-dropout next to Hugging Face tokenizers' (`BPE(dropout=p)`, same vocabulary and merges),
tokreg's Unigram sampling next to SentencePiece's (`enable_sampling=True, alpha`), and
StochasTok (no peer ships it). Measured on held-out text (the last 20% of the lines of kjv.txt
and dr.en.txt; the tokenizers train on the first 80%): tokens per byte (how much a method
fragments), encode MB/s on one thread, whether two thread counts give the same ids, and whether
every line decodes back (for the normalizing Unigram: to what its plain encoding decodes to).
The peers draw from an unseeded generator: their ids cannot be made again, which is the
difference this feature is about.
"""

from __future__ import annotations

import os
import tempfile
import time
from typing import Any

import tokreg
from benchmarks.common import DATA, held_out_split, mbps, need_data, table, text_lines

VOCAB = 8000
PS = (0.1, 0.3)
ALPHA = 0.1


def _rate(fn: Any, nbytes: int) -> tuple[Any, str]:
    t = time.perf_counter()
    out = fn()
    return out, mbps(nbytes, time.perf_counter() - t)


def _per_byte(lists: list[list[int]], nbytes: int) -> str:
    return f"{sum(map(len, lists)) / nbytes:.4f}"


def run() -> None:
    need_data()
    with tempfile.TemporaryDirectory() as folder:
        train, held = held_out_split([text_lines(DATA / "kjv.txt"), text_lines(DATA / "dr.en.txt")], folder, "en")
        held = held[:20_000]
        nbytes = sum(len(x.encode()) for x in held)
        reg = tokreg.Registry(os.path.join(folder, "r.db"))
        reg.train("bpe", [train], tokreg.BpeOptions(vocab_size=VOCAB))
        tok = reg.load("bpe")
        hf = tok.to_hf()
        plain = tok.encode_batch(held, threads=1)
        assert [e.ids for e in hf.encode_batch(held, add_special_tokens=False)] == plain, "HF export differs"
        rows: list[list[Any]] = [["plain BPE", "-", _per_byte(plain, nbytes), "", "", ""]]
        for p in PS:
            for method in ("bpe-dropout", "stochastok"):
                ours, rate = _rate(lambda: tok.encode_batch(held, threads=1, dropout=p, seed=1, method=method), nbytes)
                again = tok.encode_batch(held, threads=2, dropout=p, seed=1, method=method)
                back = sum(tok.decode(ids) == line for ids, line in zip(ours, held))
                rows.append(
                    [f"tokreg {method}", p, _per_byte(ours, nbytes), rate, again == ours, f"{back}/{len(held)}"]
                )
            hf.model.dropout = p
            theirs, rate = _rate(lambda: [e.ids for e in hf.encode_batch(held, add_special_tokens=False)], nbytes)
            second = [e.ids for e in hf.encode_batch(held, add_special_tokens=False)]
            back = sum(hf.decode(ids) == line for ids, line in zip(theirs, held))
            rows.append(
                [
                    "HF tokenizers BPE(dropout)",
                    p,
                    _per_byte(theirs, nbytes),
                    rate,
                    second == theirs,
                    f"{back}/{len(held)}",
                ]
            )
            hf.model.dropout = None
        headers = ["method", "p", "tokens/byte", "MB/s (1 thread)", "same ids again", "decodes back"]
        table(
            f"BPE-dropout and StochasTok, byte-level BPE {VOCAB:,}, {nbytes / 1e6:.1f} MB held-out English",
            headers,
            rows,
        )
        _unigram(folder, train, held, nbytes)


def _unigram(folder: str, train: str, held: list[str], nbytes: int) -> None:
    try:
        import sentencepiece as spm
    except ImportError:
        print("(sentencepiece is not installed: no Unigram sampling comparison)")
        return
    prefix = os.path.join(folder, "uni")
    spm.SentencePieceTrainer.train(
        input=train,
        model_prefix=prefix,
        vocab_size=VOCAB,
        model_type="unigram",
        byte_fallback=True,
        input_sentence_size=200_000,
        shuffle_input_sentence=False,
        minloglevel=2,
    )
    reg = tokreg.Registry(os.path.join(folder, "r.db"))
    reg.import_sentencepiece("uni", prefix + ".model")
    tok = reg.load("uni")
    sp = spm.SentencePieceProcessor(model_file=prefix + ".model")
    plain = tok.encode_batch(held, threads=1)
    want = [tok.decode(ids) for ids in plain]  # SentencePiece normalizes: compare with the plain decoding
    rows: list[list[Any]] = [["plain Unigram", "-", _per_byte(plain, nbytes), "", "", ""]]
    for method in ("unigram", "stochastok"):
        strength = ALPHA if method == "unigram" else PS[0]
        ours, rate = _rate(lambda: tok.encode_batch(held, threads=1, dropout=strength, seed=1, method=method), nbytes)
        again = tok.encode_batch(held, threads=2, dropout=strength, seed=1, method=method)
        back = sum(tok.decode(ids) == line for ids, line in zip(ours, want))
        rows.append([f"tokreg {method}", strength, _per_byte(ours, nbytes), rate, again == ours, f"{back}/{len(held)}"])
    theirs, rate = _rate(lambda: sp.encode(held, enable_sampling=True, alpha=ALPHA, nbest_size=-1), nbytes)
    second = sp.encode(held, enable_sampling=True, alpha=ALPHA, nbest_size=-1)
    back = sum(sp.decode(ids) == sp.decode(p) for ids, p in zip(theirs, sp.encode(held)))
    rows.append(
        ["SentencePiece sampling", ALPHA, _per_byte(theirs, nbytes), rate, second == theirs, f"{back}/{len(held)}"]
    )
    headers = ["method", "p / alpha", "tokens/byte", "MB/s (1 thread)", "same ids again", "decodes as plain"]
    table(f"Unigram sampling, SentencePiece Unigram {VOCAB:,} imported, same held-out text", headers, rows)
