"""`tokreg drop-residues --budget` (versions/residue_budget.py): k residues removed from BPE
N + k, k chosen on a check part of the training text alone. The blocks are made small here
(`BLOCK`) so a few hundred KB of text has the 20 blocks the split needs."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tokreg import BpeOptions, Registry, Tokenizer
from tokreg.algorithms.bpe.residue_free_model import ResidueFreeConfig
from tokreg.data import TokenizerData
from tokreg.errors import InputError
from tokreg.versions import residue_budget as rb

from .conftest import Cli, head_lines, one_error_line

N = 400


@pytest.fixture
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rb, "BLOCK", 2048)


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    path = tmp_path / "t.txt"
    path.write_bytes(head_lines("dr.en.txt", 150_000))
    return path


def test_margin_is_a_percentage() -> None:
    assert rb.parse_margin("0.8%") == pytest.approx(0.008)
    assert rb.parse_margin(" 1 ") == pytest.approx(0.01)
    for bad in ("", "x%", "0", "-1%", "100"):
        with pytest.raises(InputError, match="--budget"):
            rb.parse_margin(bad)


def test_blocks_end_at_line_ends_and_give_the_text_back() -> None:
    text = "".join(f"line {i} {'x' * (i % 37)}\n" for i in range(2000)) + "no end"
    blocks = rb.cut_blocks(text, 1000)
    assert "".join(rb.lines_of(blocks)) == text
    assert all(sum(map(len, b)) >= 1000 and b[-1].endswith("\n") for b in blocks[:-1])
    assert all(sum(map(len, b)) - len(b[-1]) < 1000 for b in blocks)  # cut at the first line end past 1000


def test_tokens_counted_from_a_trace_are_the_encoders(corpus: Path) -> None:
    """A removed token counts as the leaves it splits into: the residue-free encoder's count."""
    data = rb.train_bpe(str(corpus), N, "cl100k", 1)
    tok = Tokenizer.from_data(data, "t")
    lines = corpus.read_text(encoding="utf-8").splitlines(keepends=True)[::7]
    t = rb.trace(tok, lines, 1)
    made_of = rb.parents(data)
    # the residues, and with them a token and one of its parents (a removed parent splits again)
    gone = set(sorted(t.residues(0.1, 10))[:40])
    top = max(i for i in range(256, N) if t.emitted[i])
    gone |= {top, made_of[top][0]} - set(range(256))
    tokens = [dataclasses.replace(x, kind="removed", count=None) if x.id in gone else x for x in data.tokens]
    config = ResidueFreeConfig(data.config["pattern"], tuple(sorted(gone))).to_json()
    free = Tokenizer.from_data(dataclasses.replace(data, tokens=tokens, config=config), "free")
    emitted = sum(len(ids) for ids in free.encode_ordinary_batch(lines))
    assert (
        emitted
        == t.tokens(gone, made_of)
        > t.tokens(set(), made_of)
        == sum(len(ids) for ids in tok.encode_ordinary_batch(lines))
    )
    assert not any(i in gone for ids in free.encode_ordinary_batch(lines) for i in ids)


@pytest.mark.slow
def test_budget_version_is_recorded_deterministic_and_keeps_base_ids(
    small_blocks: None, corpus: Path, tmp_path: Path
) -> None:
    with Registry(tmp_path / "r.db") as reg:
        base = reg.train("k", [corpus], BpeOptions(vocab_size=N))
        v = reg.drop_residues(base.ref, "k", corpus, budget=0.008, threads=1)
        again = reg.drop_residues(base.ref, "k2", corpus, budget=0.008, threads=2)
        assert v.content_hash == again.content_hash  # threads never change it
        (entry, *_) = reg.lineage(v.ref)
        details = entry.lineage.details
        assert entry.lineage.parent == base.ref and entry.lineage.derivation == "dropped_residues"
        b = details["budget"]
        k = b["k"]
        assert k == details["removed"] > 0 and b["margin"] == 0.008
        tried = {s["k"]: s["cost"] for s in b["tried"]}
        assert tried[k] == b["check_cost"] <= 0.008
        # the largest k found: every larger k tried is over the margin, the next step up too
        assert all(c > 0.008 for kk, c in tried.items() if kk > k)
        assert any(kk <= k + max(1, N // rb.FINE) and kk > k for kk in tried) or k == N // rb.MAX_SHARE
        st_base, st = reg.stored(base.ref), reg.stored(v.ref)
        removed = [t.id for t in st.tokens if t.kind == "removed"]
        assert len(removed) == k and len(st.tokens) == N + k
        assert [t.bytes for t in st.tokens[:N]] == [t.bytes for t in st_base.tokens]  # BASE's ids kept
        assert st.info.vocab_size == N
        tok = reg.load(v.ref)
        lines = corpus.read_text(encoding="utf-8").splitlines(keepends=True)
        ids = {i for row in tok.encode_ordinary_batch(lines) for i in row}
        assert not ids & set(removed)
        assert "".join(tok.decode(tok.encode_ordinary(x)) for x in lines[:500]) == "".join(lines[:500])


@pytest.mark.slow
def test_budget_from_the_cli_and_refusals(small_blocks: None, corpus: Path, tmp_path: Path) -> None:
    run = Cli(tmp_path / "r.db")
    run("train", "k", corpus, "--vocab-size", N)
    out = json.loads(run("drop-residues", "k@1", "k", "--text", corpus, "--budget", "0.8%", "--json").output)
    assert out["ref"] == "k@2"
    shown = run("show", "k@2").output
    assert "dropped" in shown
    checked = run("drop-residues", "k@1", "k", "--text", corpus, "--budget", "0.8%", "--budget-version", "checked")
    assert "the version checked" in checked.output and "ids NOT kept" in checked.output
    one_error_line(run("drop-residues", "k@1", "k", "--text", corpus, "--budget", "lots", ok=False), "--budget")
    other = tmp_path / "o.txt"
    other.write_bytes(head_lines("kjv.txt", 150_000))
    one_error_line(run("drop-residues", "k@1", "k", "--text", other, "--budget", "0.8%", ok=False), "is not k@1")


def test_a_trace_of_counted_pieces_is_the_trace_of_the_lines(corpus: Path) -> None:
    """Each piece encodes on its own: the pieces' traces, weighted by the bits of their counts,
    sum to the trace of the text's lines."""
    data = rb.train_bpe(str(corpus), N, "cl100k", 1)
    tok = Tokenizer.from_data(data, "t")
    blocks = rb.cut_blocks(corpus.read_text(encoding="utf-8"), 2048)[:20]
    pieces = rb.pieces_of(blocks, data.config["pattern"], 1)
    assert [w for w, _ in pieces.groups][:3] == [1, 2, 4]
    assert rb.trace(tok, pieces, 1) == rb.trace(tok, rb.lines_of(blocks), 1)


@pytest.mark.slow
def test_the_checked_version_is_the_one_the_check_part_measured(
    small_blocks: None, corpus: Path, tmp_path: Path
) -> None:
    """--budget-version checked records the fit part's BPE N + k less k: its cost on the check
    part, measured again with the encoder, is the one recorded."""
    with Registry(tmp_path / "r.db") as reg:
        base = reg.train("k", [corpus], BpeOptions(vocab_size=N))
        v = reg.drop_residues(base.ref, "k", corpus, budget=0.008, budget_version="checked", threads=1)
        (entry, *_) = reg.lineage(v.ref)
        b = entry.lineage.details["budget"]
        assert b["version"] == "checked" and entry.lineage.details["ids_preserved"] is False
        blocks = rb.cut_blocks(corpus.read_text(encoding="utf-8"))
        check = rb.lines_of(blocks[rb.CHECK_EVERY - 1 :: rb.CHECK_EVERY])
        tok = reg.load(v.ref)
        per_byte = sum(len(ids) for ids in tok.encode_ordinary_batch(check)) / len("".join(check).encode())
        assert per_byte == pytest.approx(b["check_plain_tokens_per_byte"] * (1 + b["check_cost"]), rel=1e-5)
        assert reg.stored(v.ref).info.vocab_size == N
        with pytest.raises(InputError, match="--budget-version"):
            reg.drop_residues(base.ref, "k", corpus, budget=0.008, budget_version="some")


def test_residues_after_a_removal_are_what_the_residue_free_encoder_counts(corpus: Path) -> None:
    """The folds rule counts a fold's residues after removing k tokens from one trace of BPE N + k
    (each removed token's F1 goes to its leaves): the count the residue-free encoder's own trace
    gives (what `audit --residues` and the benchmark measure)."""
    data = rb.train_bpe(str(corpus), N, "cl100k", 1)
    tok = Tokenizer.from_data(data, "t")
    lines = corpus.read_text(encoding="utf-8").splitlines(keepends=True)[::5]
    t = rb.trace(tok, lines, 1)
    made_of = rb.parents(data)
    gone = set(sorted(t.residues(0.1, 10))[::2])
    top = max(i for i in range(256, N) if t.emitted[i])
    gone |= {top, made_of[top][0]} - set(range(256))  # a removed parent splits again
    tokens = [dataclasses.replace(x, kind="removed", count=None) if x.id in gone else x for x in data.tokens]
    config = ResidueFreeConfig(data.config["pattern"], tuple(sorted(gone))).to_json()
    free = Tokenizer.from_data(dataclasses.replace(data, tokens=tokens, config=config), "free")
    measured = rb.trace(free, lines, 1).residues(0.1, 10)
    assert rb.residues_after(t, gone, made_of, 0.1, 10) == len(measured) < len(t.residues(0.1, 10))
    assert rb.residues_after(t, set(), made_of, 0.1, 10) == len(t.residues(0.1, 10))


def test_pair_votes_count_the_unions_of_two_parts(corpus: Path) -> None:
    """A token's votes are the pairs of parts whose text together has it as a residue (a trace of
    two parts is the sum of theirs); the judge orders by votes per F1, then lowest id."""
    data = rb.train_bpe(str(corpus), N, "cl100k", 1)
    tok = Tokenizer.from_data(data, "t")
    blocks = rb.cut_blocks(corpus.read_text(encoding="utf-8"), 2048)
    parts = [rb.lines_of(blocks[j :: rb.EIGHTHS]) for j in range(rb.EIGHTHS)]
    traces = [rb.trace(tok, p, 1) for p in parts]
    votes = rb.pair_votes(traces, 0.1, 10)
    assert rb.added([traces[2], traces[5]]) == rb.trace(tok, parts[2] + parts[5], 1)  # a union's trace
    want: dict[int, int] = {}
    for a in range(len(parts)):
        for b in range(a + 1, len(parts)):
            for i in rb.added([traces[a], traces[b]]).residues(0.1, 10):
                want[i] = want.get(i, 0) + 1
    assert votes == want and max(votes.values()) <= 28 and len(votes) > 20
    order = rb.pair_judge(traces, 0.1, 10)
    f1 = {i: sum(t.emitted[i] for t in traces) for i in votes}
    assert sorted(order) == sorted(votes)
    keys = [(-votes[i] / max(f1[i], 1), i) for i in order]
    assert keys == sorted(keys)


@pytest.mark.slow
def test_folds_rule_is_recorded_deterministic_and_keeps_base_ids(
    small_blocks: None, corpus: Path, tmp_path: Path
) -> None:
    with Registry(tmp_path / "r.db") as reg:
        base = reg.train("k", [corpus], BpeOptions(vocab_size=N))
        v = reg.drop_residues(base.ref, "k", corpus, budget=0.01, fewer=3.0, threads=1)
        again = reg.drop_residues(base.ref, "k2", corpus, budget=0.01, fewer=3.0, threads=2)
        assert v.content_hash == again.content_hash  # threads never change it
        (entry, *_) = reg.lineage(v.ref)
        details = entry.lineage.details
        b = details["budget"]
        k = b["k"]
        assert b["rule"] == "folds" and b["fewer"] == 3.0 and b["margin"] == 0.01 and k == details["removed"] > 0
        steps = {s["k"]: s for s in b["tried"]}
        chosen = steps[k]
        assert max(chosen["costs"]) == b["check_cost"] <= 0.01 and len(chosen["costs"]) == 4
        assert b["goal_met"] == (min(chosen["fewer"]) >= 3.0)
        if b["goal_met"]:  # the smallest k found meeting it: every smaller k tried misses it or the margin
            assert all(min(s["fewer"]) < 3.0 or max(s["costs"]) > 0.01 for kk, s in steps.items() if kk < k)
        else:  # the largest within the margin
            assert all(max(s["costs"]) > 0.01 for kk, s in steps.items() if kk > k)
        st_base, st = reg.stored(base.ref), reg.stored(v.ref)
        removed = [t.id for t in st.tokens if t.kind == "removed"]
        assert len(removed) == k and len(st.tokens) == N + k and st.info.vocab_size == N
        assert [t.bytes for t in st.tokens[:N]] == [t.bytes for t in st_base.tokens]  # BASE's ids kept
        tok = reg.load(v.ref)
        lines = corpus.read_text(encoding="utf-8").splitlines(keepends=True)
        assert not {i for row in tok.encode_ordinary_batch(lines) for i in row} & set(removed)
        # fold 0's cost, measured again with the encoder (quarter 0: blocks 0, 4, 8, ...; judged on
        # the 6 of the 8 parts that are not in it)
        blocks = rb.cut_blocks(corpus.read_text(encoding="utf-8"))
        held = rb.lines_of(blocks[0::4])
        judged = [rb.lines_of(blocks[j :: rb.EIGHTHS]) for j in range(rb.EIGHTHS) if j % 4 != 0]
        big = rb.train_bpe(str(corpus), N + k, st_base.info.config["pattern"], 1)
        order = rb.pair_judge([rb.trace(Tokenizer.from_data(big, "b"), p, 1) for p in judged], 0.1, 10)
        gone = set(order[:k])
        tokens = [dataclasses.replace(x, kind="removed", count=None) if x.id in gone else x for x in big.tokens]
        config = ResidueFreeConfig(big.config["pattern"], tuple(sorted(gone))).to_json()
        fold = Tokenizer.from_data(dataclasses.replace(big, tokens=tokens, config=config), "fold")
        emitted = sum(map(len, fold.encode_ordinary_batch(held)))
        assert emitted / sum(map(len, reg.load(base.ref).encode_ordinary_batch(held))) - 1 == pytest.approx(
            chosen["costs"][0], abs=1e-6
        )


@pytest.mark.slow
def test_folds_rule_from_the_cli_and_refusals(small_blocks: None, corpus: Path, tmp_path: Path) -> None:
    run = Cli(tmp_path / "r.db")
    run("train", "k", corpus, "--vocab-size", N)
    out = run("drop-residues", "k@1", "k", "--text", corpus, "--budget", "1%", "--fewer", "3x")
    assert "chosen by folds of t.txt" in out.output and "ids kept" in out.output
    assert "by folds" in run("show", "k@2").output
    one_error_line(
        run("drop-residues", "k@1", "k", "--text", corpus, "--fewer", "3", ok=False), "--fewer needs --budget"
    )
    one_error_line(
        run("drop-residues", "k@1", "k", "--text", corpus, "--budget", "1%", "--fewer", "1", ok=False), "--fewer"
    )
    one_error_line(
        run("drop-residues", "k@1", "k", "--text", corpus, "--budget", "1%", "--fewer", "many", ok=False), "--fewer"
    )
    one_error_line(
        run(
            "drop-residues",
            "k@1",
            "k",
            "--text",
            corpus,
            "--budget",
            "1%",
            "--fewer",
            "3",
            "--budget-version",
            "checked",
            ok=False,
        ),
        "--budget-version",
    )


def steps_from(cost: dict[int, float], fewer: dict[int, float]) -> tuple[Callable[[int], rb.FoldStep], list[int]]:
    """A measure for `unseen_search` from per-k curves (every fold the same), recording each k asked."""
    asked: list[int] = []

    def measure(k: int) -> rb.FoldStep:
        asked.append(k)
        c = next(v for kk, v in sorted(cost.items()) if kk >= k)
        f = next(v for kk, v in sorted(fewer.items()) if kk >= k)
        return rb.FoldStep(k, (c, c + 0.002, c - 0.002, c), (f, f - 1, f + 1, f))

    return measure, asked


def test_unseen_search_takes_the_midpoint_of_the_goal_and_the_margin() -> None:
    """k_lo: the smallest k found with the goal met on average; k_hi: the largest within the
    margin on average; k is their midpoint, found by doubling from N/32 then halving to N/256."""
    n = 25_600  # N/32 = 800, N/256 = 100
    # cost crosses 1% between 3,000 and 3,001, fewer reaches 5 at 2,000
    cost = {2999: 0.009, 3000: 0.0099, 1 << 30: 0.05}
    fewer = {1999: 4.0, 1 << 30: 5.5}
    measure, asked = steps_from(cost, fewer)
    k, steps, met = rb.unseen_search(measure, n, 0.01, 5.0)
    assert asked[:3] == [800, 1600, 3200] and met
    tried = {s.k: s for s in steps}
    k_hi = max(x for x, s in tried.items() if rb.mean_cost(s) <= 0.01)
    k_lo = min(x for x, s in tried.items() if rb.mean_fewer(s) >= 5.0)
    assert 3000 - 100 <= k_hi <= 3000 and 2000 <= k_lo <= 2000 + 100
    assert k == (k_lo + k_hi) // 2 and rb.mean_cost(tried[k]) <= 0.01 and rb.mean_fewer(tried[k]) >= 5.0
    assert sorted(set(asked)) == sorted(tried)  # every k measured is recorded, once


def test_unseen_search_without_the_goal_keeps_the_margin() -> None:
    n = 25_600
    measure, _ = steps_from({2999: 0.009, 1 << 30: 0.05}, {1 << 30: 4.0})  # never 5x
    k, steps, met = rb.unseen_search(measure, n, 0.01, 5.0)
    assert not met and 2900 <= k < 3000 and all(rb.mean_cost(s) > 0.01 for s in steps if s.k > k)
    measure, _ = steps_from({1 << 30: 0.05}, {1 << 30: 9.0})  # over the margin everywhere
    assert rb.unseen_search(measure, n, 0.01, 5.0)[0] == 0


@pytest.mark.slow
def test_unseen_folds_are_recorded_deterministic_and_measured_by_bpe_without_the_fold(
    small_blocks: None, tmp_path: Path
) -> None:
    corpus = tmp_path / "t.txt"
    corpus.write_bytes(head_lines("dr.en.txt", 50_000))  # 24 blocks: 3 per part
    with Registry(tmp_path / "r.db") as reg:
        base = reg.train("k", [corpus], BpeOptions(vocab_size=N))
        v = reg.drop_residues(base.ref, "k", corpus, budget=0.01, fewer=3.0, folds="unseen", threads=1)
        again = reg.drop_residues(base.ref, "k2", corpus, budget=0.01, fewer=3.0, folds="unseen", threads=2)
        assert v.content_hash == again.content_hash  # threads never change it
        b = reg.lineage(v.ref)[0].lineage.details["budget"]
        k = b["k"]
        assert b["folds"] == "unseen" and b["rule"] == "folds" and k > 0
        chosen = next(s for s in b["tried"] if s["k"] == k)
        assert b["check_cost"] == pytest.approx(sum(chosen["costs"]) / 4, abs=1e-6) and b["check_cost"] <= 0.01
        assert b["goal_met"] == (b["mean_fewer"] >= 3.0)
        st_base, st = reg.stored(base.ref), reg.stored(v.ref)
        removed = [t.id for t in st.tokens if t.kind == "removed"]
        assert len(removed) == k and st.info.vocab_size == N
        assert [t.bytes for t in st.tokens[:N]] == [t.bytes for t in st_base.tokens]  # BASE's ids kept
        # fold 1 again with the encoder: BPE trained on the six other parts only, judged on them
        blocks = rb.cut_blocks(corpus.read_text(encoding="utf-8"))
        rest = [b for j, b in enumerate(blocks) if j % rb.EIGHTHS not in (1, 5)]
        held = rb.lines_of(blocks[1::4])
        pattern = st_base.info.config["pattern"]
        fold_bpe = rb.train_bpe(iter(["".join(b) for b in rest]), N + k, pattern, 1)
        assert not rb.same_merges(fold_bpe, reg.stored(base.ref).data())  # another BPE: the fold unseen
        judged = [rb.lines_of(blocks[j :: rb.EIGHTHS]) for j in range(rb.EIGHTHS) if j % 4 != 1]
        order = rb.pair_judge([rb.trace(Tokenizer.from_data(fold_bpe, "f"), p, 1) for p in judged], 0.1, 10)
        gone = set(order[:k])
        tokens = [dataclasses.replace(x, kind="removed", count=None) if x.id in gone else x for x in fold_bpe.tokens]
        config = ResidueFreeConfig(fold_bpe.config["pattern"], tuple(sorted(gone))).to_json()
        fold = Tokenizer.from_data(dataclasses.replace(fold_bpe, tokens=tokens, config=config), "fold")
        plain = Tokenizer.from_data(rb.cut_bpe(fold_bpe, N), "plain")
        emitted = sum(map(len, fold.encode_ordinary_batch(held)))
        assert emitted / sum(map(len, plain.encode_ordinary_batch(held))) - 1 == pytest.approx(
            chosen["costs"][1], abs=1e-6
        )
        with pytest.raises(InputError, match="--folds"):
            reg.drop_residues(base.ref, "k", corpus, budget=0.01, folds="unseen")
    shown = Cli(tmp_path / "r.db")("show", v.ref).output
    assert "chosen by unseen folds of t.txt" in shown and "on average (mean" in shown


@pytest.mark.slow
def test_folds_needs_the_folds_rule(corpus: Path, tmp_path: Path) -> None:
    run = Cli(tmp_path / "r.db")
    run("train", "k", corpus, "--vocab-size", N)
    one_error_line(
        run("drop-residues", "k@1", "k", "--text", corpus, "--folds", "unseen", ok=False),
        "--folds is for the folds rule",
    )
    one_error_line(
        run("drop-residues", "k@1", "k", "--text", corpus, "--budget", "1%", "--folds", "unseen", ok=False), "--folds"
    )


def replay(data: TokenizerData, removed: set[int], piece: bytes) -> list[int]:
    """PickyBPE's rule, naively (the reference): the merges in rank order on the piece's bytes,
    each occurrence left to right; right after the merge the removals follow, each occurrence of
    a removed token split into its parents (split again while removed); then the later merges."""
    byte_id = {t.bytes[0]: t.id for t in data.tokens if len(t.bytes) == 1}
    made_of = {m.result: (m.left, m.right) for m in data.merges}
    after = {r.after for r in data.removals}
    syms = [byte_id[b] for b in piece]

    def split(x: int) -> list[int]:
        return [x] if x not in removed else split(made_of[x][0]) + split(made_of[x][1])

    for m in data.merges:
        out, i = [], 0
        while i < len(syms):
            if i + 1 < len(syms) and (syms[i], syms[i + 1]) == (m.left, m.right):
                out.append(m.result)
                i += 2
            else:
                out.append(syms[i])
                i += 1
        syms = out
        if m.rank in after:
            syms = [y for x in syms for y in split(x)]
    return syms


def test_a_refill_learns_new_merges_after_the_removals_and_encodes_as_the_replay(corpus: Path) -> None:
    """`--refill`'s version: BPE M less k tokens (removal events after its last merge), then r
    new merges learned on the text as it segments it; BASE's ids kept, removed ids holes, new
    ids after M, and the encoder gives what replaying merges, removals, new merges gives."""
    big = rb.train_bpe(str(corpus), N, "cl100k", 1)
    pattern = big.config["pattern"]
    lines = corpus.read_text(encoding="utf-8").splitlines(keepends=True)
    tok = Tokenizer.from_data(big, "big")
    order = rb.pair_judge([rb.trace(tok, lines[j::4], 1) for j in range(4)], 0.1, 10)
    k, r = 12, 8
    assert len(order) >= k
    counts = rb.counted(iter(rb.cut_blocks(corpus.read_text(encoding="utf-8"))), pattern, 1)
    v = rb.refilled_version(big, order[:k], counts, r, pattern, 1)
    removed = {t.id for t in v.tokens if t.kind == "removed"}
    assert removed == set(order[:k])
    assert [t.bytes for t in v.tokens[:N]] == [t.bytes for t in big.tokens]  # every id of BPE M kept
    assert [t.id for t in v.tokens[N:]] == list(range(N, N + r))  # new tokens at new ids
    assert len(v.merges) == len(big.merges) + r and v.removals[-1].after == len(big.merges) - 1
    assert not {t.bytes for t in v.tokens[N:]} & {big.tokens[i].bytes for i in removed}  # none comes back
    enc = Tokenizer.from_data(v, "refilled")
    pieces = [p.encode("utf-8") for _, group in rb.pieces_of([lines[:400]], pattern, 1).groups for p in group]
    for p in pieces[:150]:
        assert enc.encode_ordinary(p.decode("utf-8")) == replay(v, removed, p)
    # the first new merge is the most frequent pair of the text as the removals segment it
    cut = Tokenizer.from_data(rb.refilled_version(big, order[:k], counts, 0, pattern, 1), "cut")
    pairs: dict[tuple[int, int], int] = {}
    for piece, n in counts.items():
        ids = cut.encode_ordinary(piece.decode("utf-8"))
        for pair in zip(ids, ids[1:]):
            pairs[pair] = pairs.get(pair, 0) + n
    gone_bytes = {big.tokens[i].bytes for i in removed}  # pairs that would spell a removed token are refused
    best = max(c for (a, b), c in pairs.items() if big.tokens[a].bytes + big.tokens[b].bytes not in gone_bytes)
    first = v.merges[len(big.merges)]
    assert pairs[(first.left, first.right)] == best
    used = {i for ids in enc.encode_ordinary_batch(lines) for i in ids}
    assert not used & removed and used & set(range(N, N + r))


@pytest.mark.slow
def test_unseen_folds_with_a_refill_are_recorded_deterministic_and_keep_base_ids(
    small_blocks: None, tmp_path: Path
) -> None:
    corpus = tmp_path / "t.txt"
    corpus.write_bytes(head_lines("dr.en.txt", 50_000))  # 24 blocks: 3 per part
    with Registry(tmp_path / "r.db") as reg:
        base = reg.train("k", [corpus], BpeOptions(vocab_size=N))
        kw = dict(budget=0.01, fewer=3.0, folds="unseen", refill=0.25)
        v = reg.drop_residues(base.ref, "k", corpus, threads=1, **kw)
        again = reg.drop_residues(base.ref, "k2", corpus, threads=2, **kw)
        assert v.content_hash == again.content_hash  # threads never change it
        b = reg.lineage(v.ref)[0].lineage.details["budget"]
        k, r = b["k"], b["refill"]["r"]
        assert b["refill"]["share"] == 0.25 and r == round(0.25 * k) and k > 0
        st_base, st = reg.stored(base.ref), reg.stored(v.ref)
        removed = {t.id for t in st.tokens if t.kind == "removed"}
        assert len(removed) == k and st.info.vocab_size == N and st.info.config["model"] == "picky"
        assert [t.bytes for t in st.tokens[:N]] == [t.bytes for t in st_base.tokens]  # BASE's ids kept
        assert [t.id for t in st.tokens[N + k - r :]] == list(range(N + k - r, N + k))  # the refill's ids
        lines = corpus.read_text(encoding="utf-8").splitlines(keepends=True)
        used = {i for ids in reg.load(v.ref).encode_ordinary_batch(lines) for i in ids}
        assert not used & removed
        with pytest.raises(InputError, match="--refill"):
            reg.drop_residues(base.ref, "k", corpus, budget=0.01, fewer=3.0, refill=0.25)
    shown = Cli(tmp_path / "r.db")("show", v.ref).output
    assert f"{r:,} of the freed slots learned after the removals" in shown


def test_rejudge_refuses_the_refills_own_residues_and_encodes_as_the_replay(corpus: Path) -> None:
    """`--rejudge`: after the refill, its new tokens in more unions of two parts a residue of
    than before it, and its new tokens made from older tokens whose count rose, are refused and
    the refill learned again without them; the k removals and BPE M's ids stay; the encoder gives
    what replaying merges, removals and new merges gives."""
    big = rb.train_bpe(str(corpus), N, "cl100k", 1)
    pattern = big.config["pattern"]
    lines = corpus.read_text(encoding="utf-8").splitlines(keepends=True)
    parts = [lines[j::4] for j in range(4)]
    tok = Tokenizer.from_data(big, "big")
    order = rb.pair_judge([rb.trace(tok, p, 1) for p in parts], 0.1, 10)
    k, r = 12, 8
    counts = rb.counted(iter(rb.cut_blocks(corpus.read_text(encoding="utf-8"))), pattern, 1)
    start = rb.refilled_version(big, order[:k], counts, 0, pattern, 1)
    v1 = rb.refilled_version(big, order[:k], counts, r, pattern, 1)
    was = rb.pair_votes([rb.trace(Tokenizer.from_data(start, "s"), p, 1) for p in parts], 0.1, 10)
    now = rb.pair_votes([rb.trace(Tokenizer.from_data(v1, "v"), p, 1) for p in parts], 0.1, 10)
    rose = {i for i, c in now.items() if v1.tokens[i].kind != "removed" and c > was.get(i, 0)}
    blamed = {i for i in rose if i >= N} | {m.result for m in v1.merges[len(big.merges) :] if {m.left, m.right} & rose}
    assert blamed  # the refill made residues of its own here (else the test shows nothing)
    v, made = rb.refused_refill(big, order[:k], counts, r, parts, 3, (0.1, 10), pattern, 1)
    assert made[0] == len(blamed) and len(made) <= 3 and (made[-1] == 0 or len(made) == 3)
    refused = {v1.tokens[i].bytes for i in blamed}
    new = [t.bytes for t in v.tokens[N:]]
    assert len(new) == r and not refused & set(new)  # learned again: r merges, none refused
    assert [t.bytes for t in v.tokens[:N]] == [t.bytes for t in v1.tokens[:N]]  # the removals and BPE M's ids unchanged
    assert v.removals == v1.removals
    # the second learning is the first with the refused tokens barred: the same merges up to the first refused one
    first_refused = next(j for j, t in enumerate(v1.tokens[N:]) if t.bytes in refused)
    assert new[:first_refused] == [t.bytes for t in v1.tokens[N : N + first_refused]]
    removed = {t.id for t in v.tokens if t.kind == "removed"}
    enc = Tokenizer.from_data(v, "rejudged")
    pieces = [p.encode("utf-8") for _, group in rb.pieces_of([lines[:400]], pattern, 1).groups for p in group]
    for p in pieces[:150]:
        assert enc.encode_ordinary(p.decode("utf-8")) == replay(v, removed, p)
    used = {i for ids in enc.encode_ordinary_batch(lines) for i in ids}
    assert not used & removed
    assert rb.refused_refill(big, order[:k], counts, r, parts, 3, (0.1, 10), pattern, 2) == (v, made)  # any threads


@pytest.mark.slow
def test_unseen_folds_with_a_rejudged_refill_are_recorded_deterministic_and_keep_base_ids(
    small_blocks: None, tmp_path: Path
) -> None:
    corpus = tmp_path / "t.txt"
    corpus.write_bytes(head_lines("dr.en.txt", 36_000))  # 17 blocks: 2 per part
    with Registry(tmp_path / "r.db") as reg:
        base = reg.train("k", [corpus], BpeOptions(vocab_size=N))
        # (threads never change a refused refill: the fast test above; the search's: the refill's test)
        v = reg.drop_residues(base.ref, "k", corpus, budget=0.01, fewer=3.0, folds="unseen", refill=0.25, rejudge=1)
        b = reg.lineage(v.ref)[0].lineage.details["budget"]
        k, r, rj = b["k"], b["refill"]["r"], b["refill"]["rejudge"]
        assert rj["rounds"] == 1 and len(rj["refused"]) == 1 and "refused" in rj["rule"]
        assert all(len(s["rejudged"]) == 4 and all(len(f) <= 1 for f in s["rejudged"]) for s in b["tried"])
        st_base, st = reg.stored(base.ref), reg.stored(v.ref)
        removed = {t.id for t in st.tokens if t.kind == "removed"}
        assert len(removed) == k and st.info.vocab_size == N and st.info.config["model"] == "picky"
        assert [t.bytes for t in st.tokens[:N]] == [t.bytes for t in st_base.tokens]  # BASE's ids kept
        assert [t.id for t in st.tokens[N + k - r :]] == list(range(N + k - r, N + k))  # the refill's ids
        with pytest.raises(InputError, match="--rejudge"):
            reg.drop_residues(base.ref, "k", corpus, budget=0.01, fewer=3.0, folds="unseen", rejudge=2)
        with pytest.raises(InputError, match="--rejudge"):
            reg.drop_residues(base.ref, "k", corpus, budget=0.01, fewer=3.0, folds="unseen", refill=0.1, rejudge=9)
    shown = Cli(tmp_path / "r.db")("show", v.ref).output
    per_round = ", ".join(f"{x:,}" for x in rj["refused"])
    assert f"the refill's own residues judged in up to 1 rounds (tokens refused per round: {per_round})" in " ".join(
        shown.split()
    )
