"""Extending a version without moving its ids (`tokreg extend`, `tokreg add-tokens`), and the
lineage recorded with every version: for each algorithm, every base id maps to the same bytes,
the base's merges stay first at the same ranks, text that uses no new token encodes with the
base's ids, and a kept text encodes with the base's ids on every line. cl100k_base extended
with Chinese keeps kjv.txt's ids on every line (by construction: --keep-text)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tokreg import Registry, algorithms
from tokreg.algorithms import BpeOptions, UnigramOptions, WordPieceOptions
from tokreg.encoding.tokenizer import Tokenizer
from tokreg.errors import InputError
from tokreg.training.extend import ids_preserved

from .conftest import Cli, data_file


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def _same_base(reg: Registry, base: str, new: str) -> None:
    a, b = reg.stored(base), reg.stored(new)
    kept, why = ids_preserved(a.data(), b.data())
    assert kept, why
    by_id = {t.id: t.bytes for t in b.tokens}
    assert all(by_id[t.id] == t.bytes for t in a.tokens)
    assert [(m.left, m.right, m.result) for m in b.merges[: len(a.merges)]] == [
        (m.left, m.right, m.result) for m in a.merges
    ]
    ids_a = {x.id for x in a.tokens}
    assert min(t.id for t in b.tokens if t.id not in ids_a) > max(ids_a)


def _same_ids(reg: Registry, base: str, new: str, lines: list[str]) -> None:
    a, b = reg.load(base), reg.load(new)
    assert a.encode_ordinary_batch(lines) == b.encode_ordinary_batch(lines)


@pytest.fixture
def texts(tmp_path: Path) -> dict[str, Path]:
    """English to train on and to keep, Chinese to extend with and to hold out."""
    out = {}
    for name, src, start, size in (
        ("en", "kjv.txt", 0, 150_000),
        ("en_keep", "kjv.txt", 150_000, 60_000),
        ("zh", "dr.zh-cn.txt", 0, 150_000),
        ("zh_held", "dr.zh-cn.txt", 600_000, 60_000),
    ):
        raw = data_file(src).read_bytes()[start : start + size]
        raw = raw[raw.index(b"\n") + 1 : raw.rindex(b"\n") + 1]
        p = tmp_path / f"{name}.txt"
        p.write_bytes(raw)
        out[name] = p
    return out


# -- byte-level BPE: cl100k_base + Chinese ----------------------------------------------------------


@pytest.mark.slow
def test_cl100k_extended_with_chinese_keeps_every_kjv_id_and_compresses_chinese(
    registry: Registry, tmp_path: Path
) -> None:
    tik, kjv, zh = data_file("cl100k_base.tiktoken"), data_file("kjv.txt"), data_file("dr.zh-cn.txt")
    lines = zh.read_text(encoding="utf-8").splitlines(keepends=True)
    cut = len(lines) * 4 // 5
    (tmp_path / "zh.txt").write_text("".join(lines[:cut]), encoding="utf-8")
    held = "".join(lines[cut:])
    registry.import_tiktoken(
        "cl100k_base", tik, pattern="cl100k", specials={"<|endoftext|>": 100257, "<|endofprompt|>": 100276}
    )
    v = registry.extend("cl100k_base", "cl100k-zh", [tmp_path / "zh.txt"], 2000, keep_text=kjv)
    assert v.vocab_size == 100_258 + 2000
    _same_base(registry, "cl100k_base@1", "cl100k-zh@1")
    base, ext = registry.load("cl100k_base"), registry.load("cl100k-zh")
    # specials keep their ids; new tokens follow the highest id (100276)
    assert ext.encode("<|endofprompt|>", allowed_special="all") == [100276]
    assert min(t for t in ext.encode_ordinary(held) if t > 100276) > 100276
    _same_ids(registry, "cl100k_base", "cl100k-zh", _lines(kjv))
    before, after = len(base.encode_ordinary(held)), len(ext.encode_ordinary(held))
    assert after < 0.85 * before  # held-out Chinese: fewer tokens per byte
    line = registry.lineage("cl100k-zh")[0].lineage
    assert line.derivation == "extended" and line.parent == "cl100k_base@1"
    assert line.details["keep_text"]["changed_lines"] == 0
    assert line.details["keep_text"]["lines"] == len(_lines(kjv))


def test_without_keep_text_a_new_merge_may_change_old_text_and_check_text_counts_it(
    registry: Registry, texts: dict[str, Path], small_corpus: Path
) -> None:
    registry.train("en", [texts["en"]], BpeOptions(vocab_size=600))
    v = registry.extend("en", "en-zh", [texts["zh"], texts["en_keep"]], 200, check_text=texts["en_keep"])
    ct = registry.lineage(v.ref)[0].lineage.details["check_text"]
    assert ct["lines"] == len(_lines(texts["en_keep"]))
    a, b = registry.load("en"), registry.load("en-zh")
    lines = _lines(texts["en_keep"])
    changed = sum(x != y for x, y in zip(a.encode_ordinary_batch(lines), b.encode_ordinary_batch(lines)))
    assert ct["changed_lines"] == changed > 0  # trained on that English too: it changes
    # but a line that uses no new token has the base's ids
    for line in _lines(texts["zh"])[:300]:
        ids = b.encode_ordinary(line)
        if all(i < 600 for i in ids):
            assert ids == a.encode_ordinary(line)
    _same_base(registry, "en@1", "en-zh@1")


# -- every algorithm ----------------------------------------------------------------------------------

ALGOS: dict[str, Any] = {
    "byte_bpe": BpeOptions(vocab_size=700, special=("<|end|>",)),
    "char_bpe": BpeOptions(vocab_size=500, char_level=True, end_of_word_suffix="</w>"),
    "wordpiece": WordPieceOptions(vocab_size=700, special=("[CLS]",), lowercase=True),
    "unigram": UnigramOptions(vocab_size=600, byte_fallback=True, special=("<s>",)),
}


@pytest.mark.parametrize("algo", list(ALGOS))
def test_each_algorithm_extends_keeping_ids_and_the_kept_text(
    registry: Registry, texts: dict[str, Path], tmp_path: Path, algo: str
) -> None:
    registry.train("base", [texts["en"]], ALGOS[algo])
    n = 150
    v = registry.extend("base", "ext", [texts["zh"]], n, keep_text=texts["en_keep"])
    base = registry.stored("base")
    assert v.vocab_size == len(base.tokens) + n
    _same_base(registry, "base@1", "ext@1")
    _same_ids(registry, "base", "ext", _lines(texts["en_keep"]))
    held = texts["zh_held"].read_text(encoding="utf-8")
    a, b = registry.load("base"), registry.load("ext")
    ids_a, ids_b = a.encode_ordinary(held), b.encode_ordinary(held)
    unk = set(a.special_tokens.values())
    # fewer tokens, or (characters the base lacked, now tokens) fewer unknown ones
    assert len(ids_b) < len(ids_a) or sum(i in unk for i in ids_b) < sum(i in unk for i in ids_a)
    if a.decode(a.encode_ordinary(held)) == held:  # lossless: the extension is too
        assert b.decode(b.encode_ordinary(held)) == held
    # same corpus, same options: the same version (deterministic)
    again = registry.extend("base", "ext", [texts["zh"]], n, keep_text=texts["en_keep"])
    assert again.content_hash == v.content_hash
    # exports to every format the base exports to, and reads back with the same ids
    sample = held[:5000] + "\n".join(_lines(texts["en_keep"])[:50])
    for fmt in _formats(registry, "base"):
        if fmt == "hf" and algo == "char_bpe":
            continue  # the </w> suffix has no tokenizer.json form, for base and extension alike
        path = tmp_path / f"ext.{fmt}"
        registry.export("ext", fmt, path)
        if fmt == "hf":
            back = registry.import_hf("back", path)
        elif fmt == "sentencepiece":
            back = registry.import_sentencepiece("back", path)
        else:
            back = registry.import_tiktoken("back", path, pattern=registry.resolve("ext").config["pattern"])
        assert registry.load(back.ref).encode_ordinary(sample) == b.encode_ordinary(sample), fmt


def _formats(reg: Registry, ref: str) -> tuple[str, ...]:
    v = reg.resolve(ref)
    return algorithms.of(v.algorithm, v.config).export_formats


def test_specials_move_only_when_asked(registry: Registry, texts: dict[str, Path]) -> None:
    registry.train("b", [texts["en"]], BpeOptions(vocab_size=400, special=("<|end|>",)))
    assert registry.load("b").special_tokens == {"<|end|>": 399}
    registry.extend("b", "kept", [texts["zh"]], 20)
    assert registry.load("kept").special_tokens == {"<|end|>": 399}
    v = registry.extend("b", "moved", [texts["zh"]], 20, renumber_specials=True)
    assert registry.load(v.ref).special_tokens == {"<|end|>": 419}
    a, b = registry.stored("b").data(), registry.stored(v.ref).data()
    assert ids_preserved(a, b)[0] is False  # the special moved, as asked
    assert ids_preserved(a, b, specials=False)[0]
    assert registry.lineage(v.ref)[0].lineage.details["specials_renumbered"] is True


def test_unigram_base_scores_stay_and_new_pieces_follow_by_score(registry: Registry, texts: dict[str, Path]) -> None:
    registry.train("sp", [texts["en"]], UnigramOptions(vocab_size=500, byte_fallback=True))
    registry.extend("sp", "sp-zh", [texts["zh"]], 300)
    a, b = registry.stored("sp"), registry.stored("sp-zh")
    scores = {t.id: t.score for t in a.tokens}
    assert all(t.score == scores[t.id] for t in b.tokens if t.id in scores)
    new = [t for t in b.tokens if t.id not in scores]
    assert [t.id for t in new] == list(range(500, 800))
    assert all(x.score >= y.score for x, y in zip(new, new[1:]))  # by score, descending
    assert {t.kind for t in new} == {"normal"}


# -- added tokens ------------------------------------------------------------------------------------


@pytest.mark.parametrize("algo", list(ALGOS))
def test_add_tokens_special_and_ordinary(registry: Registry, texts: dict[str, Path], algo: str) -> None:
    registry.train("base", [texts["en"]], ALGOS[algo])
    top = max(t.id for t in registry.stored("base").tokens)
    v = registry.add_tokens("base", "chat", ["<|im_start|>", "<|im_end|>"], special=True)
    tok = registry.load(v.ref)
    assert tok.encode("<|im_start|>", allowed_special="all") == [top + 1]
    assert tok.encode("<|im_end|>", allowed_special="all") == [top + 2]
    _same_base(registry, "base@1", v.ref)
    word = "zebulunites"
    w = registry.add_tokens("base", "words", [word])
    _same_base(registry, "base@1", w.ref)
    tok = registry.load(w.ref)
    ids = tok.encode_ordinary(word)
    new = [i for i in ids if i > top]
    assert len(new) == 1 and word in tok.decode(new), ids  # Unigram: after its own "▁"
    line = registry.lineage(w.ref)[0].lineage
    assert line.derivation == "added_tokens" and line.parent == "base@1"


def test_add_tokens_refuses_what_cannot_be_one_token(registry: Registry, small_corpus: Path) -> None:
    registry.train("b", [small_corpus], BpeOptions(vocab_size=400))
    with pytest.raises(InputError, match="cut into several pieces"):
        registry.add_tokens("b", "c", ["hello world"])
    with pytest.raises(InputError, match="already token"):
        registry.add_tokens("b", "c", ["a"])
    assert [x.ref for x in registry.versions()] == ["b@1"]


# -- bad input: one line, nothing written ---------------------------------------------------------------


def test_bad_extensions_are_one_line_and_write_nothing(run: Cli, texts: dict[str, Path], tmp_path: Path) -> None:
    run("train", "en", texts["en"], "--vocab-size", 400)
    run("train", "other", texts["en"], "--vocab-size", 300)
    tiny = tmp_path / "tiny.txt"
    tiny.write_text("aaa bbb\n", encoding="utf-8")
    res = run("extend", "en", "en-x", tiny, "--add", 1000, ok=False)
    assert res.exit_code != 0 and "supports only" in res.output and "nothing was written" in res.output
    assert len(res.output.strip().splitlines()) == 1
    res = run("extend", "en", "other", texts["zh"], "--add", 10, ok=False)  # a name with another base
    assert res.exit_code != 0 and "already exists" in res.output and "another name" in res.output
    res = run("extend", "en", "en-x", texts["zh"], "--add", 0, ok=False)
    assert res.exit_code != 0 and "--add" in res.output
    listed = json.loads(run("list", "--json").output)
    assert sorted(v["ref"] for v in listed) == ["en@1", "other@1"]
    # the base's own name is fine, and so is a name already extended from the same base
    run("extend", "en", "en", texts["zh"], "--add", 10)
    run("extend", "en@1", "en-zh", texts["zh"], "--add", 10)
    run("extend", "en@1", "en-zh", texts["zh"], "--add", 20)


def test_a_base_whose_pieces_cannot_be_counted_again_is_refused(registry: Registry, small_corpus: Path) -> None:
    """An imported byte-level BPE that keeps the text between its pattern's matches (HF's Split
    with Isolated) cuts text in a way tokreg's counter does not: refused in one line."""
    registry.train("b", [small_corpus], BpeOptions(vocab_size=300))
    data = registry.stored("b").data()
    data.config = {**data.config, "pattern": r"\d+", "keep_gaps": True}
    registry.add("iso", data)
    with pytest.raises(InputError, match="cannot be extended by training") as e:
        registry.extend("iso", "iso2", [small_corpus], 10)
    assert "\n" not in str(e.value)
    assert [x.ref for x in registry.versions()] == ["b@1", "iso@1"]


# -- lineage: show, log, diff -------------------------------------------------------------------------


def test_lineage_is_shown_in_show_log_and_diff(run: Cli, texts: dict[str, Path]) -> None:
    run("train", "en", texts["en"], "--vocab-size", 400)
    run("extend", "en", "en-zh", texts["zh"], "--add", 50, "--check-text", texts["en_keep"])
    run("add-tokens", "en-zh", "en-zh", "<|x|>", "--special")
    show = run("show", "en-zh@2").output
    assert "added tokens from en-zh@1" in show and "extended from en@1" in show and "trained" in show
    data = json.loads(run("show", "en-zh@2", "--json").output)
    assert [e["ref"] for e in data["lineage"]] == ["en-zh@2", "en-zh@1", "en@1"]
    assert [e["derivation"] for e in data["lineage"]] == ["added_tokens", "extended", "trained"]
    assert json.loads(run("show", "en", "--json").output)["derived"] == ["en-zh@1"]
    log = run("log", "en-zh").output
    assert "extended from en@1" in log and "added tokens from en-zh@1" in log
    diff = run("diff", "en", "en-zh@1").output
    assert "ids of en@1 preserved: yes" in diff and "ids new in B 50" in diff
    diff = run("diff", "en-zh@1", "en").output
    assert "ids of en-zh@1 preserved: no" in diff
    d = json.loads(run("diff", "en", "en-zh@2", "--json").output)
    assert d["ids"]["a_preserved"] is True and d["ids"]["new_ids"] == 51


def test_reimport_of_an_export_names_its_source(registry: Registry, small_corpus: Path, tmp_path: Path) -> None:
    registry.train("b", [small_corpus], BpeOptions(vocab_size=400))
    registry.export("b", "hf", tmp_path / "b.json")
    v = registry.import_hf("c", tmp_path / "b.json")
    line = registry.lineage(v.ref)[0].lineage
    if registry.resolve("b").content_hash == v.content_hash:
        assert line.derivation == "reimported" and line.parent == "b@1"
    else:
        assert line.derivation == "imported"


def test_unigram_from_tokenizer_data_compiles(registry: Registry, texts: dict[str, Path]) -> None:
    registry.train("sp", [texts["en"]], UnigramOptions(vocab_size=400))
    v = registry.extend("sp", "sp2", [texts["zh"]], 100)
    assert Tokenizer(registry.stored(v.ref).content, ref=v.ref).vocab_size == 500


def _objective_of_new_merges(reg: Registry, base: str, new: str) -> str:
    """Which objective ranked `new`'s merges after `base`'s, read off their recorded scores."""
    first = len(reg.stored(base).merges)
    added = reg.stored(new).merges[first:]
    assert added
    if all(m.score == m.count for m in added):
        return "frequency"
    assert all(m.score == pytest.approx(m.count / (m.left_count * m.right_count)) for m in added)
    return "ratio"


def test_wordpiece_extends_ranked_as_its_base_was(registry: Registry, texts: dict[str, Path], run: Cli) -> None:
    """The new merges are ranked by the base's own objective (recorded in the lineage), or by
    --objective; a run recorded before objectives existed ranked by ratio, and so does its
    extension; other algorithms have one ranking and refuse the option in one line."""
    registry.train("f", [texts["en"]], WordPieceOptions(vocab_size=500))
    registry.train("r", [texts["en"]], WordPieceOptions(vocab_size=500, objective="ratio"))
    for base, want in (("f", "frequency"), ("r", "ratio")):
        v = registry.extend(base, base, [texts["en_keep"]], 60)
        assert registry.lineage(v)[0].lineage.details["objective"] == want
        assert _objective_of_new_merges(registry, f"{base}@1", v.ref) == want
        again = registry.extend(v.ref, base, [texts["en_keep"]], 20)  # an extension's extension
        assert registry.lineage(again)[0].lineage.details["objective"] == want
    over = registry.extend("f@1", "f", [texts["en_keep"]], 60, objective="ratio")
    assert _objective_of_new_merges(registry, "f@1", over.ref) == "ratio"
    # A run recorded before --objective existed (no objective in its config) ranked by ratio.
    with registry.engine.begin() as conn:
        conn.exec_driver_sql(
            "UPDATE training_runs SET config = json_remove(config, '$.objective') "
            "WHERE version_id = (SELECT id FROM versions WHERE name = 'f' AND number = 1)"
        )
    legacy = registry.extend("f@1", "f", [texts["en_keep"]], 60)
    assert _objective_of_new_merges(registry, "f@1", legacy.ref) == "ratio"
    registry.train("b", [texts["en"]], BpeOptions(vocab_size=400))
    res = run("extend", "b", "b", str(texts["zh"]), "--add", "5", "--objective", "ratio", ok=False)
    assert res.exit_code == 1 and len(res.output.strip().splitlines()) == 1
    assert "one ranking; leave --objective out" in res.output and "Traceback" not in res.output
