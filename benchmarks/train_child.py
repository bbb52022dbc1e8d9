"""One training run in its own process, for a clean time and peak-memory figure:
`python -m benchmarks.train_child WHO CORPUS VOCAB THREADS OUT`, WHO one of tokreg-bpe, hf-bpe,
tokreg-unigram, sp-unigram, hf-unigram, tokreg-wordpiece, hf-wordpiece. Models are written
under OUT (a prefix) so the parent can measure them."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from typing import Any

from benchmarks.common import baseline_mb, report


def _tokreg(algo: str, corpus: str, vocab: int, threads: int, out: str) -> dict[str, Any]:
    # Train into an existing registry, the usual case: creating one runs the migrations, which
    # is a one-time cost of its own (and imports Alembic), so it happens in another process.
    subprocess.run(
        [sys.executable, "-c", "import sys, tokreg; tokreg.Registry(sys.argv[1], create=True)", out + ".db"], check=True
    )
    import tokreg
    from tokreg import UnigramOptions, WordPieceOptions

    reg = tokreg.Registry(out + ".db")
    base = baseline_mb()
    opts: Any = {
        "bpe": lambda: tokreg.BpeOptions(vocab_size=vocab, pattern="cl100k", threads=threads),
        "unigram": lambda: UnigramOptions(vocab_size=vocab, byte_fallback=False, threads=threads),  # as HF's
        "wordpiece": lambda: WordPieceOptions(vocab_size=vocab, lowercase=True, threads=threads),
    }[algo]()
    t = time.perf_counter()
    v = reg.train("bench", [corpus], opts)
    seconds = time.perf_counter() - t
    run = reg.show(v.ref).training_run
    return {
        "seconds": seconds,
        "train_only": run["count_seconds"] + run["train_seconds"],
        "vocab": v.vocab_size,
        "baseline_mb": base,
    }


def _hf(algo: str, corpus: str, vocab: int, out: str) -> dict[str, Any]:
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

    from tokreg.patterns import BUILTIN

    base = baseline_mb()
    t = time.perf_counter()
    if algo == "bpe":
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(
                    Regex(BUILTIN["cl100k"].replace(r"\s++$", r"\s++\z").replace(r"\p{N}{1,3}+", r"(?>\p{N}{1,3})")),
                    behavior="isolated",
                ),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        )
        tok.decoder = decoders.ByteLevel()
        trainer: Any = trainers.BpeTrainer(
            vocab_size=vocab, show_progress=False, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
        )
    elif algo == "unigram":
        tok = Tokenizer(models.Unigram())
        tok.pre_tokenizer = pre_tokenizers.Metaspace()
        trainer = trainers.UnigramTrainer(
            vocab_size=vocab, unk_token="<unk>", show_progress=False, special_tokens=["<unk>"]
        )
    else:
        tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
        tok.normalizer = normalizers.BertNormalizer(lowercase=True)
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        trainer = trainers.WordPieceTrainer(vocab_size=vocab, special_tokens=["[UNK]"], show_progress=False)
    tok.train([corpus], trainer)
    seconds = time.perf_counter() - t
    tok.save(out + ".json")
    return {"seconds": seconds, "train_only": seconds, "vocab": tok.get_vocab_size(), "baseline_mb": base}


def _sp(corpus: str, vocab: int, threads: int, out: str) -> dict[str, Any]:
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
        num_threads=threads,
        minloglevel=2,
        bos_id=-1,
        eos_id=-1,
    )
    seconds = time.perf_counter() - t
    return {"seconds": seconds, "train_only": seconds, "vocab": vocab, "baseline_mb": base}


def main() -> None:
    who, corpus, vocab, threads, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    os.environ["RAYON_NUM_THREADS"] = str(threads)
    lib, algo = who.split("-")
    if lib == "tokreg":
        result = _tokreg(algo, corpus, vocab, threads, out)
    elif lib == "hf":
        result = _hf(algo, corpus, vocab, out)
    else:
        result = _sp(corpus, vocab, threads, out)
    report(**result)


if __name__ == "__main__":
    main()
