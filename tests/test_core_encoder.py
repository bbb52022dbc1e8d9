"""The Rust core's Python API (`tokreg._core`) driven directly, below the registry: one `Encoder`
class for every algorithm, built from canonical content bytes; tiktoken's ids from the real
cl100k_base vocabulary; one special-token rule for all five kinds; batches equal to one-by-one
encoding; and errors that are tokreg's own exception classes (never text to match)."""

from __future__ import annotations

import base64
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Optional

import pytest

from tokreg import _core
from tokreg.content import serialize as content_bytes
from tokreg.errors import InputError, Interrupted

from .conftest import CORPORA_BY_LANE, data_file

CL100K = _core.PATTERNS["cl100k"]
WHITESPACE = _core.PATTERNS["whitespace"]
ENDOFTEXT = ("<|endoftext|>", 100257)  # cl100k's, past a gap: ranks end at 100255

Token = tuple[int, str, bytes, Optional[float]]  # (id, kind, bytes, score), as content_bytes takes


def read_ranks(path: Path) -> dict[bytes, int]:
    """A `.tiktoken` file parsed here, independently of tokreg."""
    ranks: dict[bytes, int] = {}
    for line in path.read_bytes().splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


# -- (a) byte-level BPE from the real cl100k_base gives tiktoken's ids ------------------------------


@pytest.fixture(scope="module")
def cl100k() -> tuple[_core.Encoder, Any, list[tuple[int, bytes]]]:
    tiktoken = pytest.importorskip("tiktoken")
    ranks = read_ranks(data_file("cl100k_base.tiktoken"))
    ordinary = sorted((r, t) for t, r in ranks.items())
    merges = _core.merges_from_ranks(ordinary)
    tokens: list[Token] = [(r, "byte" if len(t) == 1 else "merged", t, None) for r, t in ordinary]
    tokens.append((ENDOFTEXT[1], "special", ENDOFTEXT[0].encode(), None))
    content = content_bytes("bpe", {"byte_level": True, "pattern": CL100K}, tokens, merges)
    enc = _core.Encoder.byte_bpe(content, CL100K)
    theirs = tiktoken.Encoding("cl100k_test", pat_str=CL100K, mergeable_ranks=ranks, special_tokens=dict([ENDOFTEXT]))
    return enc, theirs, ordinary


def test_cl100k_shape_and_recovered_merges(cl100k: tuple[_core.Encoder, Any, list[tuple[int, bytes]]]) -> None:
    enc, _, ordinary = cl100k
    assert enc.kind == "byte_bpe"
    assert (enc.vocab_size, enc.id_bound) == (len(ordinary) + 1, ENDOFTEXT[1] + 1)
    assert enc.specials() == [ENDOFTEXT]
    # every multi-byte token of cl100k is the merge of two lower-ranked tokens
    merges = _core.merges_from_ranks(ordinary)
    assert len(merges) == len(ordinary) - 256
    assert all(left < result and right < result for left, right, result in merges)
    assert all(enc.token_bytes(left) + enc.token_bytes(right) == enc.token_bytes(z) for left, right, z in merges)


@pytest.mark.parametrize("name", CORPORA_BY_LANE)
def test_cl100k_gives_tiktokens_ids(cl100k: tuple[_core.Encoder, Any, list[tuple[int, bytes]]], name: str) -> None:
    enc, theirs, _ = cl100k
    text = data_file(name).read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    ours = [enc.encode_ordinary(line) for line in lines]
    bad = [i for i, line in enumerate(lines) if ours[i] != theirs.encode_ordinary(line)]
    assert not bad, f"{len(bad)} of {len(lines)} lines differ, first: {lines[bad[0]][:80]!r}"
    assert enc.encode_ordinary(text) == theirs.encode_ordinary(text)
    for threads in (1, 2):
        assert enc.encode_batch(lines, threads=threads) == ours
    assert enc.decode_bytes(enc.encode_ordinary(text)) == text.encode()


def test_cl100k_specials_as_tiktoken(cl100k: tuple[_core.Encoder, Any, list[tuple[int, bytes]]]) -> None:
    enc, theirs, _ = cl100k
    text = "Hello<|endoftext|> world<|endoftext|>"
    assert enc.encode(text, ["<|endoftext|>"]) == theirs.encode(text, allowed_special="all")
    assert enc.encode(text, []) == theirs.encode_ordinary(text)
    assert enc.find_special(text, ["<|endoftext|>", "<|nope|>"]) == "<|endoftext|>"
    assert enc.decode_bytes([ENDOFTEXT[1]]) == b"<|endoftext|>"


# -- (b) the one special-token rule, for each of the five kinds --------------------------------------


def byte_bpe() -> _core.Encoder:
    tokens: list[Token] = [(b, "byte", bytes([b]), None) for b in range(256)]
    tokens += [(256, "merged", b"ab", None), (257, "merged", b" ab", None)]
    tokens += [(300, "special", b"<|end|>", None), (301, "special", b"<|end|>x", None)]
    content = content_bytes("bpe", {"byte_level": True, "pattern": CL100K}, tokens, [(97, 98, 256), (32, 256, 257)])
    return _core.Encoder.byte_bpe(content, CL100K)


def char_bpe() -> _core.Encoder:
    # The alphabet (kind char) first, sorted by UTF-8 bytes; merges; then the specials.
    chars = ["</w>", "e", "l", "o", "w"]
    merged = ["lo", "low", "low</w>"]
    specials = ["<unk>", "<sep>"]
    texts = chars + merged + specials
    kinds = ["char"] * len(chars) + ["merged"] * len(merged) + ["special"] * len(specials)
    tokens: list[Token] = [(i, k, t.encode(), None) for i, (t, k) in enumerate(zip(texts, kinds))]
    config = {"byte_level": False, "pattern": WHITESPACE, "end_of_word_suffix": "</w>", "unk_token": "<unk>"}
    content = content_bytes("bpe", config, tokens, [(2, 3, 5), (5, 4, 6), (6, 0, 7)])
    return _core.Encoder.char_bpe(content, WHITESPACE, end_of_word="</w>", unk_token="<unk>")


def wordpiece() -> _core.Encoder:
    vocab = ["[UNK]", "[CLS]", "[SEP]", "h", "w", "##s", "hello", "world"]
    tokens: list[Token] = [
        (i, "special" if t.startswith("[") else "char" if len(t.lstrip("#")) == 1 else "merged", t.encode(), None)
        for i, t in enumerate(vocab)
    ]
    norm: dict[str, Any] = {
        "clean_text": True,
        "handle_chinese_chars": True,
        "strip_accents": None,
        "lowercase": True,
        "unicode_form": None,
    }
    config = {
        "normalizer": norm,
        "pre_tokenizer": "bert",
        "continuing_prefix": "##",
        "unk_token": "[UNK]",
        "max_input_chars_per_word": 100,
    }
    return _core.Encoder.wordpiece(content_bytes("wordpiece", config, tokens, []), "[UNK]", **norm)


def sp_pieces(normal: Sequence[tuple[str, float]]) -> list[Token]:
    """<unk>, <s>, </s> (SentencePiece's layout), then the normal pieces with their scores."""
    pieces = [("<unk>", 0.0, "unknown"), ("<s>", 0.0, "control"), ("</s>", 0.0, "control")]
    pieces += [(t, s, "normal") for t, s in normal]
    return [(i, kind, t.encode(), score) for i, (t, score, kind) in enumerate(pieces)]


SP_CONFIG = {
    "normalizer": {
        "name": "identity",
        "add_dummy_prefix": True,
        "remove_extra_whitespaces": False,
        "escape_whitespaces": True,
    },
    "byte_fallback": False,
    "unk_token": "<unk>",
}


def unigram() -> _core.Encoder:
    normal = [
        ("▁", -2.0),
        ("a", -3.0),
        ("b", -3.0),
        ("ab", -4.0),
        ("▁ab", -3.5),
        ("<", -5.0),
        (">", -5.0),
        ("s", -5.0),
        ("/", -5.0),
    ]
    return _core.Encoder.unigram(content_bytes("unigram", SP_CONFIG, sp_pieces(normal), []))


def sp_bpe() -> _core.Encoder:
    normal = [
        ("▁", -1.0),
        ("a", -1.0),
        ("b", -1.0),
        ("ab", -0.5),
        ("▁ab", -0.2),
        ("<", -3.0),
        (">", -3.0),
        ("s", -3.0),
        ("/", -3.0),
    ]
    config = {**SP_CONFIG, "model": "sentencepiece"}
    return _core.Encoder.sp_bpe(content_bytes("bpe", config, sp_pieces(normal), []))


# kind -> (constructor, the special to test with, its id, the text on either side of it)
KINDS: dict[str, tuple[Any, str, int, str]] = {
    "byte_bpe": (byte_bpe, "<|end|>", 300, "ab ab"),
    "char_bpe": (char_bpe, "<sep>", 9, "low low"),
    "wordpiece": (wordpiece, "[SEP]", 2, "Hello worlds"),
    "unigram": (unigram, "</s>", 2, "ab ab"),
    "sp_bpe": (sp_bpe, "</s>", 2, "ab ab"),
}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_one_special_token_rule_for_every_kind(kind: str) -> None:
    make, special, sid, side = KINDS[kind]
    enc = make()
    assert enc.kind == kind
    assert (special, sid) in enc.specials()
    assert enc.specials() == sorted(enc.specials(), key=lambda s: s[1])
    text = f"{side}{special}{side}"
    part = enc.encode_ordinary(side)
    assert part and sid not in part
    # each segment is encoded as an independent text, the special is its id
    assert enc.encode(text, [special]) == part + [sid] + part
    assert enc.encode(special, [special]) == [sid]
    assert enc.encode(special + special, [special]) == [sid, sid]
    # not allowed (or not a special at all): ordinary text
    assert enc.encode(text, []) == enc.encode_ordinary(text)
    assert enc.encode(text, ["not-a-special"]) == enc.encode_ordinary(text)
    assert sid not in enc.encode_ordinary(text)
    assert enc.find_special(f"x {special} y", ["not-a-special", special]) == special
    assert enc.find_special(side, [special]) is None
    texts = [text, side, "", special, f"{special}{side}", side * 3]
    for threads in (0, 1, 2):
        assert enc.encode_batch(texts, allowed_special=[special], threads=threads) == [
            enc.encode(t, [special]) for t in texts
        ]
        assert enc.encode_batch(texts, threads=threads) == [enc.encode_ordinary(t) for t in texts]


def test_byte_bpe_longest_special_wins_at_one_position() -> None:
    enc = byte_bpe()
    assert enc.encode("a<|end|>xb", ["<|end|>", "<|end|>x"]) == [97, 301, 98]
    assert enc.encode("a<|end|>xb", ["<|end|>"]) == [97, 300, 120, 98]
    assert enc.find_special("a<|end|>x", ["<|end|>", "<|end|>x"]) == "<|end|>x"


def test_normalize_and_decode_per_kind() -> None:
    assert byte_bpe().normalize("A  b") == "A  b"
    assert wordpiece().normalize("Héllo") == "hello"
    assert unigram().normalize("a b") == "▁a▁b"
    wp = wordpiece()
    assert wp.decode_bytes(wp.encode_ordinary("hello worlds")) == b"hello worlds"
    for enc in (unigram(), sp_bpe()):
        # a control piece decodes to nothing; the segment after it had its own dummy prefix (▁)
        assert enc.decode_bytes(enc.encode("ab</s>ab", ["</s>"])) == b"ab ab"
    cb = char_bpe()
    assert cb.decode_bytes(cb.encode_ordinary("low low")) == b"low low"


def test_unigram_nbest_and_sample() -> None:
    enc = unigram()
    best = enc.nbest("ab", 3)
    assert best[0][0] == enc.encode_ordinary("ab") and len(best) == 3
    assert [s for _, s in best] == sorted((s for _, s in best), reverse=True)
    assert enc.sample("ab ab", 0.5, 7) == enc.sample("ab ab", 0.5, 7)


# -- (c) errors are tokreg's classes ----------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_unknown_ids_raise_input_error(kind: str) -> None:
    enc = KINDS[kind][0]()
    for bad in ([10**6], [0, -1], [enc.id_bound]):
        with pytest.raises(InputError):
            enc.decode_bytes(bad)
    for bad_id in (-1, 10**6, 2**40, enc.id_bound):
        with pytest.raises(InputError):
            enc.token_bytes(bad_id)
    assert enc.token_bytes(0)


@pytest.mark.parametrize("kind", ["byte_bpe", "char_bpe", "wordpiece", "sp_bpe"])
def test_nbest_and_sample_need_unigram(kind: str) -> None:
    enc = KINDS[kind][0]()
    with pytest.raises(InputError):
        enc.nbest("ab", 2)
    with pytest.raises(InputError):
        enc.sample("ab", 0.1, 1)


def test_bad_patterns_content_and_vocabularies_raise_input_error() -> None:
    with pytest.raises(InputError):
        _core.check_pattern("(")
    assert _core.check_pattern(CL100K) == CL100K
    with pytest.raises(InputError):
        _core.Encoder.byte_bpe(b"not content", CL100K)
    content = content_bytes("bpe", {}, [(b, "byte", bytes([b]), None) for b in range(256)], [])
    with pytest.raises(InputError):
        _core.Encoder.byte_bpe(content, "(")
    missing = [(b, bytes([b])) for b in range(255)]  # no token for byte 0xff
    with pytest.raises(InputError):
        _core.merges_from_ranks(missing)
    with pytest.raises(InputError):
        _core.merges_from_ranks([(b, bytes([b])) for b in range(256)] + [(256, b"a")])  # bytes twice
    with pytest.raises(InputError):
        _core.Encoder.wordpiece(content_bytes("wordpiece", {}, [(0, "char", b"a", None)], []), "[UNK]")
    with pytest.raises(InputError):
        _core.Encoder.wordpiece(
            content_bytes("wordpiece", {}, [(0, "special", b"[UNK]", None)], []), "[UNK]", unicode_form="nfx"
        )


def test_lone_surrogates_raise_unicode_encode_error() -> None:
    enc = byte_bpe()
    with pytest.raises(UnicodeEncodeError):
        enc.encode_ordinary("a\ud800")
    with pytest.raises(UnicodeEncodeError):
        enc.encode_batch(["fine", "a\ud800"])
    # A surrogate in a str of each width (UCS-2, and UCS-4 beside a character past U+FFFF).
    for bad in ["日本\udfff", "\U0001f600\ud800"]:
        for threads in (1, 2):
            with pytest.raises(UnicodeEncodeError):
                enc.encode_batch(["fine", "héllo", bad], threads=threads)
            with pytest.raises(UnicodeEncodeError):
                enc.count_batch(["fine", bad], threads=threads)
            with pytest.raises(UnicodeEncodeError):
                enc.encode_batch_flat([bad], threads=threads)


def test_large_batches_of_every_str_width_equal_one_by_one_and_hold_exact_references(
    cl100k: tuple[_core.Encoder, Any, list[tuple[int, bytes]]],
) -> None:
    # Over 65,536 ids: the lists are filled on the pool's threads (`IdInts::lists_in_pool`), and
    # the texts read from each of CPython's str widths (ASCII, Latin-1, UCS-2, UCS-4) off the GIL.
    enc, theirs, _ = cl100k
    kinds = ["plain words and code(x) ", "héllo wörld, ça va ", "日本語のテキスト、中文 ", "emoji 😀 and 𝔘𝔫𝔦 "]
    texts = [(kinds[i % 4] + str(i) + " ") * 60 for i in range(240)]
    texts[:4] = [type("Sub", (str,), {})(t) for t in texts[:4]]  # a str subclass: not a compact str
    want = [theirs.encode_ordinary(t) for t in texts]
    assert sum(map(len, want)) > 65_536
    for threads in (1, 2, 0):
        assert enc.encode_batch(texts, threads=threads) == want
        assert enc.count_batch(texts, threads=threads) == [len(w) for w in want]
    ids, offsets = enc.encode_batch_flat(texts, threads=2)
    assert len(ids) == 4 * sum(map(len, want)) and len(offsets) == 8 * (len(texts) + 1)
    # Each list slot holds one reference to its int, no more and no fewer.
    first = enc.encode_batch(texts, threads=2)
    some = next(i for i in first[0] if i > 256)  # not one of CPython's shared small ints
    held = first[0][first[0].index(some)]
    before = sys.getrefcount(held)
    again = enc.encode_batch(texts, threads=2)
    assert sys.getrefcount(held) == before + sum(x.count(some) for x in again)
    assert all(x is held for ids in again for x in ids if x == some)
    del again
    assert sys.getrefcount(held) == before


CORPUS = [b"the cat the car the rat\n" * 20, b"low lower newest widest\n" * 20]


def counted(counter: _core.Counter) -> _core.Counts:
    """CORPUS through a core counter: each part fed and ended as one input."""
    for part in CORPUS:
        counter.feed(part)
        counter.end_input()
    return counter.finish()


def test_training_below_the_alphabet_raises_input_error_with_its_numbers() -> None:
    pieces = counted(_core.Counter.pieces(CL100K))
    with pytest.raises(InputError) as e:
        _core.train_bpe(pieces, 10)
    assert (e.value.requested, e.value.needed) == (10, 256)  # type: ignore[attr-defined]
    with pytest.raises(InputError):
        _core.train_bpe(counted(_core.Counter.pieces(WHITESPACE)), 5, char_level=True)
    with pytest.raises(InputError):
        _core.Counter.pieces("(")
    words = counted(_core.Counter.sentencepiece())
    with pytest.raises(InputError) as e:
        _core.train_unigram(words, 5)
    assert e.value.requested == 5  # type: ignore[attr-defined]
    with pytest.raises(InputError) as e:
        _core.train_unigram(words, 5000)
    assert e.value.requested == 5000 and e.value.reachable < 5000  # type: ignore[attr-defined]
    with pytest.raises(InputError):
        _core.Counter.bert(unicode_form="nfx")


def test_counts_round_trip_and_add_up_past_two_to_the_32() -> None:
    big = 5 << 32
    a = _core.Counts.from_pairs([(b"a", big), (b"b", 1)])
    b = _core.Counts.from_bytes(_core.Counts.from_pairs([(b"a", big), (b"c", 2**32 - 1)]).to_bytes())
    total = _core.Counts.sum([a, b])
    assert total.items() == [(b"a", 10 << 32), (b"b", 1), (b"c", 2**32 - 1)]
    assert total.stats.total == (10 << 32) + 2**32
    # Training sees the 64-bit counts: the first merge is chosen with its exact count.
    merges = _core.train_bpe(_core.Counts.from_pairs([(b"ab", big), (b"cd", big - 1)]), 258).merges
    assert merges == [(97, 98, 256, big), (99, 100, 257, big - 1)]


def trainers() -> dict[str, Any]:
    """Each trainer on the small corpus, with the fields its result must have."""
    pieces = counted(_core.Counter.pieces(CL100K))
    words = counted(_core.Counter.pieces(WHITESPACE))
    bert = counted(_core.Counter.bert(lowercase=True))
    sp = counted(_core.Counter.sentencepiece())
    return {
        "bpe": lambda **kw: _core.train_bpe(pieces, 270, **kw),
        "bpe-char": lambda **kw: _core.train_bpe(words, 30, char_level=True, end_of_word="</w>", **kw),
        "wordpiece": lambda **kw: _core.train_wordpiece(bert, 40, ["[UNK]"], **kw),
        "unigram": lambda **kw: _core.train_unigram(sp, 18, control_pieces=["<s>"], **kw),
    }


KEYS = {
    "bpe": {
        "tokens",
        "token_counts",
        "merges",
        "merge_columns",
        "snapshots",
        "alphabet_size",
        "distinct_pieces",
        "merge_seconds",
    },
    "wordpiece": {"tokens", "merges", "distinct_words", "merge_seconds"},
    "unigram": {"pieces", "rounds", "sized", "distinct_words", "train_seconds"},
}


def fields(result: Any) -> set[str]:
    """The fields of a trainer's result (a frozen class of the core)."""
    return {k for k in dir(type(result)) if not k.startswith("_")}


def without_times(result: Any) -> dict[str, Any]:
    return {k: getattr(result, k) for k in fields(result) if not k.endswith("_seconds")}


@pytest.mark.parametrize("name", sorted(trainers()))
def test_progress_callbacks(name: str) -> None:
    train = trainers()[name]
    plain = train()
    assert fields(plain) == KEYS[name.split("-")[0]]
    # a callback that returns (anything) never changes the result, whatever the threads
    calls: list[tuple[str, int, int]] = []

    def record(phase: str, done: int, total: int) -> bool:
        calls.append((phase, done, total))
        return False

    for threads in (1, 2):
        assert without_times(train(threads=threads, progress=record)) == without_times(plain)
    assert calls

    # an exception the callback raises is re-raised unchanged: Ctrl-C stays KeyboardInterrupt
    def interrupt(phase: str, done: int, total: int) -> None:
        raise KeyboardInterrupt

    for threads in (0, 2):
        with pytest.raises(KeyboardInterrupt):
            train(progress=interrupt, threads=threads)

    class Boom(Exception):
        pass

    boom = Boom("from the callback")

    def explode(phase: str, done: int, total: int) -> None:
        raise boom

    with pytest.raises(Boom) as e:
        train(progress=explode)
    assert e.value is boom
    assert not issubclass(Interrupted, KeyboardInterrupt)  # the core never turns Ctrl-C into its own class


# -- the WordPiece normalizer equals Hugging Face's on every code point ------------------------------


@pytest.mark.parametrize("option", ["lowercase", "strip_accents"])
@pytest.mark.slow
def test_wordpiece_normalizer_matches_hf_on_every_code_point(option: str) -> None:
    normalizers = pytest.importorskip("tokenizers.normalizers")
    flags: dict[str, Any] = {
        "clean_text": False,
        "handle_chinese_chars": False,
        "strip_accents": False,
        "lowercase": False,
        option: True,
    }
    theirs = normalizers.BertNormalizer(**flags)
    ours = _core.Encoder.wordpiece(
        content_bytes("wordpiece", {}, [(0, "special", b"[UNK]", None)], []), "[UNK]", **flags
    )
    # One code point per line: "\n" is a starter, so NFD cannot reorder marks across it.
    cps = [c for c in range(0x110000) if not 0xD800 <= c < 0xE000 and chr(c) not in "\n\r"]
    want = theirs.normalize_str("\n".join(map(chr, cps))).split("\n")
    got = ours.normalize("\n".join(map(chr, cps))).split("\n")
    assert len(got) == len(want) == len(cps)
    bad = [f"U+{cps[i]:04X}" for i in range(len(cps)) if got[i] != want[i]]
    assert not bad, f"{len(bad)} code points differ: {bad[:20]}"
