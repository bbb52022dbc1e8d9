"""Encoding with a trained byte-level version: lossless, and the same ids as tiktoken built from
the same ranks and pattern."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokreg import BpeOptions, InputError, Registry, Tokenizer, load

from .conftest import CORPORA, CORPORA_BY_LANE, data_file


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Tokenizer:
    db = tmp_path_factory.mktemp("enc") / "r.db"
    corpus = tmp_path_factory.mktemp("c") / "mix.txt"
    parts = [data_file(n).read_bytes()[:400_000] for n in CORPORA]
    corpus.write_bytes(b"".join(parts))
    reg = Registry(db)
    reg.train("mix", [corpus], BpeOptions(vocab_size=3000, pattern="cl100k", special=("<|endoftext|>",)))
    return reg.load("mix")


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_roundtrip_any_string(trained: Tokenizer, s: str) -> None:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return  # lone surrogates are refused with a clear error, tested below
    assert trained.decode(trained.encode_ordinary(s)) == s
    assert trained.decode_bytes(trained.encode_ordinary(s)) == s.encode("utf-8")


def test_lone_surrogate_is_a_clear_error(trained: Tokenizer) -> None:
    with pytest.raises(InputError, match="surrogate"):
        trained.encode("abc\ud800")


@pytest.mark.parametrize("name", CORPORA_BY_LANE)
def test_same_ids_as_tiktoken(trained: Tokenizer, name: str) -> None:
    tiktoken = pytest.importorskip("tiktoken")
    ranks = {trained.token_bytes(i): i for i in range(trained.vocab_size) if i not in trained.special_tokens.values()}
    ref = tiktoken.Encoding("ref", pat_str=trained.config["pattern"], mergeable_ranks=ranks, special_tokens={})
    text = data_file(name).read_text(encoding="utf-8")
    assert trained.encode_ordinary(text) == ref.encode_ordinary(text)
    lines = text.splitlines()[:2000]
    assert trained.encode_batch(lines) == [ref.encode_ordinary(x) for x in lines]


def test_special_tokens(trained: Tokenizer) -> None:
    eot = trained.special_tokens["<|endoftext|>"]
    assert trained.encode("a<|endoftext|>", allowed_special="all")[-1] == eot
    with pytest.raises(InputError, match="special token '<|endoftext|>'"):
        trained.encode("a<|endoftext|>")
    assert eot not in trained.encode("a<|endoftext|>", disallowed_special=())


def test_load_by_env_and_refs(tmp_path: Path, small_corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "env.db"
    monkeypatch.setenv("TOKREG_DB", str(db))
    reg = Registry()
    v1 = reg.train("env", [small_corpus], BpeOptions(vocab_size=300))
    v2 = reg.train("env", [small_corpus], BpeOptions(vocab_size=320))
    assert load("env").ref == v2.ref and load("env@1").ref == v1.ref
    tok = load("env@1")
    assert tok.hash == v1.content_hash and tok.vocab_size == 300
    assert tok.token_bytes(104) == b"h"
    with pytest.raises(InputError, match="no token id 999"):
        tok.token_bytes(999)
    assert tok.decode([0xE4], errors="replace") == "\ufffd"
    with pytest.raises(InputError, match="not valid UTF-8"):
        tok.decode([0xE4], errors="strict")
