"""Evaluating versions on texts: reading the texts, measuring each version on each with the
functions of metrics.py, the parity of parallel texts, and the typed results `Registry.evaluate`
returns. Storing and reading back the results is the store's (store/evaluations.py).

    >>> ev = reg.evaluate(["cl100k_base", "o200k_base"], ["dr.en.txt", "dr.zh-cn.txt"],
    ...                   languages=["en", "zh-cn"], parallel=True)
    >>> ev.scores[0].metrics["bytes_per_token"]          # cl100k_base on dr.en.txt
    4.4637...
    >>> ev.parity[0].premiums
    {'en': 1.0, 'zh-cn': 1.2268...}

A text is identified like a training corpus (training/corpus/fingerprint.py): xxh3-128 over its file name, size
and the xxh3-128 of its bytes. Words are cut by `metrics.words`; each distinct word is encoded
as it appears in running text, after a fixed one-letter word and a space whose tokens are then
subtracted (`word_tokens`), so a word is measured the same way for tokenizers that fold the
space into the next token (GPT-style byte-level BPE) and for those that mark where words start
(SentencePiece's `▁`) or continue (WordPiece's `##`).
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, Optional, Union

import xxhash
from sqlalchemy import Connection, Engine

from ..data import VersionInfo
from ..encoding.tokenizer import Tokenizer
from ..errors import InputError
from ..files import read_text
from ..store import evaluations
from ..store.evaluations import TextRow
from ..training import round_trip
from ..training.corpus import fingerprint as fingerprint_files  # the corpus fingerprint, applied to texts
from . import metrics

PathLike = Union[str, os.PathLike[str]]  # not a string: typing would compile it at import

#: Words are encoded after this: one word and a space, whose own tokens are subtracted.
CONTEXT = "a"
_LANG_RE = re.compile(r"^[A-Za-z]{2,8}([_-][A-Za-z0-9]{1,8})*$")


@dataclass(frozen=True)
class Text:
    """A text read for evaluation: its content, what identifies it, and its words."""

    name: str  # the file's name (part of the fingerprint, as for corpora)
    language: Optional[str]
    text: str
    fingerprint: str
    bytes: int
    words: Counter[str] = field(repr=False)

    @property
    def characters(self) -> int:
        return len(self.text)

    @classmethod
    def of(cls, name: str, text: str, language: Optional[str] = None) -> Text:
        """A text given as a string (a playground or a diff in a browser), identified like a file
        of that name with that content."""
        raw = text.encode("utf-8")
        fp = fingerprint_files([{"name": name, "size": len(raw), "xxh3": xxhash.xxh3_128_hexdigest(raw)}])
        return cls(name=name, language=language, text=text, fingerprint=fp, bytes=len(raw), words=metrics.words(text))


def check_language(code: str) -> str:
    if not isinstance(code, str) or not _LANG_RE.match(code):
        raise InputError(f"--lang {code!r} is not a language code; use a code such as en, zh, pt-BR or zh_CN")
    return code


def read_texts(paths: Sequence[PathLike], languages: Optional[Sequence[Optional[str]]] = None) -> list[Text]:
    """Reads every text, refusing (with one line naming it) a file that is missing, not UTF-8
    or empty, the same file twice, and a number of languages other than the number of texts."""
    if not paths:
        raise InputError("no texts given; name at least one file with --text FILE")
    if languages is not None and len(languages) != len(paths):
        raise InputError(
            f"--lang was given {len(languages)} time(s) for {len(paths)} --text file(s); give one --lang per "
            "--text, in the same order (or none)"
        )
    langs = list(languages) if languages is not None else [None] * len(paths)
    out: list[Text] = []
    seen: dict[str, str] = {}
    for path, lang in zip(paths, langs):
        where = os.fspath(path)
        text = read_text(path, "--text file")
        if not text.strip():
            raise InputError(f"--text file {where!r} is empty; give a file that contains text")
        t = Text.of(os.path.basename(where), text, check_language(lang) if lang is not None else None)
        if t.fingerprint in seen:
            raise InputError(f"--text file {where!r} is the same text as {seen[t.fingerprint]!r}; give each text once")
        seen[t.fingerprint] = where
        out.append(t)
    return out


# -- measuring ----------------------------------------------------------------------------------


def word_tokens(tok: Tokenizer, words: Counter[str]) -> Counter[int]:
    """The histogram metrics.fertility takes: number of tokens -> word occurrences that took that
    many. Each distinct word is encoded once, as `CONTEXT + " " + word`, minus the tokens of
    `CONTEXT` alone."""
    distinct = list(words)
    base = len(tok.encode_ordinary(CONTEXT))
    encoded = tok.encode_ordinary_batch([f"{CONTEXT} {w}" for w in distinct])
    hist: Counter[int] = Counter()
    for w, ids in zip(distinct, encoded):
        hist[max(len(ids) - base, 0)] += words[w]
    return hist


def measure(tok: Tokenizer, text: Text) -> dict[str, float]:
    """Every metric of `metrics.METRICS` for one tokenizer on one text. The text is encoded
    whole, with special-token strings in it treated as ordinary text."""
    ids = tok.encode_ordinary(text.text)
    n = len(ids)
    counts = Counter(ids)
    specials = set(tok.special_tokens.values())
    hist = word_tokens(tok, text.words)
    trip = round_trip.measure(tok, [text.text.encode("utf-8")], whole=True)
    return {
        "tokens": float(n),
        "bytes_per_token": metrics.bytes_per_token(text.bytes, n),
        "chars_per_token": metrics.chars_per_token(text.characters, n),
        "fertility": metrics.fertility(hist),
        "continued_words": metrics.continued_words(hist),
        "renyi_efficiency": metrics.renyi_efficiency(counts.values(), tok.vocab_size),
        "vocab_utilisation": metrics.vocab_utilisation(len(counts), tok.vocab_size),
        "unknown_rate": metrics.unknown_rate(sum(c for i, c in counts.items() if i in specials), n),
        "lost_lines": metrics.lost_lines(trip.lost_lines, trip.lines),
    }


def deltas(a: dict[str, float], b: dict[str, float]) -> dict[str, float]:
    """b - a for every metric both have (what `diff --text` shows)."""
    return {k: b[k] - a[k] for k in a if k in b}


# -- parity -------------------------------------------------------------------------------------


def check_parallel(texts: Sequence[Text], reference: Optional[str]) -> str:
    """The reference language of a parallel set, after checking the set: two or more texts,
    each with its own language, and the reference among them (default: the first text's)."""
    if len(texts) < 2:
        raise InputError("--parallel needs two or more --text files, the same content in different languages")
    langs = [t.language for t in texts]
    if any(lang is None for lang in langs):
        raise InputError("--parallel needs a --lang for every --text file, e.g. --text en.txt --lang en")
    dupes = sorted({lang for lang in langs if langs.count(lang) > 1 and lang is not None})
    if dupes:
        raise InputError(f"--parallel texts need one language each; {', '.join(dupes)} is given twice")
    ref = reference if reference is not None else langs[0]
    assert ref is not None
    if ref not in langs:
        raise InputError(
            f"--reference {ref!r} is not the --lang of any text; the languages are {', '.join(map(str, langs))}"
        )
    return ref


def parallel_set(texts: Sequence[Text]) -> tuple[str, str]:
    """(fingerprint, name) of a set of parallel texts: the corpus fingerprint of its texts in
    fingerprint order (the same set in any order is the same set)."""
    members = sorted(texts, key=lambda t: t.fingerprint)
    records = [{"name": t.name, "size": t.bytes, "xxh3": t.fingerprint.rpartition(":")[2]} for t in members]
    return fingerprint_files(records), " + ".join(t.name for t in texts)


# -- results ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TextInfo:
    name: str
    fingerprint: str
    language: Optional[str]
    bytes: int
    characters: int
    words: int

    @classmethod
    def of(cls, t: Text) -> TextInfo:
        return cls(t.name, t.fingerprint, t.language, t.bytes, t.characters, sum(t.words.values()))


@dataclass(frozen=True)
class Score:
    """One version measured on one text. `stored` is True when the values were read from the
    registry (measured earlier) rather than measured now."""

    ref: str
    name: str
    vocab_size: int
    text: TextInfo
    metrics: dict[str, float]
    stored: bool
    computed_at: datetime

    @property
    def lossless(self) -> bool:
        """Whether the version keeps this text: no unknown token, every line decodes back."""
        return not any(self.metrics.get(m, 0.0) > 0 for m in metrics.LOSS)

    def to_json(self) -> dict[str, Any]:
        return {
            "ref": self.ref,
            "vocab_size": self.vocab_size,
            "text": self.text.name,
            "language": self.text.language,
            "text_fingerprint": self.text.fingerprint,
            "bytes": self.text.bytes,
            "characters": self.text.characters,
            "words": self.text.words,
            "metrics": self.metrics,
            "lossless": self.lossless,
            "stored": self.stored,
            "computed_at": self.computed_at.isoformat(),
        }


@dataclass(frozen=True)
class Parity:
    """A version's premium per language of a parallel set (language -> tokens / the
    reference's tokens) and the spread (largest premium / smallest)."""

    ref: str
    reference: str
    premiums: dict[str, float]
    spread: float

    def to_json(self) -> dict[str, Any]:
        return {"ref": self.ref, "reference": self.reference, "premiums": self.premiums, "spread": self.spread}


@dataclass(frozen=True)
class Evaluation:
    """What `Registry.evaluate` returns: one Score per version and text (versions in the order
    given, texts in the order given within each), and one Parity per version for parallel texts."""

    scores: list[Score]
    parity: list[Parity] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        marks = self.marks()
        scores = []
        for s in self.scores:
            mine = [(m.name, marks.get((s.ref, s.text.fingerprint, m.name))) for m in metrics.METRICS]
            scores.append(
                {
                    **s.to_json(),
                    "best": [name for name, mark in mine if mark == "best"],
                    "lossy_ahead": [name for name, mark in mine if mark == "lossy_ahead"],
                }
            )
        return {"scores": scores, "parity": [p.to_json() for p in self.parity]}

    def marks(self) -> dict[tuple[str, str, str], str]:
        """(ref, text fingerprint, metric) -> "best" (the table's `*`) or "lossy_ahead" (its `!`).
        A lossy version is never "best" on a compression column of a text that another version
        keeps, not even in a tie."""
        best, ahead = self.best(), self.lossy_ahead()
        kept = {fp for fp, group in self._by_text().items() if any(s.lossless for s in group)}
        out: dict[tuple[str, str, str], str] = {}
        for s in self.scores:
            fp = s.text.fingerprint
            for m in metrics.METRICS:
                key = (s.ref, fp, m.name)
                if key in ahead:
                    out[key] = "lossy_ahead"
                elif best.get((fp, m.name)) == s.metrics[m.name] and (
                    s.lossless or not m.compression or fp not in kept
                ):
                    out[key] = "best"
        return out

    def _by_text(self) -> dict[str, list[Score]]:
        by_text: dict[str, list[Score]] = {}
        for s in self.scores:
            by_text.setdefault(s.text.fingerprint, []).append(s)
        return by_text

    def best(self) -> dict[tuple[str, str], float]:
        """(text fingerprint, metric) -> the best value among the versions measured on that
        text, for every metric where at least two versions were compared and differ. On a
        compression column the best is taken among the versions that keep the text (no unknown
        token, every line decodes back) when there is one: fewer tokens bought by losing text
        are not better compression (`lossy_ahead` names those)."""
        out: dict[tuple[str, str], float] = {}
        for fp, group in self._by_text().items():
            if len(group) < 2:
                continue
            kept = [s for s in group if s.lossless]
            for m in metrics.METRICS:
                values = [s.metrics[m.name] for s in group]
                if len(set(values)) > 1:  # a tie among all is no one's best
                    among = [s.metrics[m.name] for s in (kept if m.compression and kept else group)]
                    out[(fp, m.name)] = max(among) if m.higher_is_better else min(among)
        return out

    def lossy_ahead(self) -> set[tuple[str, str, str]]:
        """(ref, text fingerprint, metric) of every lossy version whose value on a compression
        column beats the best of the versions that keep that text: what the table marks `!`."""
        best = self.best()
        out: set[tuple[str, str, str]] = set()
        for fp, group in self._by_text().items():
            if not any(s.lossless for s in group):
                continue
            for m in metrics.METRICS:
                b = best.get((fp, m.name))
                if not m.compression or b is None:
                    continue
                for s in group:
                    v = s.metrics[m.name]
                    if not s.lossless and (v > b if m.higher_is_better else v < b):
                        out.add((s.ref, fp, m.name))
        return out


# -- the run: stored results first, then the missing ones measured and stored in one transaction --


def run(
    engine: Engine,
    versions: Sequence[VersionInfo],
    texts: Sequence[Text],
    *,
    load: Callable[[VersionInfo], Tokenizer],
    reference: Optional[str] = None,
    recompute: bool = False,
) -> Evaluation:
    """Scores every version on every text: read from the registry when it holds them (unless
    `recompute`), else measured; then everything new is stored in one transaction, so an
    interrupted run stores nothing. With `reference` (a language of `texts`, checked by
    `check_parallel`) the texts are parallel and each version gets its premiums and spread."""
    names = [m.name for m in metrics.METRICS]
    cached: dict[tuple[int, str], evaluations.StoredScores] = {}
    if not recompute:
        with engine.connect() as conn:
            for v in versions:
                for t in texts:
                    hit = evaluations.scores(conn, v.id, t.fingerprint, names)
                    if hit is not None:
                        cached[(v.id, t.fingerprint)] = hit
    now = datetime.now(timezone.utc)
    scores: list[Score] = []
    fresh: list[tuple[int, str, dict[str, float]]] = []
    for v in versions:
        tok: Optional[Tokenizer] = None
        for t in texts:
            hit = cached.get((v.id, t.fingerprint))
            if hit is not None:
                values, stored, at = {n: hit.values[n] for n in names}, True, hit.computed_at
            else:
                tok = tok or load(v)
                values, stored, at = measure(tok, t), False, now
                fresh.append((v.id, t.fingerprint, values))
            scores.append(Score(v.ref, v.name, v.vocab_size, TextInfo.of(t), values, stored, at))
    parity = _parity(versions, texts, scores, reference) if reference is not None else []

    def store(conn: Connection) -> None:
        for t in texts:
            evaluations.save_text(
                conn, TextRow(t.fingerprint, t.name, t.language, t.bytes, t.characters, sum(t.words.values()))
            )
        for vid, fp, values in fresh:
            evaluations.save_scores(conn, vid, fp, values, at=now)
        if reference is not None:
            _save_parity(conn, versions, texts, parity, reference, now)

    evaluations.write(engine, store)
    return Evaluation(scores=scores, parity=parity)


def _parity(
    versions: Sequence[VersionInfo], texts: Sequence[Text], scores: Sequence[Score], reference: str
) -> list[Parity]:
    tokens = {(s.ref, s.text.language): s.metrics["tokens"] for s in scores}
    out = []
    for v in versions:
        ref_tokens = int(tokens[(v.ref, reference)])
        premiums = {str(t.language): metrics.premium(int(tokens[(v.ref, t.language)]), ref_tokens) for t in texts}
        out.append(Parity(v.ref, reference, premiums, metrics.spread(list(premiums.values()))))
    return out


def _save_parity(
    conn: Connection,
    versions: Sequence[VersionInfo],
    texts: Sequence[Text],
    parity: Sequence[Parity],
    reference: str,
    now: datetime,
) -> None:
    ref_fp = next(t.fingerprint for t in texts if t.language == reference)
    set_fp, set_name = parallel_set(texts)
    evaluations.save_text(
        conn,
        TextRow(
            set_fp,
            set_name,
            None,
            sum(t.bytes for t in texts),
            sum(t.characters for t in texts),
            sum(sum(t.words.values()) for t in texts),
            parts=sorted(t.fingerprint for t in texts),
        ),
    )
    for v, p in zip(versions, parity):
        for t in texts:
            values = {metrics.PREMIUM.name: p.premiums[str(t.language)]}
            evaluations.save_scores(conn, v.id, t.fingerprint, values, reference=ref_fp, at=now)
        evaluations.save_scores(conn, v.id, set_fp, {metrics.SPREAD.name: p.spread}, reference=ref_fp, at=now)
