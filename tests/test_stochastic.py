"""Seeded stochastic encodings (encoding/stochastic.py, src/encode/stochastic.rs): BPE-dropout,
StochasTok and Unigram sampling behind one option shape. Checked on versions trained from the
lines of /work/shared/data: at p = 0 the drawn merge loop gives exactly the encoder's ids; a
draw depends on (seed, text) only, never on the thread count or the batch; decoding a draw
gives the text back; what an algorithm cannot draw is refused in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokreg import BpeOptions, InputError, Registry, Tokenizer, UnigramOptions, WordPieceOptions, algorithms
from tokreg.encoding import stochastic

from .conftest import Cli, head_lines, one_error_line, slow, sweep_lines

CASES = {
    "byte_bpe": BpeOptions(vocab_size=600, special=("<|endoftext|>",)),
    "char_bpe_eow": BpeOptions(vocab_size=1000, char_level=True, end_of_word_suffix="</w>"),
    "unigram": UnigramOptions(vocab_size=800, byte_fallback=True, special=("<s>",)),
}
#: The methods each case draws with (the first is the version's own).
METHODS = {"byte_bpe": ("bpe-dropout", "stochastok"), "char_bpe_eow": ("bpe-dropout", "stochastok")}
METHODS["unigram"] = ("unigram", "stochastok")
METHODS_ALL = stochastic.METHODS


@pytest.fixture(scope="module")
def lines() -> list[str]:
    """Held-out lines (past the training slice) of English and Chinese."""
    en, zh = sweep_lines("dr.en.txt"), sweep_lines("dr.zh-cn.txt")
    return en[-150:] + zh[-60:]


#: The fast lane draws with byte-level BPE; `just test` with every case.
@pytest.fixture(scope="module", params=["byte_bpe", slow("char_bpe_eow"), slow("unigram")])
def case(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Tokenizer]:
    folder = tmp_path_factory.mktemp("stochastic")
    (folder / "c.txt").write_bytes(head_lines("dr.en.txt", 20_000) + head_lines("dr.zh-cn.txt", 8_000))
    with Registry(folder / "r.db") as reg:
        reg.train("t", [folder / "c.txt"], CASES[request.param])
        return request.param, reg.load("t")


def test_dropout_zero_in_the_drawn_merge_loop_is_the_encoders_segmentation(
    case: tuple[str, Tokenizer], lines: list[str]
) -> None:
    name, tok = case
    if name == "unigram":
        pytest.skip("Unigram sampling has no p = 0")
    drawn = tok._enc.encode_batch_drawn(lines, [], 2, [], "bpe-dropout", 0.0, 1)
    assert drawn == tok.encode_batch(lines)


def test_same_seed_same_ids_on_any_thread_count_and_in_any_batch(case: tuple[str, Tokenizer], lines: list[str]) -> None:
    name, tok = case
    for method in METHODS[name]:
        kw = {"dropout": 0.1, "seed": 11, "method": method}
        one = tok.encode_batch(lines, threads=1, **kw)  # type: ignore[arg-type]
        assert tok.encode_batch(lines, threads=3, **kw) == one  # type: ignore[arg-type]
        assert tok.encode_batch(lines[::-1], threads=2, **kw) == one[::-1]  # type: ignore[arg-type]
        assert tok.encode(lines[5], **kw) == one[5]  # type: ignore[arg-type]
        flat = tok.encode_batch_flat(lines, threads=2, **kw)  # type: ignore[arg-type]
        assert [flat[k] for k in range(len(flat))] == one
        other = tok.encode_batch(lines, dropout=0.1, seed=12, method=method)
        assert other != one and tok.encode_batch(lines) != one


def test_a_draw_decodes_to_what_the_plain_encoding_decodes_to(case: tuple[str, Tokenizer], lines: list[str]) -> None:
    name, tok = case
    plain = tok.encode_batch(lines)
    for method in METHODS[name]:
        drawn = tok.encode_batch(lines, dropout=0.3, seed=3, method=method)
        assert [tok.decode(d) for d in drawn] == [tok.decode(p) for p in plain], method
        if tok.lossless:
            assert [tok.decode(d) for d in drawn] == lines
        longer = sum(map(len, drawn)) - sum(map(len, plain))
        assert longer > 0, method
        if method == "stochastok":  # at most floor(p * n) expansion steps, each adding one id
            assert all(len(d) <= len(p) + int(0.3 * len(p)) for d, p in zip(drawn, plain))


@pytest.mark.slow
@given(st.text(alphabet=st.sampled_from(list("ab cé\n東京😀 the <s>")), max_size=40), st.integers(0, 2**64 - 1))
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_any_text_round_trips_under_every_method(case: tuple[str, Tokenizer], text: str, seed: int) -> None:
    name, tok = case
    for method in METHODS[name]:
        ids = tok.encode(text, dropout=0.5, seed=seed, method=method, disallowed_special=())
        assert tok.decode(ids) == tok.decode(tok.encode(text, disallowed_special=()))
        assert tok.encode(text, dropout=0.5, seed=seed, method=method, disallowed_special=()) == ids


def test_special_tokens_stay_whole_and_follow_the_rule(case: tuple[str, Tokenizer]) -> None:
    name, tok = case
    if not CASES[name].special:
        pytest.skip("no special token")
    special = CASES[name].special[0]
    text = f"the cat{special}the car"
    for method in METHODS[name]:
        ids = tok.encode(
            text, allowed_special="all", dropout=1.0 if method != "unigram" else 0.1, seed=1, method=method
        )
        assert ids.count(tok.special_tokens[special]) == 1
        with pytest.raises(InputError, match="special token"):
            tok.encode(text, dropout=0.1, seed=1, method=method)


def test_what_cannot_be_drawn_is_refused_in_one_line(case: tuple[str, Tokenizer]) -> None:
    name, tok = case
    for method in METHODS_ALL:  # what show and the version page list is what the core draws
        listed = method in stochastic.methods(algorithms.of(tok.algorithm, tok.config).model.name)
        try:
            tok.encode("the cat", dropout=0.1, seed=1, method=method)
            assert listed, method
        except InputError:
            assert not listed, method
    wrong = "unigram" if name != "unigram" else "bpe-dropout"
    with pytest.raises(InputError, match=f"cannot encode with {wrong}") as e:
        tok.encode("the cat", dropout=0.1, seed=1, method=wrong)
    assert "\n" not in str(e.value)
    with pytest.raises(InputError, match="needs a seed"):
        tok.encode("x", dropout=0.1)
    with pytest.raises(InputError, match="from 0 to 1"):
        tok.encode("x", dropout=1.5, seed=1, method="stochastok")
    with pytest.raises(InputError, match="method must be one of"):
        tok.encode("x", dropout=0.1, seed=1, method="dropout")


@pytest.mark.slow
def test_wordpiece_refuses_every_method(tmp_path: Path) -> None:
    (tmp_path / "c.txt").write_bytes(head_lines("dr.en.txt", 20_000))
    with Registry(tmp_path / "r.db") as reg:
        reg.train("w", [tmp_path / "c.txt"], WordPieceOptions(vocab_size=300))
        tok = reg.load("w")
    with pytest.raises(InputError, match="WordPiece tokenizers cannot encode with stochastok"):
        tok.encode("the cat", dropout=0.1, seed=1)
    assert stochastic.methods(algorithms.of(tok.algorithm, tok.config).model.name) == ()
    assert tok.encode("the cat", dropout=0, seed=1) == tok.encode("the cat")


@pytest.mark.slow
def test_tokenize_records_the_draw_and_refuses_another_seed_on_resume(run: Cli, tmp_path: Path) -> None:
    corpus = tmp_path / "c.txt"
    corpus.write_bytes(head_lines("dr.en.txt", 30_000))
    assert run("train", "t", str(corpus), "--vocab-size", "400").exit_code == 0
    outs = []
    for threads in ("1", "2"):
        out = tmp_path / f"ds{threads}"
        args = ["tokenize", "t", str(corpus), "-o", str(out), "--document", "line", "--dropout", "0.2"]
        res = run(*args, "--seed", "9", "--threads", threads)
        assert res.exit_code == 0, res.output
        outs.append(out)
    doc = json.loads((outs[0] / "manifest.json").read_text())
    assert (doc["options"]["dropout"], doc["options"]["seed"], doc["options"]["method"]) == (0.2, 9, "bpe-dropout")
    assert (outs[0] / "shard-00000.bin").read_bytes() == (outs[1] / "shard-00000.bin").read_bytes()
    assert run("dataset", "verify", str(outs[0])).exit_code == 0
    res = run(
        "tokenize",
        "t",
        str(corpus),
        "-o",
        str(outs[0]),
        "--document",
        "line",
        "--dropout",
        "0.2",
        "--seed",
        "8",
        ok=False,
    )
    one_error_line(res, "other options", "seed")
    plain = tmp_path / "plain"
    assert run("tokenize", "t", str(corpus), "-o", str(plain), "--document", "line").exit_code == 0
    assert "dropout" not in json.loads((plain / "manifest.json").read_text())["options"]
