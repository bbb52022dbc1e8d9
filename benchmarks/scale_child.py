"""One training run of the corpus-scale suite, in a fresh process:
`python -m benchmarks.scale_child WHO ALGO CORPUS VOCAB PATTERN OUT`. Prints one JSON line: the
run's wall time from the start of the process, its CPU time (every thread) and its peak resident
memory, all taken as soon as training has returned; then what the check after it found: the
vocab reached and, for BPE, how many of the 256 byte tokens its output holds (256 for a
byte-level trainer that adds every byte; only the bytes seen in the corpus for gigabpe, as for
Hugging Face without an initial alphabet) and its tokens per byte on the first `CHECK_BYTES` of
the corpus encoded in one call by the trainer's own encoder (not timed).

WHO: tokreg (the `tokreg train` command itself, recording included), hf, sentencepiece,
gigabpe, fast-bpe-rs, rustbpe, bpeasy. ALGO: bpe, wordpiece, unigram.

What each BPE trainer is given, so that each is a byte-level BPE trainer on GPT-2's split:

- tokreg: `tokreg train --algo bpe --pattern gpt2` (the split as tiktoken's r50k spells it);
- hf: `BpeTrainer` with the 256-byte `ByteLevel` alphabet, after `Split(HF_PATTERN, "isolated")`
  and `ByteLevel(add_prefix_space=False, use_regex=False)`;
- gigabpe: `train_bpe(..., pretokenizer="bytelevel")`: Hugging Face's `ByteLevel` with GPT-2's
  split built in (`add_prefix_space=False`); it takes no pattern, and its default,
  `"whitespace"`, is not byte-level;
- fast-bpe-rs: `BPE(pattern)` with tokreg's spelling of the split, trained on the lines;
- rustbpe: `train_from_iterator(lines, vocab, pattern=...)`, tokreg's spelling;
- bpeasy: `train_bpe(lines, HF_PATTERN, 128, vocab)` (tokens of at most 128 bytes);
- sentencepiece: BPE with byte fallback on its own whitespace split: not byte-level, which its
  row says.

The two spellings of GPT-2's split (tiktoken's `\\s++$|\\s+(?!\\S)|\\s`, Hugging Face's
`\\s+(?!\\S)|\\s+`) cut every line the same way.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Callable

#: How much of the corpus each output encodes in the check after timing.
CHECK_BYTES = 1_000_000

HF_PATTERN = {
    # Oniguruma spellings of the same splits (tokenizers cannot take possessive quantifiers).
    "gpt2": r"'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+",
    "cl100k": r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+",
}

Encoder = Callable[[str], Sequence[int]]


@dataclass
class Trained:
    """What a run returns: the vocab reached, and for the check after timing, the number of
    the 256 byte tokens in its output and a function that makes its encoder."""

    vocab: int
    byte_tokens: Callable[[], int] = lambda: 0
    encoder: Callable[[], Encoder] | None = None
    #: The vocab reached, read after timing when `vocab` is only the size asked for.
    reached: Callable[[], int] | None = None


def lines(corpus: str) -> Iterator[str]:
    with open(corpus, encoding="utf-8", errors="replace") as fh:
        yield from fh


def _byte_tokens(tokens: Any) -> int:
    return len({bytes([b]) for b in range(256)} & set(tokens))


def _gpt2_chars(vocab: Any) -> int:
    """The byte tokens of a vocabulary in GPT-2's byte-to-unicode spelling."""
    from tokenizers import pre_tokenizers

    return len(set(pre_tokenizers.ByteLevel.alphabet()) & set(vocab))


def tokreg_run(algo: str, corpus: str, vocab: int, pattern: str, out: str) -> Trained:
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

    def load() -> Any:
        import tokreg

        return tokreg.load("bench", db=out + ".db")

    def byte_tokens() -> int:
        tok = load()
        return _byte_tokens(tok.token_bytes(i) for i in range(tok.vocab_size))

    return Trained(vocab, byte_tokens, lambda: load().encode_ordinary, lambda: int(load().vocab_size))


def hf(algo: str, corpus: str, vocab: int, pattern: str, out: str) -> Trained:
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
    return Trained(
        int(tok.get_vocab_size()),
        lambda: _gpt2_chars(tok.get_vocab()),
        lambda: lambda s: tok.encode(s, add_special_tokens=False).ids,
    )


def sentencepiece(algo: str, corpus: str, vocab: int, pattern: str, out: str) -> Trained:
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

    def encoder() -> Encoder:
        sp = spm.SentencePieceProcessor(model_file=out + ".model")
        return lambda s: sp.encode(s)  # type: ignore[no-any-return]

    return Trained(vocab, encoder=encoder)


def gigabpe_run(algo: str, corpus: str, vocab: int, pattern: str, out: str) -> Trained:
    import gigabpe

    # Byte-level, Hugging Face's ByteLevel split: GPT-2's, the only one it takes.
    vocab_map, merges = gigabpe.train_bpe([corpus], vocab, pretokenizer="bytelevel")

    def encoder() -> Encoder:
        from tokenizers import Tokenizer, models, pre_tokenizers

        tok = Tokenizer(models.BPE(vocab_map, [tuple(m) for m in merges]))
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
        return lambda s: tok.encode(s, add_special_tokens=False).ids

    return Trained(len(vocab_map), lambda: _gpt2_chars(vocab_map), encoder)


def fast_bpe(algo: str, corpus: str, vocab: int, pattern: str, out: str) -> Trained:
    import fast_bpe_rs

    from tokreg.patterns import BUILTIN

    bpe = fast_bpe_rs.BPE(BUILTIN[pattern])
    bpe.train(vocab, list(lines(corpus)))
    # No vocabulary getter: ids 0..255 are its byte tokens when they decode to the 256 bytes.
    return Trained(vocab, lambda: 256 * (bytes(bpe.decode(list(range(256)))) == bytes(range(256))), lambda: bpe.encode)


def rustbpe_run(algo: str, corpus: str, vocab: int, pattern: str, out: str) -> Trained:
    import rustbpe

    from tokreg.patterns import BUILTIN

    tok = rustbpe.Tokenizer()
    tok.train_from_iterator(lines(corpus), vocab, pattern=BUILTIN[pattern])
    return Trained(
        int(tok.vocab_size), lambda: _byte_tokens(bytes(t) for t, _ in tok.get_mergeable_ranks()), lambda: tok.encode
    )


def bpeasy_run(algo: str, corpus: str, vocab: int, pattern: str, out: str) -> Trained:
    import bpeasy

    ranks = bpeasy.train_bpe(lines(corpus), HF_PATTERN[pattern], 128, vocab)  # the 256 bytes included

    def encoder() -> Encoder:
        import tiktoken

        from tokreg.patterns import BUILTIN

        enc = tiktoken.Encoding("bpeasy", pat_str=BUILTIN[pattern], mergeable_ranks=ranks, special_tokens={})
        return enc.encode_ordinary

    return Trained(len(ranks), lambda: _byte_tokens(ranks), encoder)


RUNNERS = {
    "tokreg": tokreg_run,
    "hf": hf,
    "sentencepiece": sentencepiece,
    "gigabpe": gigabpe_run,
    "fast-bpe-rs": fast_bpe,
    "rustbpe": rustbpe_run,
    "bpeasy": bpeasy_run,
}


def since_start() -> float:
    """Wall seconds since this process started (the kernel's start time, in clock ticks)."""
    with open("/proc/self/stat") as fh:
        started = int(fh.read().rsplit(")", 1)[1].split()[19]) / os.sysconf("SC_CLK_TCK")
    with open("/proc/uptime") as fh:
        return float(fh.read().split()[0]) - started


def peak_mb() -> float:
    with open("/proc/self/status") as fh:
        return next(int(ln.split()[1]) / 1024 for ln in fh if ln.startswith("VmHWM:"))


def tokens_per_byte(encode: Encoder, corpus: str) -> float:
    with open(corpus, "rb") as fh:
        head = fh.read(CHECK_BYTES)
    text = (head[: head.rfind(b"\n") + 1] or head).decode("utf-8", errors="replace")
    return len(encode(text)) / len(text.encode())


def main() -> None:
    who, algo, corpus, vocab, pattern, out = sys.argv[1:7]
    trained = RUNNERS[who](algo, corpus, int(vocab), pattern, out)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    result: dict[str, Any] = {
        "seconds": since_start(),
        "cpu": usage.ru_utime + usage.ru_stime,
        "peak_mb": peak_mb(),
        "vocab": trained.vocab,
    }
    if trained.reached is not None:
        result["vocab"] = trained.reached()
    if algo == "bpe":
        t = time.perf_counter()
        result["byte_tokens"] = trained.byte_tokens()
        if trained.encoder is not None:
            result["tokens_per_byte"] = tokens_per_byte(trained.encoder(), corpus)
        result["check_seconds"] = time.perf_counter() - t
    print(json.dumps(result))


if __name__ == "__main__":
    main()
