"""One Unigram training run for `benchmarks.unigram_quality`, in a fresh process: WHO (tokreg or
sp) trains CORPUS to VOCAB with matched options (identity normalization, whitespace kept, every
character covered, no byte fallback, no digit splitting, max piece length 16, SentencePiece's
splitting defaults (a piece starts at ▁ only; no piece mixes scripts or letters with digits),
seed size 1,000,000, shrinking factor 0.75, two EM sub-iterations, and no line left out for its
length: spm_train drops lines over 4,192 bytes by default, tokreg trains on every line) and
writes OUT (a registry, or a .model). Prints the seconds and the peak memory."""

from __future__ import annotations

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
            input=corpus,
            model_prefix=out,
            vocab_size=vocab,
            model_type="unigram",
            normalization_rule_name="identity",
            remove_extra_whitespaces=False,
            character_coverage=1.0,
            byte_fallback=False,
            split_digits=False,
            max_sentencepiece_length=16,
            max_sentence_length=1 << 20,
            seed_sentencepiece_size=1_000_000,
            shrinking_factor=0.75,
            num_sub_iterations=2,
            num_threads=threads,
            minloglevel=2,
            bos_id=-1,
            eos_id=-1,
        )
    return time.perf_counter() - t, base


if __name__ == "__main__":
    main()
