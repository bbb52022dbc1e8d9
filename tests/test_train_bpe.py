"""BPE training: the seed articles' worked examples, determinism, and what gets recorded."""

from __future__ import annotations

import random
from pathlib import Path

from tokreg import BpeOptions, Registry


def merges_of(reg: Registry, ref: str, n: int) -> list[str]:
    return [f"{m.left}+{m.right}" for m in reg.show(ref, merges=n).summary.first_merges]


def test_low_lower_newest_widest_with_end_of_word(registry: Registry, tmp_path: Path) -> None:
    corpus = tmp_path / "words.txt"
    corpus.write_text("low " * 5 + "lower " * 2 + "newest " * 6 + "widest " * 3 + "\n")
    opts = BpeOptions(vocab_size=30, char_level=True, end_of_word_suffix="</w>")
    v = registry.train("seed", [corpus], opts)
    assert merges_of(registry, v.ref, 5) == ["e+s", "es+t", "est+</w>", "l+o", "lo+w"]
    assert [m.count for m in registry.show(v.ref, merges=5).summary.first_merges] == [9, 9, 9, 7, 7]
    tok = registry.load(v.ref)
    assert tok.decode(tok.encode("lowest newest")) == "lowest newest"


def test_the_cat_the_car_the_rat(registry: Registry, tmp_path: Path) -> None:
    corpus = tmp_path / "cat.txt"
    corpus.write_text("the cat the car the rat\n")
    v = registry.train("cat", [corpus], BpeOptions(vocab_size=13, char_level=True))
    # Counts: t+h 3, h+e 3, a+t 2, c+a 2, ... Ties go to the smaller left token, then the
    # smaller right token (by UTF-8 bytes): so h+e, then t+he, then a+t before c+a.
    assert merges_of(registry, v.ref, 3) == ["h+e", "t+he", "a+t"]


def test_byte_level_learns_the_first(registry: Registry, tmp_path: Path) -> None:
    corpus = tmp_path / "cat.txt"
    corpus.write_text("the cat the car the rat\n")
    v = registry.train("cat-bytes", [corpus], BpeOptions(vocab_size=259, pattern="gpt2"))
    # Pieces: "the", " the" x2, " cat", " car", " rat": h+e (3) ties t+h (3), "h" < "t".
    # Then four pairs of count 2: " "+"the", " "+"c", "a"+"t", "c"+"a"; the smallest left is
    # " ", and of its two the smaller right is "c".
    assert merges_of(registry, v.ref, 3) == ["h+e", "t+he", " +c"]


def test_same_hash_for_threads_and_shuffled_lines(registry: Registry, small_corpus: Path, tmp_path: Path) -> None:
    lines = [x + "\n" for x in small_corpus.read_text().splitlines()]  # every line terminated
    random.Random(7).shuffle(lines)
    shuffled = tmp_path / "shuffled.txt"
    shuffled.write_text("".join(lines))
    small_corpus.write_text("".join(sorted(lines)))  # the same lines, in another order
    hashes = {
        registry.train("det", [small_corpus], BpeOptions(vocab_size=600, threads=1)).content_hash,
        registry.train("det", [small_corpus], BpeOptions(vocab_size=600, threads=2)).content_hash,
        registry.train("det", [shuffled], BpeOptions(vocab_size=600, threads=2)).content_hash,
    }
    assert len(hashes) == 1
    assert [v.number for v in registry.versions("det")] == [1, 2, 3]


def test_golden_hash_of_a_tiny_tokenizer(registry: Registry, tmp_path: Path) -> None:
    """Pins the canonical serialization: changing it must be a deliberate, versioned act."""
    corpus = tmp_path / "tiny.txt"
    corpus.write_text("aaabdaaabac\nthe cat the car the rat\n")
    v = registry.train("tiny", [corpus], BpeOptions(vocab_size=262, pattern="gpt2", special=("<|end|>",)))
    assert v.content_hash == GOLDEN
    assert v.sha256.startswith("sha256:") and len(v.sha256) == 7 + 64


GOLDEN = "xxh3-128:60f750ce468070f183a458755cd7eaf2"


def test_records_every_merge_and_token_count(registry: Registry, small_corpus: Path) -> None:
    v = registry.train("rec", [small_corpus], BpeOptions(vocab_size=400, special=("<|end|>",)))
    cols, rows = registry.sql(
        "SELECT count(*), min(rank), max(rank), min(count) FROM merges m JOIN versions v ON v.id = m.version_id "
        "WHERE v.name = 'rec'"
    )
    n, lo, hi, smallest = rows[0]
    assert (n, lo, hi) == (400 - 256 - 1, 0, 400 - 256 - 2) and smallest >= 1
    _, rows = registry.sql(
        "SELECT kind, count(*), sum(count) FROM vocab WHERE tokenizer = 'rec@1' GROUP BY kind ORDER BY kind"
    )
    by_kind = {k: (c, s) for k, c, s in rows}
    assert by_kind["byte"][0] == 256 and by_kind["merged"][0] == 143 and by_kind["special"] == (1, None)
    # Token counts are uses in the final segmentation: they sum to the number of tokens the
    # training pieces encode to, which is positive and below the corpus size in bytes.
    assert 0 < by_kind["byte"][1] + by_kind["merged"][1] < small_corpus.stat().st_size
    run = registry.show(v.ref).training_run
    assert run["corpus_bytes"] == small_corpus.stat().st_size
    assert run["corpus_fingerprint"].startswith("xxh3-128:")
    assert run["corpus_files"][0]["name"] == small_corpus.name


def test_min_frequency_stops_early(registry: Registry, small_corpus: Path) -> None:
    v = registry.train("minf", [small_corpus], BpeOptions(vocab_size=5000, min_frequency=50))
    _, rows = registry.sql("SELECT min(count), count(*) FROM merges_view WHERE tokenizer = 'minf@1'")
    assert rows[0][0] >= 50 and v.vocab_size == 256 + rows[0][1]
