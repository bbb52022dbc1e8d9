"""One training run in its own process (for a clean peak-memory figure):
`python -m benchmarks.train_child tokreg|hf CORPUS VOCAB THREADS`."""

from __future__ import annotations

import os
import sys
import tempfile
import time

from benchmarks.common import report


def main() -> None:
    lib, corpus, vocab, threads = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    if lib == "hf":
        os.environ["RAYON_NUM_THREADS"] = str(threads)
    t = time.perf_counter()
    if lib == "tokreg":
        import tokreg

        with tempfile.TemporaryDirectory() as d:
            reg = tokreg.Registry(os.path.join(d, "bench.db"))
            t = time.perf_counter()
            v = reg.train(
                "bench", [corpus], tokreg.BpeOptions(vocab_size=vocab, pattern="cl100k", threads=threads)
            )
            seconds = time.perf_counter() - t
            run = reg.show(v.ref)["training_run"]
            report(
                seconds=seconds, train_only=run["count_seconds"] + run["train_seconds"], vocab=v.vocab_size
            )
    else:
        from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers

        from tokreg.patterns import BUILTIN

        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(BUILTIN["cl100k"]), behavior="isolated"),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        )
        tok.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(
            vocab_size=vocab, show_progress=False, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
        )
        tok.train([corpus], trainer)
        seconds = time.perf_counter() - t
        report(seconds=seconds, train_only=seconds, vocab=tok.get_vocab_size())


if __name__ == "__main__":
    main()
