"""`verify`: every version's hash recomputed from its rows, and its stored sample strings
re-encoded; any mismatch is reported and the CLI exits non-zero."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import text

from tokreg import BpeOptions, Registry
from tokreg.versions.samples import SAMPLES

from .conftest import Cli


@pytest.fixture
def reg(registry: Registry, small_corpus: Path) -> Registry:
    registry.train("v", [small_corpus], BpeOptions(vocab_size=300))
    registry.train("v", [small_corpus], BpeOptions(vocab_size=300, char_level=True))
    return registry


def _sql(reg: Registry, stmt: str) -> None:
    with reg.engine.begin() as conn:
        conn.execute(text(stmt))


def test_samples_are_stored_at_creation_and_cover_the_hard_cases(reg: Registry) -> None:
    _, rows = reg.sql(
        "SELECT v.number, s.position, s.text, s.ids FROM samples s JOIN versions v ON v.id = s.version_id "
        "ORDER BY v.number, s.position"
    )
    assert [r[2] for r in rows[: len(SAMPLES)]] == list(SAMPLES)
    joined = "".join(SAMPLES)
    assert any(ord(c) > 0x3000 for c in joined) and any(ord(c) > 0x1F000 for c in joined) and "\t\t" in joined
    tok = reg.load("v@1")
    assert all(json.loads(r[3]) == tok.encode_ordinary(r[2]) for r in rows if r[0] == 1)


def test_intact_registry_verifies(reg: Registry) -> None:
    results = reg.verify()
    assert [(r.ref, r.ok, r.samples) for r in results] == [("v@1", True, 6), ("v@2", True, 6)]
    assert [r.ref for r in reg.verify("v@1")] == ["v@1"]


def test_a_changed_row_is_reported(reg: Registry) -> None:
    _sql(
        reg,
        "UPDATE merges SET right_id = left_id WHERE rank = 3 AND version_id = "
        "(SELECT id FROM versions WHERE number = 1)",
    )
    bad = {r.ref: r for r in reg.verify()}
    assert not bad["v@1"].ok and bad["v@2"].ok
    assert "rows hash to xxh3-128:" in bad["v@1"].problems[0]
    assert bad["v@1"].recomputed != bad["v@1"].hash


def test_changed_sample_ids_are_reported(reg: Registry) -> None:
    _sql(
        reg,
        "UPDATE samples SET ids = '[1, 2, 3]' WHERE position = 2 AND version_id = "
        "(SELECT id FROM versions WHERE number = 2)",
    )
    r = reg.verify("v@2")[0]
    assert not r.ok and list(r.problems) == [
        f"sample 2 ({SAMPLES[2][:30]!r}) encodes to "
        f"{_short(reg.load('v@2').encode_ordinary(SAMPLES[2]))}, stored [1, 2, 3]"
    ]


def _short(ids: list[int]) -> str:
    return str(ids) if len(ids) <= 8 else "[" + ", ".join(map(str, ids[:8])) + ", …]"


def test_cli_verify_exit_codes(run: Cli, reg: Registry) -> None:
    out = run("verify").output
    assert out.count("ok ") == 2 and "6 sample(s) re-encoded" in out
    assert all(r["ok"] for r in json.loads(run("verify", "--json").output))
    _sql(
        reg,
        "UPDATE tokens SET bytes = X'41' WHERE id = 0 AND version_id = (SELECT id FROM versions WHERE number = 1)",
    )
    res = run("verify", ok=False)
    assert res.exit_code == 3
    assert "FAILED v@1" in res.output and "1 of 2 version(s) failed verification: v@1" in res.output
    assert run("verify", "v@2").exit_code == 0


def test_a_directory_in_the_compiled_cache_is_a_note_not_a_failure(
    run: Cli, reg: Registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tokreg.encoding import content_cache

    monkeypatch.setenv("TOKREG_CACHE", str(tmp_path / "cache"))
    where = content_cache.path_of(reg.resolve("v@1").content_hash)
    assert where is not None
    if where.exists():
        where.unlink()
    where.mkdir(parents=True)
    for _ in range(2):  # the registry is intact: verify passes on every run, and leaves the folder alone
        out = run("verify").output
        assert out.count("ok ") == 2 and "removed" not in out
        assert out.count("is not a regular file") == 1 and where.is_dir()
    assert reg.load("v@1").encode("hello") == reg.load("v@1").encode("hello")


def test_a_damaged_cache_file_is_reported_removed_only_when_it_was(
    reg: Registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tokreg.encoding import content_cache

    monkeypatch.setenv("TOKREG_CACHE", str(tmp_path / "cache"))
    h = reg.resolve("v@1").content_hash
    reg.load("v@1")  # fills the cache
    where = content_cache.path_of(h)
    assert where is not None and where.is_file()
    where.write_bytes(b"not the content")
    [result] = reg.verify("v@1")
    assert result.ok is False and any("removed" in p for p in result.problems) and not where.exists()
    [again] = reg.verify("v@1")
    assert again.ok is True and list(again.problems) == [] and list(again.notes) == []
