"""kill -9 at any moment never leaves a partial version, orphan rows, a stale lock or anything
that blocks the next run: real processes are killed during training, at every SQL statement of
recording a version (inside its transaction), just before and just after its commit, during an
import and during `rm`, on SQLite and on PostgreSQL; after each kill the registry opens, every
version in it is whole and verifies, and the next write gets the next number."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .conftest import slow
from .procs import run_jobs, state_check


def crash_sweep(db: str, corpus: Path, tmp_path: Path, stride: int = 1) -> tuple[int, list[dict[str, Any]]]:
    check = state_check(db)  # run in the helper itself ("inline"): it starts no thread and closes what it opens
    train = ["train", "a", str(corpus), "--vocab-size", "400", "-q", "--db", db]
    hf = tmp_path / "tokenizer.json"
    kill = {"sig": "KILL"}
    jobs: list[dict[str, Any]] = [
        {"cli": train},
        {"cli": train},
        {"cli": ["export", "a@1", "--format", "hf", "-o", str(hf), "--db", db], "check": check, "inline": True},
        # training: reading the corpus and merging
        *[{"cli": train, "hook": {"at": "progress", "n": n, **kill}, "check": check, "inline": True} for n in (1, 3)],
        # recording: every statement of its transaction, the commit, just after it
        {"cli": train, "hook": {"at": "write", **kill}, "each": stride, "check": check, "inline": True},
        {"cli": train, "hook": {"at": "commit", "n": 1, **kill}, "check": check, "inline": True},
        {"cli": train, "hook": {"at": "after_commit", "n": 1, **kill}, "check": check, "inline": True},
        # an import, at every statement of its transaction
        {
            "cli": ["import", "hf", str(hf), "--name", "h", "--db", db],
            "hook": {"at": "write", **kill},
            "each": stride,
            "check": check,
            "inline": True,
        },
        # rm, at every statement (a@2 is removed by the first run that gets to its commit)
        {
            "cli": ["rm", "a@2", "--yes", "--db", db],
            "hook": {"at": "statement", **kill},
            "each": 1,
            "check": check,
            "inline": True,
        },
        # and then the next run works at once, with the next number
        {"cli": train, "check": check, "inline": True},
    ]
    results = run_jobs(jobs, env={"TOKREG_CACHE": str(tmp_path / "cache")})
    flat = [r for res in results for r in res.get("runs", [res])]
    killed = 0
    for r in flat:
        if "check" not in r:
            continue
        state = json.loads(r["check"])
        assert state["exists"] and state["problems"] == [], (r, state)
        if r["status"] == -9:
            killed += 1
        else:
            assert r["status"] == 0, r
    return killed, flat


def _numbers(result: dict[str, Any], name: str) -> list[int]:
    return [int(ref.split("@")[1]) for ref, _ in json.loads(result["check"])["versions"] if ref.startswith(name + "@")]


@pytest.mark.parametrize("stride", [3, slow(1)])  # the fast lane kills at every third statement
def test_kill_9_at_any_moment_sqlite(tmp_path: Path, small_corpus: Path, stride: int) -> None:
    killed, flat = crash_sweep(str(tmp_path / "r.db"), small_corpus, tmp_path, stride=stride)
    assert killed >= 20 // stride, killed
    last = flat[-1]
    assert last["status"] == 0 and "Traceback" not in last["stderr"]
    nums = _numbers(last, "a")
    assert nums == sorted(set(nums)) and 2 not in nums and f"a@{nums[-1]}" in last["stdout"]


@pytest.mark.slow
def test_kill_9_at_any_moment_postgres(pg_db: str, small_corpus: Path, tmp_path: Path) -> None:
    killed, flat = crash_sweep(pg_db, small_corpus, tmp_path, stride=2)  # every other statement; SQLite: all
    assert killed >= 20, killed
    last = flat[-1]
    assert last["status"] == 0 and "Traceback" not in last["stderr"]
    nums = _numbers(last, "a")
    assert nums == sorted(set(nums)) and 2 not in nums and f"a@{nums[-1]}" in last["stdout"]
