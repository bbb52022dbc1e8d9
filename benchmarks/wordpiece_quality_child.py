"""One WordPiece training run for `benchmarks.wordpiece_quality`, in a fresh process: WHO (an
objective of tokreg's, or `hf` for Hugging Face's WordPieceTrainer) trains CORPUS to VOCAB as
uncased BERT (BERT normalizer with lowercasing, BERT pre-tokenizer, `[UNK]`, `##`) and writes OUT
(a registry, or a tokenizer.json). Prints the seconds and the peak memory."""

from __future__ import annotations

import os
import sys
import time

from benchmarks.common import baseline_mb, report


def main() -> None:
    who, corpus, vocab, threads, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    os.environ["RAYON_NUM_THREADS"] = str(threads)
    if who == "hf":
        from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

        tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
        tok.normalizer = normalizers.BertNormalizer(lowercase=True)
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        trainer = trainers.WordPieceTrainer(vocab_size=vocab, special_tokens=["[UNK]"], show_progress=False)
        base = baseline_mb()
        t = time.perf_counter()
        tok.train([corpus], trainer)
        seconds = time.perf_counter() - t
        tok.save(out)
    else:
        from tokreg import Registry, WordPieceOptions

        reg = Registry(out)
        base = baseline_mb()
        t = time.perf_counter()
        reg.train("q", [corpus], WordPieceOptions(vocab_size=vocab, lowercase=True, objective=who, threads=threads))
        seconds = time.perf_counter() - t
    report(seconds=seconds, baseline_mb=base)


if __name__ == "__main__":
    main()
