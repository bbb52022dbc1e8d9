"""Parity-aware BPE (`--algo parity-bpe`, arXiv 2508.04796): merges go to the language compressed
worst, recorded per merge and language; the versions are plain byte-level BPE (same hash as
`--algo bpe` for the same merges; exports read by tokenizers and tiktoken give tokreg's ids);
refusals in one line.

Data: slices of the Debian Reference in English and Chinese (the same manual, so a parallel
set), a few hundred lines each: training on the first 300 lines, the next 100 as the parallel set.
The fast lane keeps the hash and refusal checks; the rest runs in `just test`."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from tokreg import BpeOptions, ParityOptions, Registry
from tokreg.errors import InputError
from tokreg.evaluation.metrics import gini
from tokreg.training import counting_local
from tokreg.training.corpus import Corpus

from .conftest import DATA, Cli, one_error_line


def _lines(name: str, start: int, stop: int) -> str:
    return "".join((DATA / name).read_text(encoding="utf-8").splitlines(keepends=True)[start:stop])


@pytest.fixture
def langs(tmp_path: Path) -> dict[str, Path]:
    """en.txt, zh.txt (training) and dev-en.txt, dev-zh.txt (the same lines of both manuals:
    parallel in content, if not line by line)."""
    out = {}
    for code, name in (("en", "dr.en.txt"), ("zh", "dr.zh-cn.txt")):
        for key, (a, b) in ((code, (0, 300)), (f"dev-{code}", (300, 400))):
            p = tmp_path / f"{key}.txt"
            p.write_text(_lines(name, a, b), encoding="utf-8")
            out[key] = p
    return out


def _opts(langs: dict[str, Path], parallel: bool = True, **kw: object) -> ParityOptions:
    lang = (f"en={langs['en']}", f"zh={langs['zh']}")
    dev = (f"en={langs['dev-en']}", f"zh={langs['dev-zh']}") if parallel else ()
    kw.setdefault("threads", 1)
    return ParityOptions(vocab_size=kw.pop("vocab_size", 600), lang=lang, parallel=dev, **kw)  # type: ignore[arg-type]


def _dev_tokens(reg: Registry, ref: str, langs: dict[str, Path]) -> list[int]:
    tok = reg.load(ref)
    return [len(tok.encode(langs[f"dev-{c}"].read_text(encoding="utf-8"))) for c in ("en", "zh")]


@pytest.mark.slow
def test_merges_go_to_the_worst_language_and_narrow_the_gap(registry: Registry, langs: dict[str, Path]) -> None:
    plain = registry.train("plain", [langs["en"], langs["zh"]], BpeOptions(vocab_size=600, threads=1))
    fair = registry.train("fair", [], _opts(langs))
    # Measured by encoding the parallel set, not by the trainer's own numbers:
    ours, theirs = _dev_tokens(registry, fair.ref, langs), _dev_tokens(registry, plain.ref, langs)
    assert gini(ours) < gini(theirs) / 2
    shown = registry.show(fair.ref).to_json()["parity"]
    assert [c["dev_tokens"] for c in shown["languages"]] == ours  # the record is the encoder's count
    assert shown["gini"] == pytest.approx(gini(ours))
    assert sum(c["merges"] for c in shown["languages"]) == 600 - 256 - shown["global_merges"]
    # Each merge went to the language with more development tokens at that moment.
    _, rows = registry.sql(
        "SELECT rank, language, gain, chosen FROM parity_merges_view WHERE tokenizer = 'fair@1' ORDER BY rank, language"
    )
    assert len(rows) == 2 * (600 - 256)
    gains = {(r[0], r[1]): r[2] for r in rows}
    _, merges = registry.sql("SELECT rank, count FROM merges_view WHERE tokenizer = 'fair@1'")
    assert all(gains[(r, "en")] + gains[(r, "zh")] == c for r, c in merges)
    chosen = [(r[0], r[1]) for r in rows if r[3]]
    assert [r for r, _ in chosen] == list(range(600 - 256))  # one language per merge
    assert all(gains[k] > 0 for k in chosen)
    assert {lang for _, lang in chosen} == {"en", "zh"}
    _, view = registry.sql("SELECT language, premium FROM parity_view WHERE tokenizer = 'fair@1' ORDER BY language")
    assert min(p for _, p in view) == 1.0 and max(p for _, p in view) == pytest.approx(max(ours) / min(ours))


def test_global_merges_are_plain_bpe_and_refusals_are_one_line(registry: Registry, langs: dict[str, Path]) -> None:
    plain = registry.train("plain", [langs["en"], langs["zh"]], BpeOptions(vocab_size=500, threads=1))
    hybrid = registry.train("hybrid", [], _opts(langs, vocab_size=500, global_merges=1000))
    assert hybrid.content_hash == plain.content_hash
    assert registry.show(hybrid.ref).parity is not None
    # refused in one line each, before the corpus is read
    with pytest.raises(InputError, match="has no language"):
        registry.train("x", [langs["en"], langs["dev-en"]], _opts(langs))
    with pytest.raises(InputError, match="two or more languages"):
        registry.train("x", [], ParityOptions(vocab_size=400, lang=(f"en={langs['en']}",)))
    with pytest.raises(InputError, match="not in both"):
        registry.train("x", [], ParityOptions(vocab_size=400, lang=_opts(langs).lang, parallel=(f"en={langs['en']}",)))
    with pytest.raises(InputError, match="not CODE=PATH"):
        registry.train("x", [], ParityOptions(vocab_size=400, lang=("en",)))


def test_each_input_is_read_once_and_the_run_records_the_whole_corpus(
    registry: Registry, langs: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    read: list[str] = []
    real = counting_local.count_sources

    def spy(sources, *args, **kw):  # type: ignore[no-untyped-def]
        read.extend(str(s.path) for s in sources)
        return real(sources, *args, **kw)

    monkeypatch.setattr(counting_local, "count_sources", spy)
    (fair,) = registry.train_corpus("fair", Corpus(), _opts(langs, vocab_size=300))
    assert sorted(read) == sorted(str(langs[k]) for k in ("en", "zh", "dev-en", "dev-zh"))
    (plain,) = registry.train_corpus("plain", Corpus((langs["en"], langs["zh"])), BpeOptions(vocab_size=300))
    a, b = registry.show(fair.info.ref).training_run, registry.show(plain.info.ref).training_run
    assert a is not None and b is not None
    assert a["corpus_fingerprint"] == b["corpus_fingerprint"] and a["corpus_files"] == b["corpus_files"]
    assert a["counting"]["pieces"] == b["counting"]["pieces"]
    got, want = fair.version.round_trip, plain.version.round_trip
    assert got is not None and want is not None and got.lossless
    assert (got.lines, got.bytes, got.whole) == (want.lines, want.bytes, want.whole)


def test_the_moving_window_shares_the_merges_and_ignored_options_are_refused(
    registry: Registry, langs: dict[str, Path]
) -> None:
    base = registry.train("base", [], _opts(langs, vocab_size=400))
    window = registry.train("window", [], _opts(langs, vocab_size=400, window=10, window_alpha=1))
    loose = registry.train("loose", [], _opts(langs, vocab_size=400, window=10, window_alpha=2))
    assert loose.content_hash == base.content_hash  # 2 of 2 languages: every merge allowed
    assert window.content_hash != base.content_hash
    _, rows = registry.sql(
        "SELECT rank, language FROM parity_merges_view WHERE tokenizer = 'window@1' AND chosen ORDER BY rank"
    )
    won = [lang for _, lang in rows]
    # a language over half of the last 10 waits, so any 10 in a row hold at most 6 of one
    assert len(won) == 400 - 256
    assert all(max(w.count("en"), w.count("zh")) <= 6 for w in (won[i : i + 10] for i in range(len(won) - 9)))
    for kw, match in (
        ({"sample_bytes": 1000}, "--sample-bytes does not apply"),
        ({"window": -1}, "--window must be"),
        ({"window": 10, "window_alpha": 0}, "--window-alpha must be"),
    ):
        with pytest.raises(InputError, match=match) as e:
            registry.train("x", [], _opts(langs, **kw))
        assert "\n" not in str(e.value)
    with pytest.raises(InputError, match="--dask does not apply") as e:
        registry.train_corpus("x", Corpus(engine="tcp://127.0.0.1:1"), _opts(langs))
    assert "\n" not in str(e.value)


@pytest.mark.slow
def test_same_hash_any_thread_count_and_without_a_parallel_set(registry: Registry, langs: dict[str, Path]) -> None:
    a = registry.train("a", [langs["en"], langs["zh"]], _opts(langs, parallel=False))
    b = registry.train("b", [], _opts(langs, parallel=False, threads=2))
    assert a.content_hash == b.content_hash
    shown = registry.show(a.ref).to_json()["parity"]
    assert shown["parallel"] is False and shown["gini"] is None
    # The trainer's rule without a parallel set: every language ends near the same bytes per token.
    bpt = [c["train_bytes_per_token"] for c in shown["languages"]]
    assert max(bpt) / min(bpt) < 1.1


@pytest.mark.slow
def test_exports_give_the_same_ids_in_tokenizers_and_tiktoken(
    registry: Registry, langs: dict[str, Path], tmp_path: Path
) -> None:
    tokenizers = pytest.importorskip("tokenizers")
    tiktoken = pytest.importorskip("tiktoken")
    v = registry.train("fair", [], _opts(langs))
    registry.export(v.ref, "hf", tmp_path / "tokenizer.json")
    registry.export(v.ref, "tiktoken", tmp_path / "fair.tiktoken")
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    ranks = {
        base64.b64decode(tok): int(rank)
        for tok, rank in (line.split() for line in (tmp_path / "fair.tiktoken").read_text().splitlines())
    }
    tt = tiktoken.Encoding("fair", pat_str=v.config["pattern"], mergeable_ranks=ranks, special_tokens={})
    ours = registry.load(v.ref)
    lines = [*_lines("dr.en.txt", 400, 500).splitlines(), *_lines("dr.zh-cn.txt", 400, 500).splitlines()]
    for line in lines:
        ids = ours.encode(line)
        assert hf.encode(line, add_special_tokens=False).ids == ids, line
        assert tt.encode_ordinary(line) == ids, line


def test_a_json_field_gives_the_languages_as_files_do(registry: Registry, tmp_path: Path) -> None:
    en, zh = _lines("dr.en.txt", 0, 100).splitlines(), _lines("dr.zh-cn.txt", 0, 100).splitlines()
    (tmp_path / "en.txt").write_text("".join(x + "\n" for x in en), encoding="utf-8")
    (tmp_path / "zh.txt").write_text("".join(x + "\n" for x in zh), encoding="utf-8")
    records = [{"text": t, "lang": c} for pair in zip(en, zh) for c, t in zip(("en", "zh"), pair)]
    (tmp_path / "mixed.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    files = ParityOptions(vocab_size=350, lang=(f"en={tmp_path / 'en.txt'}", f"zh={tmp_path / 'zh.txt'}"))
    by_field = ParityOptions(vocab_size=350, lang_field="lang")
    a = registry.train("files", [], files)
    b = registry.train("records", [tmp_path / "mixed.jsonl"], by_field)
    assert a.content_hash == b.content_hash
    with pytest.raises(InputError, match="not a JSON Lines file"):
        registry.train("x", [tmp_path / "en.txt"], by_field)


@pytest.mark.slow
def test_cli_trains_shows_and_queries(run: Cli, langs: dict[str, Path], tmp_path: Path) -> None:
    run(
        "train", "fair", "--algo", "parity-bpe", "--vocab-size", "500,600", "--threads", "1",
        "--lang", f"en={langs['en']}", "--lang", f"zh={langs['zh']}",
        "--parallel", f"en={langs['dev-en']}", "--parallel", f"zh={langs['dev-zh']}",
    )  # fmt: skip
    out = run("show", "fair@2").output
    assert "parity-aware BPE" in out and "Gini" in out
    shown = json.loads(run("show", "fair@1", "--json").output)["parity"]
    assert [c["language"] for c in shown["languages"]] == ["en", "zh"]
    rows = json.loads(
        run("sql", "SELECT tokenizer, count(*) AS n FROM parity_merges_view GROUP BY tokenizer", "--json").output
    )
    assert {r["tokenizer"]: r["n"] for r in rows} == {"fair@1": 2 * 244, "fair@2": 2 * 344}
    one_error_line(
        run("train", "x", langs["en"], "--vocab-size", "300", "--lang", f"en={langs['en']}", ok=False),
        "--lang applies to",
    )
    res = run("train", "x", langs["en"], "--algo", "parity-bpe", "--vocab-size", "300", "--lang", f"zh={langs['zh']}",
              "--lang", f"en={langs['dev-en']}", ok=False)  # fmt: skip
    one_error_line(res, "en.txt has no language")
