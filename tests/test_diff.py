"""`diff`: tokens matched by bytes (not ids), the common merge prefix and first divergence,
re-ranked merges, score changes, config and special tokens, and the effect on real text."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from tokreg import BpeOptions, Registry
from tokreg.data import MergeRow, TokenizerData, TokenRow

from .conftest import Cli, data_file


@pytest.fixture
def grown(registry: Registry, small_corpus: Path) -> Registry:
    registry.train("g", [small_corpus], BpeOptions(vocab_size=300))
    registry.train("g", [small_corpus], BpeOptions(vocab_size=400, special=("<|end|>",)))
    return registry


def _data(reg: Registry, ref: str) -> TokenizerData:
    return reg.stored(ref).data()


def test_a_larger_vocab_extends_the_merge_list(grown: Registry) -> None:
    d = grown.diff("g@1", "g@2")
    assert d.vocab_size.to_json() == {"a": 300, "b": 400, "delta": 100}  # 256 bytes + 143 merges + 1 special
    assert (d.tokens.added, d.tokens.removed, d.tokens.common) == (99, 0, 300)
    m = d.merges
    assert m is not None and (m.a, m.b, m.common_prefix, m.reranked) == (44, 143, 44, 0)
    assert m.first_divergence is not None and m.first_divergence.rank == 44 and m.first_divergence.a is None
    assert list(d.config.special_tokens.added) == ["<|end|>"] and d.config.changed == {}
    assert grown.diff("g@2", "g@2").tokens.added == 0


def test_tokens_are_matched_by_bytes_not_ids(grown: Registry) -> None:
    # The same vocabulary with a special token inserted at id 256: every merged token moves.
    base = _data(grown, "g@1")
    shift = {t.id: (t.id + 1 if t.id >= 256 else t.id) for t in base.tokens}
    tokens = [replace(t, id=shift[t.id]) for t in base.tokens]
    tokens.insert(256, TokenRow(id=256, bytes=b"<|pad|>", kind="special"))
    merges = [MergeRow(m.rank, shift[m.left], shift[m.right], shift[m.result]) for m in base.merges]
    grown.add("shifted", TokenizerData("bpe", base.config, tokens, merges))
    d = grown.diff("g@1", "shifted")
    assert (d.tokens.added, d.tokens.removed, d.tokens.common) == (0, 0, 300)
    assert d.tokens.common_with_other_id == 44
    assert d.merges is not None and d.merges.common_prefix == 44 and d.merges.first_divergence is None
    assert list(d.config.special_tokens.added) == ["<|pad|>"]


def test_swapped_merges_are_reranked_and_the_divergence_is_named(grown: Registry) -> None:
    base = _data(grown, "g@1")
    merges = list(base.merges)
    merges[10], merges[11] = merges[11], merges[10]
    swapped = [replace(m, rank=r) for r, m in enumerate(merges)]
    if any(m.left == merges[10].result or m.right == merges[10].result for m in merges[:11]):
        pytest.skip("merges 10 and 11 depend on each other in this corpus")
    grown.add("swapped", replace(base, merges=swapped))
    m = grown.diff("g@1", "swapped").merges
    assert m is not None and m.common_prefix == 10 and m.reranked == 2
    assert {(r.rank_a, r.rank_b) for r in m.largest_reranks} == {(10, 11), (11, 10)}


def test_different_algorithms_diff_on_what_they_share(grown: Registry, small_corpus: Path) -> None:
    from tokreg import UnigramOptions

    uni = grown.train("uni", [small_corpus], UnigramOptions(vocab_size=400, byte_fallback=True))
    base = _data(grown, uni.ref)
    # The same pieces with one log probability lowered by 0.5: a pure score change.
    victim = next(t.id for t in base.tokens if t.kind == "normal")
    grown.add(
        "uni",
        replace(
            base,
            run=None,
            tokens=[replace(t, score=(t.score or 0) - (0.5 if t.id == victim else 0)) for t in base.tokens],
        ),
    )
    d = grown.diff("g@1", "uni@1")
    assert d.merges is None and d.scores is None
    assert d.tokens.common > 0
    assert d.config.changed["algorithm"].to_json() == {"a": "bpe", "b": "unigram"}
    assert "pattern" in d.config.changed
    s = grown.diff("uni@1", "uni@2").scores
    assert s is not None and s.common == 400 and s.largest_changes[0].delta == pytest.approx(-0.5)


def test_effect_on_real_text(grown: Registry) -> None:
    text = data_file("dr.en.txt")
    d = grown.diff("g@1", "g@2", texts=[text])
    assert d.text is not None
    f = d.text.files[0]
    assert f.bytes == len(text.read_bytes())
    assert f.a["tokens"] == len(grown.load("g@1").encode_ordinary(text.read_text(encoding="utf-8")))
    assert f.b["bytes_per_token"] > f.a["bytes_per_token"]
    # the same numbers `tokreg eval` stores: one implementation of each metric
    ev = grown.evaluate(["g@1", "g@2"], [text])
    assert [s.metrics for s in ev.scores] == [f.a, f.b]
    assert f.delta == {k: f.b[k] - f.a[k] for k in f.a}
    w = d.text.words
    assert 0 < w.changed_distinct <= w.distinct and w.changed_occurrences <= w.occurrences
    top = d.text.top_changed
    assert top and all("".join(r.a) == "".join(r.b) == r.word and r.a != r.b for r in top)
    assert [r.count for r in top] == sorted((r.count for r in top), reverse=True)


def test_cli_diff_table_and_json(run: Cli, small_corpus: Path) -> None:
    run("train", "t", small_corpus, "--vocab-size", 300, "-q")
    run("train", "t", small_corpus, "--vocab-size", 330, "-q", "--pattern", "gpt2")
    table = run("diff", "t@1", "t@2", "--text", small_corpus).output
    for part in (
        "vocabulary",
        "common prefix",
        "first divergence at rank",
        "pattern:",
        "effect on text",
        "fertility",
        "Rényi eff.",
        "words segmented differently",
    ):
        assert part in table
    d = json.loads(run("diff", "t@1", "t@2", "--json", "--top", "3").output)
    assert d["vocab_size"]["delta"] == 30 and len(d["tokens"]["added_examples"]) <= 3
    assert d["config"]["changed"]["pattern"]["b"].startswith("'(?:[sdmt]")
    missing = run("diff", "t@1", "t@2", "--text", small_corpus.parent / "nope.txt", ok=False)
    assert missing.exit_code == 1 and "--text file" in missing.output
