"""`tokreg copy SRC DST`: versions move between registries (SQLite -> PostgreSQL -> SQLite) with
every row that describes them (compared row by row), their hashes, lineage, evaluations and
audits; copying twice changes nothing; a taken `name@N` gets the next number, its origin is
recorded, and a pin by hash still resolves to it; one transaction per version."""

from __future__ import annotations

import json
import os
import subprocess
from datetime import timezone
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import select

import tokreg
from tokreg import BpeOptions, Interrupted, Registry
from tokreg.cli import cli
from tokreg.store import schema, writer
from tokreg.versions import lockfile

#: Tables of rows that belong to one version (by `version_id`), compared row by row.
PER_VERSION = tuple(
    schema.metadata.tables[name]
    for name in (
        "version_contents",
        "tokens",
        "merges",
        "training_rounds",
        "training_runs",
        "samples",
        "evaluations",
        "audits",
        "audit_tokens",
    )
)


@pytest.fixture
def source(registry: Registry, small_corpus: Path) -> Registry:
    """m@1 (trained), m@2 (m@1 extended by tokens), other@1 evaluated and audited, m@2 tagged."""
    registry.train("m", [small_corpus], BpeOptions(vocab_size=300))
    registry.add_tokens("m@1", "m", ["zzqx", "qqzz"])
    registry.train("other", [small_corpus], BpeOptions(vocab_size=280))
    registry.evaluate(["other", "m@1"], [small_corpus], languages=["en"])
    registry.audit("other")
    registry.tag("m@2", "prod")
    return registry


def _plain(row: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for k, v in row.items():
        if hasattr(v, "astimezone"):
            v = (v.replace(tzinfo=timezone.utc) if v.tzinfo is None else v.astimezone(timezone.utc)).isoformat()
        elif isinstance(v, (bytes, memoryview)):
            v = bytes(v).hex()
        out[k] = v
    return out


def snapshot(reg: Registry) -> dict[str, Any]:
    """Every row that describes each version, keyed by its content hash, ids replaced by refs."""
    with reg.engine.connect() as conn:
        versions = {r["id"]: _plain(dict(r)) for r in conn.execute(select(schema.Version)).mappings()}
        ref_of = {i: f"{v['name']}@{v['number']}" for i, v in versions.items()}
        out: dict[str, Any] = {}
        for vid, v in versions.items():
            rows: dict[str, Any] = {"version": {k: x for k, x in v.items() if k not in ("id", "number")}}
            for t in PER_VERSION:
                got = [_plain(dict(r)) for r in conn.execute(select(t).where(t.c.version_id == vid)).mappings()]
                rows[t.name] = sorted(
                    json.dumps({k: x for k, x in r.items() if k not in ("version_id", "id")}, sort_keys=True)
                    for r in got
                )
            line = conn.execute(select(schema.Lineage).where(schema.Lineage.c.version_id == vid)).mappings().first()
            assert line is not None
            rows["lineage"] = {**{k: x for k, x in line.items() if k not in ("version_id", "parent_id")}}
            rows["parent"] = ref_of.get(line["parent_id"])
            out[v["content_hash"]] = rows
        fingerprints = {r["text_fingerprint"] for r in conn.execute(select(schema.Evaluation)).mappings()}
        out["texts"] = sorted(
            json.dumps(_plain(dict(r)), sort_keys=True)
            for r in conn.execute(select(schema.EvalText)).mappings()
            if r["fingerprint"] in fingerprints
        )
    return out


def test_sqlite_to_postgres_to_sqlite_keeps_every_row(source: Registry, pg_db: str, tmp_path: Path) -> None:
    before = snapshot(source)
    pg = Registry(pg_db)
    first = source.copy_to(pg, aliases=True)
    assert [(c.source_ref, c.ref, c.written) for c in first] == [
        ("m@1", "m@1", True),
        ("m@2", "m@2", True),
        ("other@1", "other@1", True),
    ]
    assert snapshot(pg) == before
    again = source.copy_to(pg)  # idempotent: nothing is written twice
    assert [c.written for c in again] == [False, False, False] and snapshot(pg) == before
    back = Registry(tmp_path / "back.db")
    pg.copy_to(back, aliases=True)
    assert snapshot(back) == before
    assert back.aliases("m") == {"prod": 2}
    assert [e.ref for e in back.lineage("m@2")] == ["m@2", "m@1"]
    assert back.evaluations("other") == source.evaluations("other")
    with back.engine.connect() as conn:
        origins = {r["ref"]: r["registry"] for r in conn.execute(select(schema.Origin)).mappings()}
    assert origins == {"m@1": pg.location, "m@2": pg.location, "other@1": pg.location}
    assert [v.content_hash for v in back.versions()] == [v.content_hash for v in source.versions()]
    assert back.load("m@2").encode("zzqx hello") == source.load("m@2").encode("zzqx hello")
    pg.close()
    back.close()


def test_a_taken_number_gets_the_next_and_pins_still_resolve(
    source: Registry, small_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dst = Registry(tmp_path / "team.db")
    dst.train("other", [small_corpus], BpeOptions(vocab_size=260))  # other@1 is taken, by other content
    # Only other@1 (no ancestors to bring): it becomes other@2 there, its origin recorded.
    res = CliRunner().invoke(cli, ["copy", str(source.where), str(dst.where), "other", "--json"])
    assert res.exit_code == 0, res.output
    [c] = json.loads(res.stdout)
    assert (c["source"], c["ref"], c["renumbered"], c["written"]) == ("other@1", "other@2", True, True)
    with dst.engine.connect() as conn:
        [origin] = conn.execute(select(schema.Origin)).mappings().all()
    assert (origin["ref"], origin["content_hash"]) == ("other@1", source.resolve("other@1").content_hash)
    # A project pinned to other@1 by A's registry: the hash is the pin, so it loads from here.
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TOKREG_CACHE", str(tmp_path / "cache"))
    source.pin("other@1")
    pinned = lockfile.current()
    assert pinned is not None
    assert tokreg.load("other", db=dst.where).hash == source.resolve("other@1").content_hash
    with pytest.warns(lockfile.PinLabelWarning, match="holds that content as other@2"):
        assert Registry(dst.where).resolve("other").ref == "other@2"
    # Copying m@2 alone brings its parent first.
    assert [x.ref for x in source.copy_to(dst, ["m@2"])] == ["m@1", "m@2"]
    solo = Registry(tmp_path / "solo.db")
    [only] = source.copy_to(solo, ["m@2"], parents=False)
    assert only.parent_not_copied == "m@1"
    [entry] = solo.lineage("m@2")  # the parent is named, as for a removed one, but not there
    assert (entry.ref, entry.lineage.parent, entry.lineage.parent_exists) == ("m@2", "m@1", False)
    assert entry.lineage.derivation == "added_tokens"
    dst.close()
    solo.close()


@pytest.mark.slow
def test_an_interrupted_copy_leaves_whole_versions(
    source: Registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dst = Registry(tmp_path / "dst.db")
    real = writer._bulk_plain
    calls = {"n": 0}

    def ctrl_c_in_second_version(conn: Any, tbl: Any, version_id: int, columns: dict[str, list[Any]]) -> None:
        if tbl.name == schema.Token.name:
            calls["n"] += 1
            if calls["n"] == 2:
                raise KeyboardInterrupt
        real(conn, tbl, version_id, columns)

    monkeypatch.setattr(writer, "_bulk_plain", ctrl_c_in_second_version)
    with pytest.raises(Interrupted, match=r"versions copied into .*dst.db: m@1; m@2 was being copied"):
        source.copy_to(dst)
    assert [v.ref for v in dst.versions()] == ["m@1"]  # m@2 rolled back whole
    monkeypatch.setattr(writer, "_bulk_plain", real)
    assert [c.written for c in source.copy_to(dst)] == [False, True, True]
    assert snapshot(dst) == snapshot(source)
    dst.close()


@pytest.mark.slow
def test_copy_refusals_are_one_line(source: Registry, tmp_path: Path) -> None:
    def run(*args: str) -> Any:
        return CliRunner().invoke(cli, ["copy", *args])

    for args, code, words in [
        ((str(tmp_path / "none.db"), str(tmp_path / "x.db")), 4, ["no registry at"]),
        ((str(source.where), str(tmp_path / "x.db"), "nosuch"), 4, ["nosuch"]),
        ((str(source.where), str(source.where)), 1, ["same registry"]),
        ((str(source.where), "postgresql://u@/db?host=/nonexistent-socket-dir"), 1, ["nonexistent-socket-dir"]),
    ]:
        res = run(*args)
        lines = [x for x in res.output.splitlines() if x.startswith("tokreg: error:")]
        assert res.exit_code == code and len(lines) == 1 and "Traceback" not in res.output, res.output
        assert all(w in lines[0] for w in words), lines
    ro = tmp_path / "ro.db"
    Registry(ro, create=True).close()
    immutable = os.geteuid() == 0  # root writes whatever the mode: chattr +i stops root too
    if immutable and subprocess.run(["chattr", "+i", ro], capture_output=True).returncode != 0:
        pytest.skip("this file system does not support chattr +i")
    if not immutable:
        ro.chmod(0o444)
    try:
        res = run(str(source.where), str(ro))
        lines = [x for x in res.output.splitlines() if x.startswith("tokreg: error:")]
        assert res.exit_code == 1 and len(lines) == 1 and "read-only" in lines[0], res.output
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", ro], check=True)
        ro.chmod(0o644)
