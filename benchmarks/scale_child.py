"""One training run of the corpus-scale suite, run by the parent under `/usr/bin/time`:
`python -m benchmarks.scale_child WHO ALGO CORPUS VOCAB PATTERN OUT`. Prints one JSON line
(vocab reached). WHO: tokreg (the `tokreg train` command itself, recording included), hf,
sentencepiece, gigabpe, fast-bpe-rs, rustbpe, bpeasy. ALGO: bpe, wordpiece, unigram."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any

HF_PATTERN = {
    # Oniguruma spellings of the same splits (tokenizers cannot take possessive quantifiers).
    "gpt2": r"'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+",
    "cl100k": r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+",
}


def lines(corpus: str) -> Iterator[str]:
    with open(corpus, encoding="utf-8", errors="replace") as fh:
        yield from fh


def tokreg_run(algo: str, corpus: str, vocab: int, pattern: str, out: str) -> int:
    from tokreg.cli import main

    argv = ["train", "bench", corpus, "--vocab-size", str(vocab), "--algo", algo, "--db", out + ".db", "-q", "--json"]
    if algo == "bpe":
        argv += ["--pattern", pattern]
    if algo == "wordpiece":
        argv += ["--lowercase"]
    if algo == "unigram":
        argv += ["--no-byte-fallback"]  # as SentencePiece's and HF's runs here
    try:
        main(argv)
    except SystemExit as e:
        if e.code:
            raise
    return vocab


def hf(algo: str, corpus: str, vocab: int, pattern: str, out: str) -> int:
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

    if algo == "bpe":
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(HF_PATTERN[pattern]), behavior="isolated"),
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
    tok.save(out + ".json")
    return int(tok.get_vocab_size())


def sentencepiece(algo: str, corpus: str, vocab: int, pattern: str, out: str) -> int:
    import sentencepiece as spm

    spm.SentencePieceTrainer.train(
        input=corpus,
        model_prefix=out,
        vocab_size=vocab,
        model_type=algo,
        normalization_rule_name="identity",
        remove_extra_whitespaces=False,
        byte_fallback=algo == "bpe",
        character_coverage=0.9995,
        num_threads=2,
        minloglevel=2,
        bos_id=-1,
        eos_id=-1,
        max_sentence_length=1 << 16,
        train_extremely_large_corpus=True,
    )
    return vocab


def gigabpe_run(algo: str, corpus: str, vocab: int, pattern: str, out: str) -> int:
    import gigabpe

    vocab_map, _ = gigabpe.train_bpe([corpus], vocab)  # GPT-2's split: the only one it has
    return len(vocab_map)


def fast_bpe(algo: str, corpus: str, vocab: int, pattern: str, out: str) -> int:
    import fast_bpe_rs

    from tokreg.patterns import BUILTIN

    bpe = fast_bpe_rs.BPE(BUILTIN[pattern])
    bpe.train(vocab, list(lines(corpus)))
    return vocab


def rustbpe_run(algo: str, corpus: str, vocab: int, pattern: str, out: str) -> int:
    import rustbpe

    from tokreg.patterns import BUILTIN

    tok = rustbpe.Tokenizer()
    tok.train_from_iterator(lines(corpus), vocab, pattern=BUILTIN[pattern])
    return int(tok.vocab_size)


def bpeasy_run(algo: str, corpus: str, vocab: int, pattern: str, out: str) -> int:
    import bpeasy

    ranks = bpeasy.train_bpe(lines(corpus), HF_PATTERN[pattern], 128, vocab)
    return len(ranks) + 256


RUNNERS = {
    "tokreg": tokreg_run,
    "hf": hf,
    "sentencepiece": sentencepiece,
    "gigabpe": gigabpe_run,
    "fast-bpe-rs": fast_bpe,
    "rustbpe": rustbpe_run,
    "bpeasy": bpeasy_run,
}


def main() -> None:
    who, algo, corpus, vocab, pattern, out = sys.argv[1:7]
    reached = RUNNERS[who](algo, corpus, int(vocab), pattern, out)
    print(json.dumps({"vocab": reached}))


if __name__ == "__main__":
    main()
