"""Unigram LM: exact vocab size with every character kept, lossless ▁ mode with byte fallback,
deterministic training, n-best and sampling, and the recorded training curve."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tokreg import InputError, Registry, Tokenizer, UnigramOptions

from .conftest import Cli, data_file


def head(data: bytes, size: int) -> bytes:
    return data[: data.rfind(b"\n", 0, size) + 1]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    p = tmp_path_factory.mktemp("ug") / "mix.txt"
    p.write_bytes(b"".join(head(data_file(n).read_bytes(), 250_000) for n in ["kjv.txt", "dr.en.txt", "dr.zh-cn.txt"]))
    return p


@pytest.fixture(scope="module")
def lossless(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Registry, Tokenizer]:
    reg = Registry(tmp_path_factory.mktemp("db") / "r.db")
    reg.train("ug", [corpus], UnigramOptions(vocab_size=3000, byte_fallback=True, special=("<s>", "</s>")))
    return reg, reg.load("ug")


def test_vocab_layout_and_every_character_kept(lossless: tuple[Registry, Tokenizer], corpus: Path) -> None:
    reg, tok = lossless
    assert tok.vocab_size == 3000
    _, rows = reg.sql("SELECT kind, count(*) FROM vocab WHERE tokenizer = 'ug@1' GROUP BY kind ORDER BY kind")
    assert dict(rows) == {"byte": 256, "control": 2, "normal": 3000 - 256 - 3, "unknown": 1}
    assert tok.token_bytes(0) == b"<unk>" and tok.special_tokens["<s>"] == 1
    _, rows = reg.sql("SELECT text FROM vocab WHERE tokenizer = 'ug@1' AND kind = 'normal'")
    pieces = {r[0] for r in rows}
    chars = set(corpus.read_text(encoding="utf-8").replace("\n", "").replace(" ", "\u2581"))
    assert chars <= pieces
    _, rows = reg.sql("SELECT max(score), min(score) FROM vocab WHERE tokenizer = 'ug@1' AND kind = 'normal'")
    assert rows[0][0] < 0 and rows[0][1] < rows[0][0]  # log probabilities


@settings(max_examples=200, deadline=None)
@given(st.text())
@example("<s>")
@example("</s><unk>x")
@example("\u2581")
@example(" \u2581a\u2581 ")
def test_roundtrip_with_byte_fallback(lossless: tuple[Registry, Tokenizer], s: str) -> None:
    _, tok = lossless
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return
    # Any text, also one that spells a special token, encoded as text. The one exception is
    # SentencePiece's own: U+2581 is its mark for a space, so a literal one decodes as a space.
    assert tok.decode(tok.encode(s, disallowed_special=())) == s.replace("\u2581", " ")


def test_show_says_lossless_or_not(lossless: tuple[Registry, Tokenizer], corpus: Path) -> None:
    reg, _ = lossless
    assert reg.show("ug@1").lossless is True
    reg.train("ug-collapse", [corpus], UnigramOptions(vocab_size=1500, remove_extra_whitespaces=True))
    assert reg.show("ug-collapse").lossless is False


def test_same_hash_for_threads_and_shuffled_lines(corpus: Path, tmp_path: Path) -> None:
    lines = [x + "\n" for x in corpus.read_text(encoding="utf-8").splitlines()]
    random.Random(5).shuffle(lines)
    shuffled = tmp_path / "shuffled.txt"
    shuffled.write_text("".join(lines), encoding="utf-8")
    reg = Registry(tmp_path / "det.db")
    hashes = {
        reg.train("d", [f], UnigramOptions(vocab_size=2000, byte_fallback=True, threads=t)).content_hash
        for f, t in [(corpus, 1), (corpus, 2), (shuffled, 2)]
    }
    assert len(hashes) == 1


def test_nbest(lossless: tuple[Registry, Tokenizer]) -> None:
    _, tok = lossless
    text = "In the beginning was the Word"
    best = tok.nbest(text, 5)
    assert len(best) == 5
    assert best[0][0] == tok.encode(text)
    scores = [s for _, s in best]
    assert scores == sorted(scores, reverse=True) and len({tuple(ids) for ids, _ in best}) == 5
    assert all(tok.decode(ids) == text for ids, _ in best)


def test_sampling_is_reproducible_and_varied(lossless: tuple[Registry, Tokenizer]) -> None:
    _, tok = lossless
    text = "unbelievable transformations of the commandments"
    assert tok.sample(text, alpha=0.1, seed=7) == tok.sample(text, alpha=0.1, seed=7)
    draws = {tuple(tok.sample(text, alpha=0.1, seed=s)) for s in range(30)}
    assert len(draws) > 3 and all(tok.decode(list(d)) == text for d in draws)
    best = tuple(tok.encode(text))
    soft = [tuple(tok.sample(text, alpha=0.1, seed=s)) for s in range(30)]
    sharp = [tuple(tok.sample(text, alpha=50.0, seed=s)) for s in range(30)]
    # A large alpha concentrates on the Viterbi path (two thirds of the draws or more; the model
    # may have a near tie), far more than a small one does.
    assert sharp.count(best) >= 20 and sharp.count(best) > soft.count(best) + 10
    with pytest.raises(InputError, match="alpha > 0"):
        tok.sample(text, alpha=0)


def test_nbest_needs_unigram(registry: Registry, small_corpus: Path) -> None:
    from tokreg import BpeOptions

    registry.train("b", [small_corpus], BpeOptions(vocab_size=300))
    with pytest.raises(InputError, match="use a Unigram tokenizer"):
        registry.load("b").nbest("x", 2)


def test_history_and_plot(lossless: tuple[Registry, Tokenizer], tmp_path: Path) -> None:
    reg, _ = lossless
    rounds = reg.history("ug@1")
    assert len(rounds) >= 2
    sizes = [r.vocab_size for r in rounds]
    assert sizes == sorted(sizes, reverse=True) and sizes[-1] >= 3000
    assert all(r.log_likelihood < 0 for r in rounds)
    run = Cli(Path(reg.url.removeprefix("sqlite:///")))
    out = run("show", "ug@1", "--history").output
    assert "training rounds:" in out and "log-likelihood by round" in out and "•" in out
    pytest.importorskip("matplotlib")
    png = tmp_path / "curve.png"
    assert "wrote the training curve" in run("show", "ug@1", "--plot", png).output
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_train_options_belong_to_their_algorithm(run: Cli, small_corpus: Path) -> None:
    res = run("train", "x", small_corpus, "--algo", "unigram", "--vocab-size", "500", "--min-frequency", "3", ok=False)
    assert res.exit_code == 1 and "--min-frequency applies to --algo bpe or wordpiece" in res.output
    res = run("train", "x", small_corpus, "--vocab-size", "500", "--byte-fallback", ok=False)
    assert res.exit_code == 1 and "--byte-fallback applies to --algo unigram" in res.output
    out = run("train", "u", small_corpus, "--algo", "unigram", "--vocab-size", "600", "--byte-fallback").output
    assert "u@1" in out and "600 tokens" in out


@pytest.mark.slow  # five trainings and three retrainings
def test_runs_of_every_trainer_revision_reproduce(corpus: Path, tmp_path: Path) -> None:
    """Runs recorded before `trainer_revision` existed were revision 1's: reproduce retrains them
    with revision 1 (the config says which), and gets the stored hash; so do runs of revision
    2, and new runs record 3 (each revision trains another vocabulary on this corpus)."""
    import sqlite3

    reg = Registry(tmp_path / "r.db")
    versions = [reg.train("ug", [corpus], UnigramOptions(vocab_size=1500, trainer_revision=r)) for r in (1, 2)]
    versions.append(reg.train("ug", [corpus], UnigramOptions(vocab_size=1500)))
    assert len({v.content_hash for v in versions}) == 3
    with sqlite3.connect(tmp_path / "r.db") as conn:
        rows = conn.execute("SELECT id, config FROM training_runs ORDER BY id").fetchall()
        configs = [json.loads(c) for _, c in rows]
        assert [c["trainer_revision"] for c in configs] == [1, 2, 3]
        del configs[0]["trainer_revision"]  # as recorded before the field existed
        conn.execute("UPDATE training_runs SET config = ? WHERE id = ?", (json.dumps(configs[0]), rows[0][0]))
    for n, version in enumerate(versions, 1):
        r = reg.reproduce(f"ug@{n}")
        assert r.same and r.reproduced == version.content_hash
    with pytest.raises(InputError, match="revision 4 is not known"):
        reg.train("ug", [corpus], UnigramOptions(vocab_size=1500, trainer_revision=4))
