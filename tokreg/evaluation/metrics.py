"""The evaluation metrics: one pure function each, over counts a tokenizer produced on a text.
`tokreg eval`, `tokreg diff --text` and the stored results all come from these functions; each
docstring gives the definition and its source.

    >>> bytes_per_token(n_bytes=12, n_tokens=4)
    3.0
    >>> fertility(Counter({1: 3, 2: 1}))        # three words of one token, one of two
    1.25
    >>> renyi_efficiency([3, 2, 1, 1], vocab_size=4)
    0.8265...

`METRICS` lists what `evaluate` stores per version and text, in display order, with whether
higher or lower is better (the CLI marks the best value per column with it).
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..errors import InputError

#: Zouhar et al. (2023) find α = 2.5 correlates best with downstream BLEU.
RENYI_ALPHA = 2.5


@dataclass(frozen=True)
class Metric:
    name: str  # the `metric` column of `evaluations`
    label: str  # a column header
    higher_is_better: bool
    percent: bool = False  # shown as a percentage
    #: Fewer tokens is better here: a version that loses text must not win such a column over
    #: one that keeps it (`Evaluation.best`).
    compression: bool = False


#: What `evaluate` measures per version and text, in display order.
METRICS: tuple[Metric, ...] = (
    Metric("tokens", "tokens", higher_is_better=False, compression=True),
    Metric("bytes_per_token", "bytes/token", higher_is_better=True, compression=True),
    Metric("chars_per_token", "chars/token", higher_is_better=True, compression=True),
    Metric("fertility", "fertility", higher_is_better=False, compression=True),
    Metric("continued_words", "continued", higher_is_better=False, percent=True, compression=True),
    Metric("renyi_efficiency", "Rényi eff.", higher_is_better=True),
    Metric("vocab_utilisation", "vocab used", higher_is_better=True, percent=True),
    Metric("unknown_rate", "unknown", higher_is_better=False, percent=True),
    Metric("lost_lines", "lines lost", higher_is_better=False, percent=True),
)
#: The metrics that say a version loses text: any value above 0 on a text makes it lossy there.
LOSS = ("unknown_rate", "lost_lines")
#: Parity metrics, stored per version and parallel text (premium) or set of texts (spread).
PREMIUM = Metric("premium", "premium", higher_is_better=False)
SPREAD = Metric("premium_spread", "spread", higher_is_better=False)
BY_NAME = {m.name: m for m in (*METRICS, PREMIUM, SPREAD)}


# -- compression ---------------------------------------------------------------------------------


def bytes_per_token(n_bytes: int, n_tokens: int) -> float:
    """UTF-8 bytes of the text per token of its encoding (higher: more compression). The text's
    size in bytes does not depend on the tokenizer, so this compares any two tokenizers."""
    return n_bytes / n_tokens if n_tokens else 0.0


def chars_per_token(n_chars: int, n_tokens: int) -> float:
    """Unicode code points of the text per token (higher: more compression). Unlike bytes it
    weighs a Chinese character (3 bytes) like a Latin letter (1 byte)."""
    return n_chars / n_tokens if n_tokens else 0.0


# -- fertility (Rust et al., 2021, "How Good is Your Tokenizer?", arXiv:2012.15613) -------------


def fertility(tokens_per_word: Mapping[int, int]) -> float:
    """The average number of tokens a word is split into. `tokens_per_word` is a histogram:
    number of tokens -> number of word occurrences that took that many (so {1: 3, 2: 1} is
    three one-token words and one two-token word: fertility 5/4 = 1.25). 1.0 is the least a
    tokenizer that never joins words can reach. Rust et al. (2021), section 4."""
    words = sum(tokens_per_word.values())
    return sum(k * n for k, n in tokens_per_word.items()) / words if words else 0.0


def continued_words(tokens_per_word: Mapping[int, int]) -> float:
    """The proportion of continued words: word occurrences split into two or more tokens
    ({1: 3, 2: 1} -> 1/4). Rust et al. (2021), section 4."""
    words = sum(tokens_per_word.values())
    return sum(n for k, n in tokens_per_word.items() if k >= 2) / words if words else 0.0


# The CJK ideograph blocks BERT's basic tokenizer cuts into one word per character (Devlin et
# al., 2019): scripts written without spaces have no whitespace words to count.
_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002a6df\U0002a700-\U0002ceaf\U0002f800-\U0002fa1f"


#: Where combining marks live: the first two planes and the variation selectors of plane 14.
_MARK_PLANES = (range(0x20000), range(0xE0000, 0xE1000))


@functools.cache
def _word_re() -> re.Pattern[str]:
    # Python's \w has letters and digits but not combining marks (Devanagari vowel signs, Arabic
    # harakat, ...), which belong to the word they sit in. The marks class is built once, lazily
    # (scanning the code points takes ~50 ms, too much for every import of tokreg).
    marks = _ranges(c for plane in _MARK_PLANES for c in plane if unicodedata.category(chr(c)).startswith("M"))
    return re.compile(f"[{_HAN}]|(?:[^\\W_{_HAN}]|[{marks}])+|\\S")


def _ranges(codes: Iterable[int]) -> str:
    """A regex character-class body for the code points `codes` (ascending)."""
    out: list[str] = []
    start = prev = -2
    for c in codes:
        if c != prev + 1:
            if start >= 0:
                out.append(_span(start, prev))
            start = c
        prev = c
    if start >= 0:
        out.append(_span(start, prev))
    return "".join(out)


def _span(a: int, b: int) -> str:
    return re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}"


def words(text: str) -> Counter[str]:
    """The words of `text` and how often each occurs. A word is a run of letters, combining
    marks and digits; every other visible character (punctuation, symbols, `_`) is a word of
    its own; and each CJK ideograph is a word of its own, as in BERT's basic tokenizer (Chinese
    and Japanese are written without spaces). So `"It's 2 o'clock."` has the words
    It ' s 2 o ' clock . and `"中文 text"` has 中 文 text."""
    # Whitespace never joins two words, so each distinct whitespace-separated chunk is cut once
    # (str.split runs in C; the regex on 4 MB of English would take ten times longer).
    rx = _word_re()
    out: Counter[str] = Counter()
    for chunk, n in Counter(text.split()).items():
        for w in rx.findall(chunk):
            out[w] += n
    return out


# -- Rényi efficiency (Zouhar et al., 2023, "Tokenization and the Noiseless Channel", arXiv:2306.16842)


def renyi_efficiency(counts: Iterable[int], vocab_size: int, alpha: float = RENYI_ALPHA) -> float:
    """The Rényi entropy of order α of the unigram token distribution, divided by the largest
    entropy a vocabulary of `vocab_size` tokens can have (log |V|):

        H_α(p) = 1 / (1 - α) · log Σ_t p(t)^α,   efficiency = H_α(p) / log |V|

    where p(t) = count(t) / Σ counts over the tokens of the encoded text. Between 0 and 1;
    higher means the text uses the vocabulary more evenly, penalising both very frequent and
    very rare tokens. Zouhar et al. (2023), with α = 2.5; their tokenization-scorer package
    divides by the number of distinct tokens seen unless given the vocabulary size, tokreg
    always uses the vocabulary size (the paper's |Δ|). Counts [3, 2, 1, 1] with |V| = 4 give
    0.8265."""
    if not (alpha > 0 and alpha != 1 and math.isfinite(alpha)):
        raise InputError(f"the Rényi order α must be positive and not 1, not {alpha!r}")
    ns = sorted(c for c in counts if c > 0)  # sorted: the float sum never depends on input order
    total = sum(ns)
    if total == 0 or vocab_size < 2:
        return 0.0
    power_sum = math.fsum((n / total) ** alpha for n in ns)
    return (math.log(power_sum) / (1 - alpha)) / math.log(vocab_size)


# -- vocabulary ----------------------------------------------------------------------------------


def vocab_utilisation(distinct_tokens: int, vocab_size: int) -> float:
    """The share of the vocabulary the text uses: distinct token ids in its encoding divided
    by the vocabulary size (special tokens included in the size)."""
    return distinct_tokens / vocab_size if vocab_size else 0.0


def unknown_rate(n_unknown: int, n_tokens: int) -> float:
    """The share of tokens that are the unknown token (`[UNK]`, `<unk>`): text the vocabulary
    cannot represent. Encoding ordinary text produces no special token but the unknown one,
    so tokreg counts the special tokens in the encoding. 0 for byte-level and byte-fallback
    vocabularies."""
    return n_unknown / n_tokens if n_tokens else 0.0


def lost_lines(n_lost: int, n_lines: int) -> float:
    """The share of a text's lines that do not decode back byte for byte: each line, with its
    line break, encoded on its own and decoded (training/round_trip.py). 0 for a lossless
    version; a normalizing one (lowercasing, NFKC, collapsed spaces) or one with unknown
    tokens loses the lines it changes."""
    return n_lost / n_lines if n_lines else 0.0


# -- parity (Petrov et al., NeurIPS 2023, "Language Model Tokenizers Introduce Unfairness
#    Between Languages", arXiv:2305.15425) ------------------------------------------------------


def premium(tokens: int, reference_tokens: int) -> float:
    """The tokenization premium of a language relative to a reference language: the tokens of
    a text divided by the tokens of the same content in the reference language (1.0: parity;
    2.0: the language pays twice as many tokens). Petrov et al. define it per pair of parallel
    sentences; over whole parallel texts tokreg divides the totals."""
    return tokens / reference_tokens if reference_tokens else 0.0


def spread(premiums: Sequence[float]) -> float:
    """How unequal a tokenizer is across the languages of a parallel set: the largest premium
    divided by the smallest (the reference's own premium, 1.0, included). 1.0 is parity for
    all; it does not depend on which language is the reference."""
    values = [p for p in premiums if p > 0]
    return max(values) / min(values) if values else 0.0


def gini(values: Sequence[float]) -> float:
    """The Gini coefficient of per-language costs (0.0: every language pays the same; towards
    1.0: one language pays everything): the mean absolute difference over all ordered pairs,
    divided by twice the mean. Foroutan et al. (arXiv 2508.04796) report it over the token
    counts of a parallel set."""
    xs = [float(v) for v in values]
    if len(xs) < 2 or sum(xs) <= 0:
        return 0.0
    mean = sum(xs) / len(xs)
    return sum(abs(a - b) for a in xs for b in xs) / (2 * len(xs) ** 2 * mean)
