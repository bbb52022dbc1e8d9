"""Superword BPE (SuperBPE, `--algo superbpe`): two stages recorded merge by merge, encoding that
replays them (checked against a plain-Python reading of the rule), determinism, and exports
refused in one line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tokreg import BpeOptions, Registry, SuperwordOptions
from tokreg.errors import InputError
from tokreg.training import round_trip
from tokreg.training.corpus import Corpus

from .conftest import DATA, Cli, one_error_line


def _corpus(tmp_path: Path, lines: int = 400) -> Path:
    text = (DATA / "dr.en.txt").read_text(encoding="utf-8").splitlines(keepends=True)[:lines]
    p = tmp_path / "en.txt"
    p.write_text("".join(text), encoding="utf-8")
    return p


def _reference_ids(reg: Registry, ref: str, text: str) -> list[int]:
    """The rule read off the recorded rows: runs of up to K pieces (a piece with a line break alone),
    each piece by stage 1 (a plain byte-level version of the tokens below t), then stage 2's
    merges by rank, leftmost first, over the run."""
    data = reg.stored(ref).data()
    cfg = data.config
    t, m1, k = cfg["transition"], cfg["stage1_merges"], cfg["max_words"]
    by_bytes = {tok.bytes: tok.id for tok in data.tokens if tok.id < t}
    ranks2 = {(m.left, m.right): (m.rank, m.result) for m in data.merges[m1:]}

    def stage1_ids(piece: bytes) -> list[int]:
        parts = [bytes([b]) for b in piece]
        while True:  # tiktoken's rule: join the adjacent pair whose join has the lowest rank
            joins = [(by_bytes[a + b], i) for i, (a, b) in enumerate(zip(parts, parts[1:])) if a + b in by_bytes]
            if not joins:
                break
            _, i = min(joins)
            parts[i : i + 2] = [parts[i] + parts[i + 1]]
        return [by_bytes[p] for p in parts]

    import regex  # the pattern's own engine, as tiktoken uses it

    pieces = [m.group(0) for m in regex.finditer(cfg["pattern"], text)]
    runs: list[list[str]] = []
    cur: list[str] = []
    for p in pieces:
        if "\n" in p or "\r" in p:
            if cur:
                runs.append(cur)
                cur = []
            runs.append([p])
            continue
        cur.append(p)
        if len(cur) == k:
            runs.append(cur)
            cur = []
    if cur:
        runs.append(cur)
    out: list[int] = []
    for run in runs:
        ids = [i for p in run for i in stage1_ids(p.encode())]
        while True:
            cands = [
                (ranks2[(ids[i], ids[i + 1])][0], i) for i in range(len(ids) - 1) if (ids[i], ids[i + 1]) in ranks2
            ]
            if not cands:
                break
            _, i = min(cands)
            ids[i : i + 2] = [ranks2[(ids[i], ids[i + 1])][1]]
        out.extend(ids)
    return out


def test_two_stages_are_recorded_and_encoding_replays_them(registry: Registry, tmp_path: Path) -> None:
    corpus = _corpus(tmp_path)
    v = registry.train("sw", [corpus], SuperwordOptions(vocab_size=700, transition=500, threads=1))
    assert v.config["transition"] == 500 and v.config["max_words"] == 4
    shown = registry.show(v.ref, merges=5)
    st = shown.summary.stages
    assert st is not None and st.transition == 500
    assert st.stage1_merges == v.config["stage1_merges"] == 500 - 256
    assert st.stage1_merges + st.stage2_merges == shown.summary.merges
    assert shown.summary.tokens_by_kind == {"byte": 256, "merged": 700 - 256}
    # stage 1 never crosses a space inside a token; stage 2 does
    data = registry.stored(v.ref).data()
    inner_space = [t.bytes for t in data.tokens if b" " in t.bytes[1:] and t.bytes.strip(b" ")]
    assert inner_space and all(t.id >= 500 for t in data.tokens if t.bytes in inner_space)
    _, rows = registry.sql(f"SELECT stage, count(*) FROM merges_view WHERE tokenizer = '{v.ref}' GROUP BY stage")
    assert sorted(tuple(r) for r in rows) == [(1, st.stage1_merges), (2, st.stage2_merges)]
    tok = registry.load(v.ref)
    lines = (DATA / "dr.en.txt").read_text(encoding="utf-8").splitlines(keepends=True)[400:460]
    text = "".join(lines)
    assert tok.encode(text) == _reference_ids(registry, v.ref, text)
    assert tok.decode(tok.encode(text)) == text
    # fewer tokens than plain BPE of the same size on held-out lines
    plain = registry.load(registry.train("plain", [corpus], BpeOptions(vocab_size=700, threads=1)).ref)
    assert len(tok.encode(text)) < len(plain.encode(text))


def test_same_hash_any_thread_count_and_exports_refused(registry: Registry, tmp_path: Path) -> None:
    corpus = _corpus(tmp_path, 200)
    a = registry.train("d", [corpus], SuperwordOptions(vocab_size=400, threads=1))
    b = registry.train("d", [corpus], SuperwordOptions(vocab_size=400, threads=2))
    assert a.content_hash == b.content_hash and a.config["transition"] == 360
    assert registry.reproduce(a.ref).same  # the recorded options train it again
    for fmt in ("hf", "tiktoken"):
        with pytest.raises(InputError, match="superword BPE .*cannot express") as e:
            registry.export(a.ref, fmt, tmp_path / f"out.{fmt}")
        assert "\n" not in str(e.value)
    with pytest.raises(InputError, match=re.escape("--transition 200")):
        registry.train("d", [corpus], SuperwordOptions(vocab_size=400, transition=200))


def test_the_round_trip_on_counted_runs_is_the_one_on_the_lines(registry: Registry, tmp_path: Path) -> None:
    corpus = _corpus(tmp_path, 200)
    (rec,) = registry.train_corpus("rt", Corpus((corpus,)), SuperwordOptions(vocab_size=400, threads=1))
    got = rec.version.round_trip  # measured on the distinct counted runs
    lines = corpus.read_text(encoding="utf-8").splitlines(keepends=True)
    tok = registry.load(rec.info.ref)
    want = round_trip.measure(tok, [line.encode() for line in lines], whole=True)
    assert got is not None and got.lossless and got == want


def test_cli_trains_shows_refuses_export_and_long_runs_round_trip(run: Cli, db_path: Path, tmp_path: Path) -> None:
    corpus = _corpus(tmp_path, 150)
    run("train", "s", corpus, "--algo", "superbpe", "--vocab-size", 380, "--max-words", 3, "-q")
    out = run("show", "s@1").output
    assert "superword stages: transition t = 342 tokens" in out, out
    one_error_line(run("export", "s@1", "--format", "hf", "-o", tmp_path / "t.json", ok=False), "cannot express")
    testclient = pytest.importorskip("starlette.testclient", reason="the version page needs the serve extra")
    from tokreg.serve import create_app

    with (
        Registry.read_only(db_path) as ro,
        testclient.TestClient(create_app(ro), base_url="http://127.0.0.1:8765") as c,
    ):
        page = c.get("/v/s@1")
        assert page.status_code == 200 and "Superword stages" in page.text and "t = 342 tokens" in page.text
        assert c.get("/v/s@1", headers={"accept": "application/json"}).json()["stages"]["transition"] == 342
    reg = Registry(db_path)
    tok = reg.load("s@1")
    for text in ("a" * 100_000, "the " * 50_000, " \n" * 1000 + "x"):
        assert tok.decode(tok.encode(text)) == text
    reg.close()
