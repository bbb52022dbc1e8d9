"""`tokreg tokenize` killed at many moments (SIGKILL between any two of its file writes, fsyncs
and renames; Ctrl-C in the middle), then run again: it continues and ends with exactly the
bytes of an uninterrupted run. Real processes, forked from one helper (tests/procs.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tokreg import BpeOptions, Registry

from .conftest import head_lines, slow
from .procs import run_jobs

#: Runs the tokenize call of `SETUP` after patching the moments a kill can land on: every
#: fsync, rename and shard write; at the N-th it SIGKILLs its own process (N = 0: never).
RUN = """
import os, signal, json
from tokreg import Registry
from tokreg.datasets import documents
from tokreg.datasets.writer import tokenize
from tokreg.datasets.options import TokenizeOptions
from tokreg.datasets.formats import ShardWriter
documents.BATCH_BYTES = 3000
N, seen = {n}, [0]
def tick():
    seen[0] += 1
    if seen[0] == N:
        os.kill(os.getpid(), signal.SIGKILL)
def wrap(f):
    def g(*a):
        tick()
        return f(*a)
    return g
reg = Registry({db!r})
tok = reg.load("mini@1")
os.replace, os.fsync, ShardWriter.write = wrap(os.replace), wrap(os.fsync), wrap(ShardWriter.write)
opts = TokenizeOptions(document="line", eos="<|endoftext|>", shard_tokens=4000, format={fmt!r})
tokenize(tok, [{corpus!r}], {out!r}, opts, threads=2)
print(json.dumps({{"moments": seen[0], "files": {{p: open(os.path.join({out!r}, p), "rb").read().hex()
      for p in sorted(os.listdir({out!r}))}}}}))
"""


@pytest.fixture
def setup(tmp_path: Path) -> dict[str, str]:
    corpus = tmp_path / "corpus.txt"
    corpus.write_bytes(head_lines("kjv.txt", 40_000) + head_lines("dr.zh-cn.txt", 20_000))
    db = tmp_path / "reg.db"
    with Registry(db, create=True) as reg:
        reg.train("mini", [corpus], BpeOptions(vocab_size=500, special=("<|endoftext|>",)))
    return {"db": str(db), "corpus": str(corpus), "tmp": str(tmp_path)}


def code(s: dict[str, str], out: str, n: int, fmt: str) -> str:
    return RUN.format(n=n, db=s["db"], corpus=s["corpus"], out=out, fmt=fmt)


def sweep(s: dict[str, str], fmt: str, moments: int) -> dict[str, Any]:
    """Kills a run at `moments` points spread over all of them, resumes each; returns counts."""
    ref = run_jobs([{"code": code(s, f"{s['tmp']}/ref", 0, fmt)}])[0]
    assert ref["status"] == 0, ref["stderr"]
    want = json.loads(ref["stdout"])
    total = want["moments"]
    points = sorted({1 + (total - 1) * k // max(1, moments - 1) for k in range(moments)})
    jobs = []
    for n in points:
        out = f"{s['tmp']}/cut{n}"
        # a second kill, during the resumed run, at a later moment of that run
        jobs.append({"code": code(s, out, n, fmt)})
        jobs.append({"code": code(s, out, max(1, (total - n) // 2), fmt)})
        jobs.append({"code": code(s, out, 0, fmt)})
    results = run_jobs(jobs)
    killed = sum(r["status"] == -9 for r in results[0::3])
    same = 0
    for n, final in zip(points, results[2::3]):
        assert final["status"] == 0, (n, final["stderr"])
        got = json.loads(final["stdout"])["files"]
        assert got == want["files"], f"killed at moment {n} of {total}: the resumed folder differs"
        same += 1
    return {"moments": total, "killed": killed, "same": same, "points": len(points)}


# 48 moments spread over every write, fsync and rename (each killed again while resuming); a sweep
# of 140 (40, 40, 60) gave the same answer when this was written, at three times the cost.
@pytest.mark.parametrize("fmt,moments", [slow("npy", 12), slow("bin", 12), slow("megatron", 24)])
def test_kill_at_many_moments_then_resume_gives_the_uninterrupted_bytes(
    setup: dict[str, str], fmt: str, moments: int
) -> None:
    got = sweep(setup, fmt, moments)
    assert got["killed"] == got["points"] and got["same"] == got["points"], got


@pytest.mark.slow
def test_ctrl_c_is_one_line_and_the_same_command_finishes(setup: dict[str, str], tmp_path: Path) -> None:
    out = str(tmp_path / "ds")
    argv = [
        "tokenize",
        "mini@1",
        setup["corpus"],
        "-o",
        out,
        "--document",
        "line",
        "--shard-tokens",
        "3000",
        "--progress",
        "json",
        "--no-record",
    ]
    env = {"TOKREG_DB": setup["db"]}
    code_ = "from tokreg.datasets import documents\ndocuments.BATCH_BYTES = 2000\nfrom tokreg.console import main\n"
    code_ += f"import sys\nsys.argv = ['tokreg', *{argv!r}]\nmain()\n"
    first, again = run_jobs(
        [{"code": code_, "env": env, "hook": {"at": "progress", "n": 3, "sig": "INT"}}, {"code": code_, "env": env}]
    )
    assert first["fired"] and first["status"] == 130, first
    lines = [x for x in first["stderr"].splitlines() if not x.startswith("{")]
    assert len(lines) == 1 and lines[0].startswith("tokreg: error: interrupted;"), first["stderr"]
    assert re.search(r"keeps (1 complete shard|\d+ complete shards) and", lines[0]), lines[0]
    assert "run the same command again to resume" in lines[0]
    assert again["status"] == 0, again["stderr"]
    progress = [json.loads(x) for x in again["stderr"].splitlines() if x.startswith("{")]
    assert progress and {"documents", "tokens", "done", "total"} <= set(progress[-1])
    assert "resumed and finished" in again["stdout"]
