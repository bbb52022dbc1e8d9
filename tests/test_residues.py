"""LiteToken's residue measure (`tokreg audit --residues`, evaluation/residues.py,
src/encode/trace.rs): the traced merge loop emits exactly the encoder's ids, its formed and
merged counts equal a plain-Python BPE written from the rule (tiktoken's: merge the adjacent
pair whose bytes are the lowest-ranked token, leftmost first), and the measure is stored,
read back, shown and queryable."""

from __future__ import annotations

import base64
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from tokreg import BpeOptions, Registry, Tokenizer, UnigramOptions
from tokreg._core import PATTERNS

from .conftest import Cli, data_file, head_lines, one_error_line, sweep_lines


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Tokenizer]:
    folder = tmp_path_factory.mktemp("residues")
    (folder / "c.txt").write_bytes(head_lines("dr.en.txt", 40_000))
    with Registry(folder / "r.db") as reg:
        reg.train("t", [folder / "c.txt"], BpeOptions(vocab_size=800))
        return folder / "r.db", reg.load("t")


def _reference(tok: Tokenizer, words: list[str]) -> tuple[Counter[int], Counter[int], Counter[int]]:
    """Emitted, formed and merged counts of single-piece words, by the rank rule, in Python."""
    rank = {tok.token_bytes(i): i for i in range(tok.vocab_size) if i not in tok.special_tokens.values()}
    emitted: Counter[int] = Counter()
    formed: Counter[int] = Counter()
    merged: Counter[int] = Counter()
    for w in words:
        parts = [bytes([b]) for b in w.encode()]
        while True:
            best = min(
                ((rank[a + b], k) for k, (a, b) in enumerate(zip(parts, parts[1:])) if a + b in rank), default=None
            )
            if best is None:
                break
            k = best[1]
            merged[rank[parts[k]]] += 1
            merged[rank[parts[k + 1]]] += 1
            parts[k : k + 2] = [parts[k] + parts[k + 1]]
            formed[rank[parts[k]]] += 1
        emitted.update(rank[p] for p in parts)
    return emitted, formed, merged


def test_counts_equal_a_python_bpe_and_the_encoders_ids(trained: tuple[Path, Tokenizer]) -> None:
    _, tok = trained
    held = sweep_lines("dr.en.txt")[-300:]
    words = sorted({w for line in held for w in re.findall(r"[A-Za-z]{6,}", line)})[:300]
    emitted, formed, merged = tok.merge_counts(words, threads=2)
    want = _reference(tok, words)
    got = tuple(Counter({i: n for i, n in enumerate(c) if n}) for c in (emitted, formed, merged))
    assert got == want
    emitted, formed, merged = tok.merge_counts(held, threads=2)
    assert Counter({i: n for i, n in enumerate(emitted) if n}) == Counter(
        i for ids in tok.encode_batch(held) for i in ids
    )
    assert all(emitted[i] + merged[i] == formed[i] for i in range(len(formed)) if formed[i] and tok.token_bytes(i)[1:])


@pytest.mark.slow
def test_emitted_counts_are_tiktokens_ids_on_cl100k(tmp_path: Path) -> None:
    """The traced loop on an imported vocabulary: its emitted counts are tiktoken's ids."""
    tiktoken = pytest.importorskip("tiktoken")
    path = data_file("cl100k_base.tiktoken")
    with Registry(tmp_path / "r.db") as reg:
        reg.import_tiktoken("cl", path, preset="cl100k_base")
        tok = reg.load("cl")
    ranks = {base64.b64decode(t): int(r) for t, r in (x.split() for x in path.read_text().splitlines())}
    ref = tiktoken.Encoding("cl100k", pat_str=PATTERNS["cl100k"], mergeable_ranks=ranks, special_tokens={})
    lines = sweep_lines("dr.en.txt")[:2000] + sweep_lines("dr.zh-cn.txt")[:2000] + sweep_lines("kjv.txt")[:1000]
    want = Counter(i for ids in ref.encode_ordinary_batch(lines) for i in ids)
    emitted, _, _ = tok.merge_counts(lines)
    assert Counter({i: n for i, n in enumerate(emitted) if n}) == want


def test_audit_residues_is_stored_shown_and_queryable(trained: tuple[Path, Tokenizer], tmp_path: Path) -> None:
    db, _ = trained
    run = Cli(db)
    held = tmp_path / "held.txt"
    held.write_text("\n".join(sweep_lines("dr.en.txt")[-400:]) + "\n")
    res = run("audit", "t", "--residues", "--text", str(held), "--json")
    report = json.loads(res.output)
    assert report["residue_count"] == len(report["residues"]) and report["stored"] is False
    assert all(r["final"] < 0.1 * (r["final"] + r["intermediate"]) for r in report["residues"])
    assert all(r["final"] + r["intermediate"] >= 10 for r in report["residues"])
    again = json.loads(run("audit", "t", "--residues", "--text", str(held), "--json").output)
    assert again["stored"] is True and again["residues"] == report["residues"]
    loose = json.loads(run("audit", "t", "--residues", "--text", str(held), "--below", "0.5", "--json").output)
    assert loose["residue_count"] >= report["residue_count"]
    sql = run(
        "sql",
        "SELECT count(*) AS n FROM residue_tokens WHERE final < 0.1 * (final + intermediate) "
        "AND final + intermediate >= 10",
        "--json",
    )
    assert json.loads(sql.output)[0]["n"] == report["residue_count"]
    shown = json.loads(run("show", "t", "--json").output)
    assert [r["residues"] for r in shown["residues"]] == [report["residue_count"]]
    assert "residues" in run("show", "t").output
    one_error_line(run("audit", "t", "--residues", ok=False), "--text")
    with Registry(db) as src, Registry(tmp_path / "copy.db") as dst:  # copied with the version
        src.copy_to(dst, ["t"])
        copied = dst.residues("t", held)
    assert copied.stored and copied.residues == Registry(db).residues("t", held).residues


@pytest.mark.slow
def test_a_unigram_version_is_refused_in_one_line(run: Cli, tmp_path: Path) -> None:
    corpus = tmp_path / "c.txt"
    corpus.write_bytes(head_lines("dr.en.txt", 20_000))
    with Registry(run.db) as reg:
        reg.train("u", [corpus], UnigramOptions(vocab_size=400))
    one_error_line(run("audit", "u", "--residues", "--text", str(corpus), ok=False), "Unigram", "residues")
