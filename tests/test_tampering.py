"""Tampering: each thing that could be changed behind tokreg's back (a token's bytes, a merge, a
score, a special token, a sample's ids, a version's config, the stored content, the on-disk
compiled cache), with the cache cold and warm.

What holds for every kind: `tokreg verify` reports it (exit 3), naming the recorded hash and
what the data hashes to now; a hash-pinned load never encodes with anything but the pinned
content. A load reads only the stored content (one value, checked by its hash) and the version
row: a changed config row or stored content is refused naming both hashes; changed token or
merge rows never reach an encoder (the load gives the pinned ids), and export, diff and
reproduce, which read the rows, refuse them. A tampered cache file is detected, never used, and
rebuilt; the cache reader opens only regular files of plausible size."""

from __future__ import annotations

import json
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

import tokreg
from tokreg import BpeOptions, IntegrityError, Registry, UnigramOptions
from tokreg.encoding import content_cache

from .conftest import Cli

PROBE = "The quick brown fox, 東京 and <|end|> too."


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory, small_corpus_module: Path) -> Path:
    db = tmp_path_factory.mktemp("tamper") / "r.db"
    with Registry(db) as reg:
        reg.train("b", [small_corpus_module], BpeOptions(vocab_size=400, special=("<|end|>",)))
        reg.train("u", [small_corpus_module], UnigramOptions(vocab_size=400))
        with reg.engine.connect() as c:
            c.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    return db


@pytest.fixture(scope="module")
def small_corpus_module(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from .conftest import DATA

    src = DATA / "kjv.txt"
    p = tmp_path_factory.mktemp("corpus") / "small.txt"
    if src.exists():
        p.write_bytes(src.read_bytes()[:60_000])
    else:
        import sysconfig

        p.write_text(Path(sysconfig.get_path("stdlib"), "difflib.py").read_text(encoding="utf-8")[:60_000])
    return p


@pytest.fixture
def project(template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """A copy of the registry, a fresh cache, and a project that pins b and u by hash."""
    db = tmp_path / "r.db"
    shutil.copyfile(template, db)
    monkeypatch.setenv("TOKREG_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("TOKREG_DB", str(db))
    work = tmp_path / "project"
    work.mkdir()
    monkeypatch.chdir(work)
    reg = Registry(db)
    reg.pin("b@1", work)
    reg.pin("u@1", work)
    ids = {n: tokreg.load(n).encode(PROBE, allowed_special="all") for n in ("b", "u")}
    for f in (tmp_path / "cache").glob("*"):
        f.unlink()  # cold unless a test warms it
    yield {"db": db, "reg": reg, "ids": ids, "cache": tmp_path / "cache"}
    reg.close()


def _sql(reg: Registry, stmt: str, **params: Any) -> None:
    with reg.engine.begin() as conn:
        conn.execute(text(stmt), params)


def _vid(reg: Registry, ref: str) -> int:
    return reg.resolve(ref).id


def tamper_config(reg: Registry, ref: str) -> None:
    v = reg.resolve(ref)
    config = dict(v.config)
    config["pattern"] = r"\S+|\s+"  # a different pre-tokenizer: different ids if it were used
    _sql(reg, "UPDATE versions SET config = :c WHERE id = :i", c=json.dumps(config), i=v.id)


ROW_KINDS: dict[str, tuple[str, str]] = {
    "token bytes": ("b@1", "UPDATE tokens SET bytes = X'00ff' WHERE id = 300 AND version_id = :i"),
    "merge": ("b@1", "UPDATE merges SET right_id = left_id WHERE rank = 3 AND version_id = :i"),
    "score": (
        "u@1",
        "UPDATE tokens SET score = score + 1.5 WHERE version_id = :i AND id = "
        "(SELECT min(id) FROM tokens WHERE version_id = :i AND kind = 'normal')",
    ),
    "special token": ("b@1", "UPDATE tokens SET bytes = X'3c7c656e647c3f' WHERE kind = 'special' AND version_id = :i"),
}


def _verify_line(db: Path, ref: str) -> list[str]:
    res = Cli(db)("verify", ref, ok=False)
    assert res.exit_code == 3, res.output
    assert "Traceback" not in res.output and f"FAILED {ref}" in res.output
    return [x.strip() for x in res.output.splitlines() if x.startswith("       ")]


@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
@pytest.mark.parametrize("kind", sorted(ROW_KINDS))
def test_changed_rows_are_reported_and_never_encode(project: dict[str, Any], kind: str, warm: bool) -> None:
    reg, db = project["reg"], project["db"]
    ref, stmt = ROW_KINDS[kind]
    v = reg.resolve(ref)
    if warm:
        tokreg.load(ref)
    _sql(reg, stmt, i=v.id)
    problems = _verify_line(db, ref)
    assert any(v.content_hash in p and "rows hash to xxh3-128:" in p for p in problems), problems
    # The pinned load encodes with the pinned content, which the changed rows never reach.
    tok = tokreg.load(ref.split("@")[0])
    assert tok.hash == v.content_hash
    assert tok.encode(PROBE, allowed_special="all") == project["ids"][ref.split("@")[0]]
    # What reads the rows refuses them, naming both hashes.
    with pytest.raises(
        IntegrityError, match=f"hashes to xxh3-128:[0-9a-f]{{32}}, but its version row says {v.content_hash}"
    ):
        reg.export(ref, "tokreg", project["cache"].parent / "out.json")
    res = Cli(db)("diff", ref, ref, ok=False)
    assert res.exit_code == 3 and v.content_hash in res.output


@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
def test_a_changed_config_row_is_refused_naming_both_hashes(project: dict[str, Any], warm: bool) -> None:
    reg, db = project["reg"], project["db"]
    v = reg.resolve("b@1")
    if warm:
        tokreg.load("b")
    tamper_config(reg, "b@1")
    problems = _verify_line(db, "b@1")
    assert any("config is not the hashed one" in p for p in problems), problems
    if warm:  # the pin is its hash: the verified cache copy is the pinned content, row or no row
        assert tokreg.load("b").encode(PROBE, allowed_special="all") == project["ids"]["b"]
        assert Cli(db)("encode", "b", "hello").exit_code == 0
    else:
        with pytest.raises(IntegrityError) as e:
            tokreg.load("b")
        assert e.value.expected == v.content_hash and e.value.actual not in (None, v.content_hash)
        assert v.content_hash in str(e.value) and str(e.value.actual) in str(e.value)
        res = Cli(db)("encode", "b", "hello", ok=False)
        assert res.exit_code == 3 and len(res.output.strip().splitlines()) == 1
    # What reads the version's rows refuses them, warm or cold.
    with pytest.raises(IntegrityError, match="config"):
        reg.load("b@1")


@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
def test_changed_stored_content_is_refused_or_never_used(project: dict[str, Any], warm: bool) -> None:
    reg, db = project["reg"], project["db"]
    v = reg.resolve("u@1")
    if warm:
        tokreg.load("u")
    _sql(reg, "UPDATE version_contents SET content = CAST(content || X'00' AS BLOB) WHERE version_id = :i", i=v.id)
    problems = _verify_line(db, "u@1")
    assert any("stored content hashes to xxh3-128:" in p and v.content_hash in p for p in problems), problems
    if warm:  # the verified cache copy is used: the same content, byte for byte
        assert tokreg.load("u").encode(PROBE, allowed_special="all") == project["ids"]["u"]
    else:
        with pytest.raises(IntegrityError) as e:
            tokreg.load("u")
        assert e.value.expected == v.content_hash and v.content_hash in str(e.value)


@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
def test_changed_sample_ids_are_reported(project: dict[str, Any], warm: bool) -> None:
    reg, db = project["reg"], project["db"]
    if warm:
        tokreg.load("b")
    _sql(reg, "UPDATE samples SET ids = '[1, 2, 3]' WHERE position = 0 AND version_id = :i", i=_vid(reg, "b@1"))
    assert any("sample 0" in p and "stored [1, 2, 3]" in p for p in _verify_line(db, "b@1"))
    assert tokreg.load("b").encode(PROBE, allowed_special="all") == project["ids"]["b"]


def test_a_tampered_cache_file_is_detected_rebuilt_and_reported(project: dict[str, Any]) -> None:
    reg, db = project["reg"], project["db"]
    v = reg.resolve("b@1")
    tokreg.load("b")
    cached = content_cache.path_of(v.content_hash)
    assert cached is not None and cached.is_file()
    good = cached.read_bytes()
    tampered = good.replace(b'"pattern"', b'"pattern" ', 1)  # still parses; a different hash
    cached.write_bytes(tampered)
    assert tokreg.load("b").encode(PROBE, allowed_special="all") == project["ids"]["b"]
    assert cached.read_bytes() == good  # rebuilt from the stored content
    cached.write_bytes(tampered)
    problems = _verify_line(db, "b@1")
    assert any("compiled-cache file" in p and "removed" in p for p in problems), problems
    assert not cached.exists()
    assert Cli(db)("verify", "b@1").exit_code == 0


@pytest.mark.parametrize("kind", ["fifo", "symlink to /dev/zero", "symlink out of the cache", "huge file"])
def test_the_cache_reader_opens_only_plausible_regular_files(project: dict[str, Any], kind: str) -> None:
    reg = project["reg"]
    v = reg.resolve("b@1")
    cached = content_cache.path_of(v.content_hash)
    assert cached is not None
    cached.parent.mkdir(parents=True, exist_ok=True)
    outside = project["cache"].parent / "outside.content"
    if kind == "fifo":
        os.mkfifo(cached)
    elif kind == "symlink to /dev/zero":
        cached.symlink_to("/dev/zero")
    elif kind == "symlink out of the cache":
        outside.write_bytes(reg.stored("b@1").content)  # even the right bytes are not read through a link
        cached.symlink_to(outside)
    else:
        with open(cached, "wb") as fh:
            fh.truncate(content_cache.MAX_BYTES + 1)  # sparse: no disk used
    done: list[Any] = []
    t = threading.Thread(target=lambda: done.append(tokreg.load("b").encode(PROBE, allowed_special="all")), daemon=True)
    t.start()
    t.join(60)
    assert done == [project["ids"]["b"]], "the load hung or failed"
    assert cached.is_file() and not cached.is_symlink() and content_cache.get(v.content_hash) is not None
