"""`tokreg eval` / `Registry.evaluate`: results stored as rows and read back instead of measured
again, parity on parallel texts, the table with the best values marked, the chart, and bad
input refused with one line and nothing stored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tokreg import BpeOptions, Registry, WordPieceOptions
from tokreg.evaluation.metrics import METRICS

from .conftest import Cli, head_lines, one_error_line
from .test_bad_input import snapshot

EN = "In the beginning God created the heaven and the earth.\nAnd the earth was without form.\n"
DE = "Im Anfang schuf Gott Himmel und Erde.\nUnd die Erde war wüst und leer.\n"


@pytest.fixture
def two(registry: Registry, small_corpus: Path) -> Registry:
    registry.train("m", [small_corpus], BpeOptions(vocab_size=300))
    registry.train("m", [small_corpus], BpeOptions(vocab_size=400))
    return registry


@pytest.fixture
def texts(tmp_path: Path) -> list[Path]:
    (tmp_path / "en.txt").write_text(EN, encoding="utf-8")
    (tmp_path / "de.txt").write_text(DE, encoding="utf-8")
    return [tmp_path / "en.txt", tmp_path / "de.txt"]


def test_results_are_stored_and_read_back(two: Registry, texts: list[Path]) -> None:
    first = two.evaluate(["m@1", "m@2"], texts, languages=["en", "de"])
    assert [(s.ref, s.text.name, s.stored) for s in first.scores] == [
        ("m@1", "en.txt", False),
        ("m@1", "de.txt", False),
        ("m@2", "en.txt", False),
        ("m@2", "de.txt", False),
    ]
    # one row per version, text and metric, readable by name@N in the view
    _, rows = two.sql(
        "SELECT tokenizer, text, language, metric, value FROM evaluations_view ORDER BY tokenizer, text, metric"
    )
    assert len(rows) == 4 * len(METRICS)
    want = {(s.ref, s.text.name, m): v for s in first.scores for m, v in s.metrics.items()}
    assert {(r[0], r[1], r[3]): r[4] for r in rows} == want
    assert {r[2] for r in rows if r[1] == "de.txt"} == {"de"}
    # a language given later relabels the text; none given keeps the label
    two.evaluate(["m@1"], texts, languages=["en", "de-CH"])
    assert two.sql("SELECT DISTINCT language FROM evaluations_view WHERE text = 'de.txt'")[1] == [("de-CH",)]
    # again: read from the registry, same values, nothing measured
    again = two.evaluate(["m@1", "m@2"], texts)
    assert all(s.stored for s in again.scores) and again.scores[1].text.language is None
    assert [s.metrics for s in again.scores] == [s.metrics for s in first.scores]
    assert [s.text.fingerprint for s in again.scores] == [s.text.fingerprint for s in first.scores]
    # --recompute measures again and replaces the rows (still one per metric)
    fresh = two.evaluate(["m@2"], texts[:1], recompute=True)
    assert not fresh.scores[0].stored and fresh.scores[0].metrics == first.scores[2].metrics
    assert two.sql("SELECT count(*) FROM evaluations")[1][0][0] == 4 * len(METRICS)


def test_a_changed_text_is_a_new_text(two: Registry, texts: list[Path]) -> None:
    two.evaluate(["m@1"], texts[:1])
    texts[0].write_text(EN + "One more line.\n", encoding="utf-8")
    ev = two.evaluate(["m@1"], texts[:1])
    assert not ev.scores[0].stored
    assert two.sql("SELECT count(DISTINCT text_fingerprint) FROM evaluations")[1][0][0] == 2


def test_removing_a_version_removes_its_results(two: Registry, texts: list[Path]) -> None:
    two.evaluate(["m@1", "m@2"], texts[:1])
    two.remove("m@1")
    assert two.sql("SELECT DISTINCT tokenizer FROM evaluations_view")[1] == [("m@2",)]


def test_parity_on_parallel_texts(two: Registry, texts: list[Path]) -> None:
    ev = two.evaluate(["m@1", "m@2"], texts, languages=["en", "de"], parallel=True)
    tokens = {(s.ref, s.text.language): s.metrics["tokens"] for s in ev.scores}
    for p in ev.parity:
        assert p.reference == "en" and p.premiums["en"] == 1.0
        assert p.premiums["de"] == tokens[(p.ref, "de")] / tokens[(p.ref, "en")]
        assert p.spread == max(p.premiums.values()) / min(p.premiums.values())
    # with German as the reference the premiums change, the spread does not
    de = two.evaluate(["m@1", "m@2"], texts, languages=["en", "de"], parallel=True, reference="de")
    assert [p.spread for p in de.parity] == pytest.approx([p.spread for p in ev.parity])
    assert de.parity[0].premiums["en"] == pytest.approx(1 / ev.parity[0].premiums["de"])
    _, rows = two.sql(
        "SELECT tokenizer, text, metric, value, reference_language FROM evaluations_view "
        "WHERE metric IN ('premium', 'premium_spread') ORDER BY tokenizer, metric, text"
    )
    assert rows[:3] == [
        ("m@1", "de.txt", "premium", 1.0, "de"),
        ("m@1", "en.txt", "premium", pytest.approx(de.parity[0].premiums["en"]), "de"),
        ("m@1", "en.txt + de.txt", "premium_spread", pytest.approx(de.parity[0].spread), "de"),
    ]


def test_unknown_rate_counts_the_unknown_token(registry: Registry, small_corpus: Path, tmp_path: Path) -> None:
    registry.train("wp", [small_corpus], WordPieceOptions(vocab_size=300, lowercase=True))
    t = tmp_path / "snow.txt"
    t.write_text("the snowman ☃ and ☃☃ the end\n", encoding="utf-8")
    m = registry.evaluate(["wp"], [t]).scores[0].metrics
    tok = registry.load("wp")
    ids = tok.encode_ordinary(t.read_text(encoding="utf-8"))
    assert m["unknown_rate"] == ids.count(tok.special_tokens["[UNK]"]) / len(ids) > 0


def test_cli_table_marks_the_best_and_json(run: Cli, small_corpus: Path, texts: list[Path], tmp_path: Path) -> None:
    run("train", "m", small_corpus, "--vocab-size", 300, "-q")
    run("train", "m", small_corpus, "--vocab-size", 400, "-q")
    args = ["eval", "m@1", "m@2", "--text", texts[0], "--lang", "en", "--text", texts[1], "--lang", "de"]
    out = run(*args, "--parallel").output
    lines = out.splitlines()
    assert lines[0].split()[:5] == ["VERSION", "TEXT", "LANG", "LOSSLESS", "TOKENS"]
    rows = [x.split() for x in lines[1:5]]
    assert [r[:4] for r in rows] == [
        ["m@1", "en.txt", "en", "yes"],
        ["m@2", "en.txt", "en", "yes"],
        ["m@1", "de.txt", "de", "yes"],
        ["m@2", "de.txt", "de", "yes"],
    ]
    # the larger vocabulary needs fewer tokens: its count is the one marked on each text
    assert rows[1][4].endswith("*") and not rows[0][4].endswith("*")
    assert "LOSSY" not in out
    assert "the best value of each column" in out and "parity: tokens relative to en" in out
    assert "read from the registry" not in out
    d = json.loads(run(*args, "--json").output)
    assert [s["stored"] for s in d["scores"]] == [True] * 4 and d["parity"] == []
    assert set(d["scores"][0]["metrics"]) == {m.name for m in METRICS}
    assert "4 of 4 results read from the registry" in run(*args).output


def test_plot_is_a_png(run: Cli, small_corpus: Path, texts: list[Path], tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    run("train", "m", small_corpus, "--vocab-size", 300, "-q")
    run("train", "m", small_corpus, "--vocab-size", 400, "-q")
    png = tmp_path / "eval.png"
    out = run(
        "eval", "m@1", "m@2", "--text", texts[0], "--lang", "en", "--text", texts[1], "--lang", "de", "--plot", png
    )
    assert f"wrote the chart to {png}" in out.output
    raw = png.read_bytes()
    assert raw[:8] == b"\x89PNG\r\n\x1a\n"
    width = int.from_bytes(raw[16:20], "big")
    assert width > 1200  # two panels: by language, and tokens per byte against vocab size


def test_chart_line_has_one_point_per_size(two: Registry, small_corpus: Path, texts: list[Path]) -> None:
    """Two versions of one size are not joined by a vertical stroke: the line takes the latest
    version of each size, the earlier one is a loose point beside it."""
    from tokreg.evaluation.charts import _by_size, _labels

    two.train("m", [small_corpus], BpeOptions(vocab_size=300, pattern="gpt2"))  # m@3: 300 again
    ev = two.evaluate(["m@1", "m@2", "m@3"], texts[:1])
    lines = _by_size(ev.scores, _labels(ev.scores))
    assert [[s.ref for s in line] for line, _ in lines.values()] == [["m@3", "m@2"]]
    assert [[s.ref for s in loose] for _, loose in lines.values()] == [["m@1"]]
    # a name whose versions all have one size draws no line at all
    one = two.evaluate(["m@1", "m@3"], texts[:1])
    assert _by_size(one.scores, _labels(one.scores)) == {}


BAD = {
    "not utf-8": (["--text", "{tmp}/latin1.txt"], ["latin1.txt", "not UTF-8 at byte 3"]),
    "empty text": (["--text", "{tmp}/blank.txt"], ["blank.txt", "empty"]),
    "missing text": (["--text", "{tmp}/nope.txt"], ["nope.txt", "does not exist"]),
    "unknown ref": (["--text", "{tmp}/ok.txt", "nosuch"], ["nosuch", "base"]),
    "lang count": (
        ["--text", "{tmp}/ok.txt", "--text", "{tmp}/ok2.txt", "--lang", "en"],
        ["--lang was given 1 time(s) for 2 --text file(s)"],
    ),
    "bad lang": (["--text", "{tmp}/ok.txt", "--lang", "english please"], ["'english please'", "language code"]),
    "parallel without lang": (["--text", "{tmp}/ok.txt", "--text", "{tmp}/ok2.txt", "--parallel"], ["--lang"]),
    "parallel one text": (["--text", "{tmp}/ok.txt", "--lang", "en", "--parallel"], ["two or more"]),
    "reference not given": (
        [
            "--text",
            "{tmp}/ok.txt",
            "--lang",
            "en",
            "--text",
            "{tmp}/ok2.txt",
            "--lang",
            "de",
            "--parallel",
            "--reference",
            "fr",
        ],
        ["'fr'", "en, de"],
    ),
    "same text twice": (["--text", "{tmp}/ok.txt", "--text", "{tmp}/ok.txt"], ["same text", "once"]),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_stores_nothing(case: str, run: Cli, db_path: Path, small_corpus: Path, tmp_path: Path) -> None:
    run("train", "base", small_corpus, "--vocab-size", 300, "-q")
    (tmp_path / "latin1.txt").write_bytes(b"caf\xe9 au lait\n")
    (tmp_path / "blank.txt").write_text(" \n\n")
    (tmp_path / "ok.txt").write_text(EN)
    (tmp_path / "ok2.txt").write_text(DE)
    before = snapshot(db_path)
    args, needles = BAD[case]
    argv = [a.format(tmp=tmp_path) for a in args]
    refs = [] if case == "unknown ref" else ["base"]
    one_error_line(run("eval", *refs, *argv, ok=False), *needles)
    assert snapshot(db_path) == before


def test_real_parallel_text(registry: Registry, small_corpus: Path, tmp_path: Path) -> None:
    # the heads of the English and Chinese Debian Reference: a byte-level vocabulary trained
    # mostly on English pays a premium for Chinese, and the measures say so
    en, zh = tmp_path / "dr.en.txt", tmp_path / "dr.zh-cn.txt"
    en.write_bytes(head_lines("dr.en.txt", 20_000))
    zh.write_bytes(head_lines("dr.zh-cn.txt", 20_000))
    registry.train("kjv", [small_corpus], BpeOptions(vocab_size=500))
    ev = registry.evaluate(["kjv"], [en, zh], languages=["en", "zh"], parallel=True)
    m_en, m_zh = (s.metrics for s in ev.scores)
    assert m_zh["bytes_per_token"] < m_en["bytes_per_token"] and m_zh["fertility"] > m_en["fertility"]
    assert ev.parity[0].premiums["zh"] > 1.0


def test_a_lossy_version_is_marked_and_never_best_on_compression(run: Cli, small_corpus: Path, tmp_path: Path) -> None:
    """A Unigram without byte fallback needs fewer tokens on a text of many short lines (one
    `<unk>` per line break and the unseen characters beside it): it is marked LOSSY, the best
    of each compression column is the lossless version's, and the lossy one's is marked `!`."""
    run("train", "ug", small_corpus, "--algo", "unigram", "--vocab-size", 500, "--no-byte-fallback", "-q")
    run("train", "ug", small_corpus, "--algo", "unigram", "--vocab-size", 500, "-q")
    text = tmp_path / "lines.txt"
    text.write_text("".join(f"\t{w} ☃ {n}\n" for n, w in enumerate(["Lord", "earth", "heaven", "God"] * 30)), "utf-8")
    args = ["eval", "ug@1", "ug@2", "--text", text]
    d = json.loads(run(*args, "--json").output)
    lossy, kept = d["scores"]
    assert (lossy["lossless"], kept["lossless"]) == (False, True)
    assert lossy["metrics"]["lost_lines"] == 1.0 and lossy["metrics"]["unknown_rate"] > 0
    assert kept["metrics"]["lost_lines"] == kept["metrics"]["unknown_rate"] == 0.0
    assert lossy["metrics"]["tokens"] < kept["metrics"]["tokens"]  # the case this test is about
    compression = {m.name for m in METRICS if m.compression}
    assert "tokens" in kept["best"] and "tokens" in lossy["lossy_ahead"]
    assert not compression & set(lossy["best"]) and not set(kept["lossy_ahead"])
    out = run(*args).output.splitlines()
    rows = {r.split()[0]: r.split() for r in out[1:3]}
    # version, text, (no language), lossless, tokens, ...
    assert rows["ug@1"][2] == "LOSSY" and rows["ug@1"][3].endswith("!")
    assert rows["ug@2"][2] == "yes" and rows["ug@2"][3].endswith("*")
    assert any(x.startswith("! fewer tokens than the best lossless version") for x in out)
