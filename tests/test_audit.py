"""`tokreg audit` / `Registry.audit`: a vocabulary built to hold an unreachable token and an
undecodable one is reported so; training counts flag unused and rarely merged tokens; the
audit is stored, read back, and `verify` does not need it."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from tokreg import Registry, UnigramOptions, WordPieceOptions
from tokreg.data import TokenizerData
from tokreg.evaluation.audit import visible

from .conftest import Cli
from .tiny import tiktoken_file

# 256 = " b"; 257 = "a b", which the cl100k pattern always cuts into "a" and " b" (unreachable);
# 258 = the first two bytes of 中 (e4 b8 ad), not UTF-8 on their own (undecodable); 259 a special.
EXTRA = [b" b", b"a b", b"\xe4\xb8"]


@pytest.fixture
def tiny(registry: Registry, tmp_path: Path) -> Registry:
    path = tiktoken_file(tmp_path / "tiny.tiktoken", EXTRA)
    registry.import_tiktoken("tiny", path, pattern="cl100k", specials={"<|end|>": 259})
    return registry


def test_the_unreachable_and_the_undecodable_token_are_found(tiny: Registry) -> None:
    r = tiny.audit("tiny")
    by_id = {t.id: t for t in r.tokens}
    assert (by_id[257].category, by_id[257].reencoded) == ("unreachable", [97, 256])
    assert by_id[258].category == "undecodable" and by_id[258].shown == "\\xe4\\xb8"
    assert by_id[259].category == "special"
    assert by_id[256].category == by_id[97].category == by_id[0x20].category == "reachable"
    assert by_id[0xE4].category == "undecodable"  # a lead byte alone
    # the 128 ASCII bytes and " b" come back; 0x80-0xFF and 258 cannot be decoded alone
    assert r.categories() == {
        "reachable": 129,
        "reachable_in_context": 0,
        "unreachable": 1,
        "undecodable": 129,
        "special": 1,
    }
    assert not r.has_counts and r.under_trained() == {"unused": 0, "rare": 0, "rare_merge": 0}


def test_the_audit_is_stored_read_back_and_not_needed_by_verify(tiny: Registry) -> None:
    first = tiny.audit("tiny")
    assert not first.stored
    _, rows = tiny.sql("SELECT category, count(*) FROM audit_view WHERE tokenizer = 'tiny@1' GROUP BY category")
    assert dict(rows) == {k: n for k, n in first.categories().items() if n}
    _, rows = tiny.sql("SELECT text, kind, reencoded FROM audit_view WHERE category = 'unreachable'")
    assert [(r[0], r[1], json.loads(r[2]) if isinstance(r[2], str) else r[2]) for r in rows] == [
        ("a b", "merged", [97, 256])
    ]
    again = tiny.audit("tiny")
    assert again.stored and again.tokens == first.tokens
    assert not tiny.audit("tiny", recompute=True).stored
    assert not tiny.audit("tiny", rare_below=3).stored  # another threshold: audited again
    assert tiny.verify("tiny")[0].ok
    tiny.remove("tiny@1")
    assert tiny.sql("SELECT count(*) FROM audit_tokens")[1] == [(0,)]


def test_training_counts_flag_unused_rare_and_rarely_merged_tokens(tiny: Registry) -> None:
    data = tiny.stored("tiny").data()
    counts = {1: 0, 256: 0, 257: 3, 258: 50}  # byte 0x01 never seen; " b" only inside "a b"
    tokens = [replace(t, count=counts.get(t.id, 100) if t.kind != "special" else None) for t in data.tokens]
    merge_counts = {256: 40, 257: 3, 258: 4}  # 258 is used 50 times but was merged on 4 pairs
    merges = [replace(m, count=merge_counts[m.result]) for m in data.merges]
    tiny.add("counted", TokenizerData(data.algorithm, data.config, tokens, merges, source="train"))
    r = tiny.audit("counted", rare_below=5)
    flags = {t.id: t.under_trained for t in r.tokens if t.under_trained}
    assert flags == {1: "unused", 256: "unused", 257: "rare", 258: "rare_merge"}
    assert r.has_counts and r.under_trained() == {"unused": 2, "rare": 1, "rare_merge": 1}
    t258 = next(t for t in r.tokens if t.id == 258)
    assert (t258.count, t258.merge_rank, t258.merge_count) == (50, 2, 4)
    # at a threshold of 3, neither 3 uses nor 4 merged pairs are rare
    assert tiny.audit("counted", rare_below=3).under_trained() == {"unused": 2, "rare": 0, "rare_merge": 0}


def test_pieces_inside_words_are_reachable_in_context(registry: Registry, small_corpus: Path) -> None:
    # WordPiece's ##-pieces and Unigram's pieces without ▁ never come back alone, but do after
    # another token; none of them is reported unreachable
    registry.train("wp", [small_corpus], WordPieceOptions(vocab_size=400))
    r = registry.audit("wp")
    assert r.categories()["unreachable"] == 0
    assert all(t.category == "reachable_in_context" for t in r.tokens if t.shown.startswith("##"))
    registry.train("ug", [small_corpus], UnigramOptions(vocab_size=600))
    u = registry.audit("ug")
    inside = [t for t in u.tokens if t.kind == "normal" and not t.shown.startswith("▁")]
    assert inside and all(t.category == "reachable_in_context" for t in inside)


def test_visible_whitespace() -> None:
    assert visible(b" \n\t\r") == "␣↵⇥␍"
    assert visible("a\u00a0b\u200b".encode()) == "a\\u00a0b\\u200b"
    assert visible(b"\\x\xff") == "\\\\x\\xff"


def test_cli_audit(run: Cli, tmp_path: Path) -> None:
    run("import", "tiktoken", tiktoken_file(tmp_path / "t.tiktoken", EXTRA), "--name", "tiny", "--pattern", "cl100k")
    out = run("audit", "tiny", "--top", "3").output
    assert "unreachable" in out and "a␣b" in out and "-> a ␣b" in out
    assert "undecodable (129, the first 3)" in out and "no training counts" in out
    d = json.loads(run("audit", "tiny", "--json").output)
    assert d["stored"] and d["categories"]["unreachable"] == 1
    assert [t["token"] for t in d["tokens"] if t["category"] == "unreachable"] == ["a␣b"]
    bad = run("audit", "tiny", "--rare", "0", ok=False)
    assert bad.exit_code == 1 and "--rare" in bad.output
    assert run("audit", "nosuch", ok=False).exit_code == 4
