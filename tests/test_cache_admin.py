"""`tokreg cache list|verify|prune`: the local cache made visible, with sizes; it follows
XDG_CACHE_HOME (or TOKREG_CACHE); verify removes a damaged file; prune by age."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import tokreg
from tokreg import BpeOptions, Registry
from tokreg.cli import cli
from tokreg.encoding import content_cache


def test_cache_list_verify_prune(
    registry: Registry, small_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    assert content_cache.cache_dir() == tmp_path / "xdg-cache" / "tokreg" / "compiled"
    a = registry.train("a", [small_corpus], BpeOptions(vocab_size=270))
    b = registry.train("b", [small_corpus], BpeOptions(vocab_size=290))
    tokreg.load("a", db=registry.where), tokreg.load("b", db=registry.where)  # cached now

    def run(*args: str, code: int = 0) -> str:
        res = CliRunner().invoke(cli, ["cache", *args], catch_exceptions=False)
        assert res.exit_code == code, res.output
        return res.stdout

    listed = json.loads(run("list", "--json"))
    assert listed["folder"] == str(content_cache.cache_dir())
    sizes = {f["hash"]: f["bytes"] for f in listed["files"]}
    assert sizes == {v.content_hash: len(registry.content(v.content_hash) or b"") for v in (a, b)}
    assert f"2 file(s), {sum(sizes.values()):,} bytes" in run("list")
    # A damaged file: verify says so, removes it, exits 3; the next load rebuilds it.
    p = content_cache.path_of(a.content_hash)
    assert p is not None
    p.write_bytes(p.read_bytes() + b"\x00")
    states = {e["hash"]: e["state"] for e in json.loads(run("verify", "--json", code=3))}
    assert states == {a.content_hash: "removed", b.content_hash: "intact"}
    # Prune by age: only the file cached long ago goes.
    tokreg.load("a", db=registry.where)
    old = time.time() - 40 * 86400
    os.utime(p, (old, old))
    assert "removed 1 file(s)" in run("prune", "--older-than", "30d")
    assert [f["hash"] for f in json.loads(run("list", "--json"))["files"]] == [b.content_hash]
    assert "removed 1 file(s)" in run("prune")
    res = CliRunner().invoke(cli, ["cache", "prune", "--older-than", "soon"])
    assert res.exit_code == 1 and res.output.count("\n") == 1 and "not a duration" in res.output
