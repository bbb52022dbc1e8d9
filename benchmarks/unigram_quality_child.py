"""One Unigram training run for `benchmarks.unigram_quality`, in a fresh process: WHO (tokreg or
sp) trains CORPUS to VOCAB and writes OUT (a registry, or a .model); prints the seconds and the
peak memory. tokreg gets its defaults with --no-byte-fallback (identity normalization,
whitespace kept, every character covered, no digit splitting, max piece length 16,
SentencePiece's splitting rules, seed size 1,000,000, shrinking factor 0.75, two EM
sub-iterations); sp gets the same options, which the parent passes as SPM_OPTIONS (JSON, from
`UnigramOptions.spm_train_options`, so that this process does not import tokreg)."""

from __future__ import annotations

import json
import os
import sys
import time

from benchmarks.common import baseline_mb, report


def main() -> None:
    who, corpus, vocab, threads, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    os.environ["RAYON_NUM_THREADS"] = str(threads)
    try:
        seconds, base = _train(who, corpus, vocab, threads, out)
    except Exception as e:  # a text too small for the size: the parent prints why, not a traceback
        report(error=str(e).splitlines()[0][:200])
        return
    report(seconds=seconds, baseline_mb=base)


def _train(who: str, corpus: str, vocab: int, threads: int, out: str) -> tuple[float, float]:
    if who == "tokreg":
        from tokreg import Registry, UnigramOptions

        reg = Registry(out)
        base = baseline_mb()
        t = time.perf_counter()
        reg.train("q", [corpus], UnigramOptions(vocab_size=vocab, byte_fallback=False, threads=threads))
    else:
        import sentencepiece as spm

        base = baseline_mb()
        t = time.perf_counter()
        spm.SentencePieceTrainer.train(
            input=corpus, model_prefix=out, num_threads=threads, minloglevel=2, **json.loads(sys.argv[6])
        )
    return time.perf_counter() - t, base


if __name__ == "__main__":
    main()
