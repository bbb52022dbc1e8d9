"""Ctrl-C tells the truth: at any moment of `tokreg train` (start-up, reading the corpus, each
training step, every SQL statement of the recording, just before and just after the commit,
printing the result), and of `tag` and `rm`, the command ends with one line and exit status
130, and that line says what the registry then holds: "nothing was written" exactly when
nothing was, "NAME@N (HASH) was written" exactly when that version is there, whole. Or, when
the signal comes after the work is done, the command's normal output and status 0.

Signals come from inside the process at chosen points (tests/procs.py hooks) so that "just
after the commit" is hit every time, and from outside at measured delays for start-up."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from .conftest import ROOT
from .procs import run_jobs, state_check

WRITTEN = re.compile(r"^tokreg: error: interrupted after (\S+@\d+) \((xxh3-128:[0-9a-f]{32})\) was written")


def outcome(result: dict[str, Any], before: list[list[str]], name: str) -> str:
    """Checks one interrupted (or finished) run against what the registry holds after it;
    returns which of the three true outcomes it was."""
    state = json.loads(result["check"])
    assert state["problems"] == [], state
    after = state["versions"]
    new = [v for v in after if v not in before]
    err = [x for x in result["stderr"].splitlines() if x.strip() and not x.startswith("created a new registry")]
    assert "Traceback" not in result["stderr"], result["stderr"]
    if result["status"] == 0:
        assert len(new) == 1 and new[0][0].startswith(name + "@") and new[0][0] in result["stdout"], result
        return "finished"
    assert result["status"] == 130 and len(err) == 1, result
    m = WRITTEN.match(err[0])
    if m:
        assert new == [[m.group(1), m.group(2)]], (err[0], new)
        return "written"
    assert "nothing was written" in err[0] and new == [], (err[0], new)
    return "nothing"


def sweep(db: str, corpus: Path, tmp_path: Path, stride: int, moments: int) -> dict[str, int]:
    """SIGINT at every `stride`-th SQL statement of a training run, at its first `moments`
    progress reports, before and just after its commit, and at `moments` delays."""
    base = ["train", "a", str(corpus), "--vocab-size", "600", "-q", "--db", db]
    check = state_check(db, verify_last=1)
    job: dict[str, Any] = {"cli": base, "check": check, "inline": True}
    jobs: list[dict[str, Any]] = [job]
    jobs += [{**job, "hook": {"at": "progress", "n": n}} for n in (1, 2, 3, 5, 8)[:moments]]
    jobs.append({**job, "hook": {"at": "statement"}, "each": stride})
    for at in ("commit", "after_commit"):
        jobs += [{**job, "hook": {"at": at, "n": n}} for n in (1, 2)[: (moments + 1) // 2]]
    jobs += [{**job, "delay": d} for d in (0.05, 0.2, 0.0, 0.02, 0.1)[:moments]]
    results = run_jobs(jobs, env={"TOKREG_CACHE": str(tmp_path / "cache")})
    flat = [results[0]] + [r for res in results[1:] for r in res.get("runs", [res])]
    before = json.loads(results[0]["check"])["versions"]
    assert [v[0] for v in before] == ["a@1"]
    counts = {"finished": 0, "written": 0, "nothing": 0}
    for r in flat[1:]:
        counts[outcome(r, before, "a")] += 1
        before = json.loads(r["check"])["versions"]
    return counts


@pytest.mark.slow
def test_ctrl_c_at_every_moment_of_a_training_sqlite(tmp_path: Path, small_corpus: Path) -> None:
    counts = sweep(str(tmp_path / "r.db"), small_corpus, tmp_path, stride=1, moments=5)
    # Every kind of moment was hit: before the commit, after it, and after the command's end.
    # (The commit is the command's last SQL: `train` prints what it wrote without reading it
    # back, so "just after the commit" is the one moment between the write and the output.)
    assert counts["nothing"] >= 15 and counts["written"] >= 1 and counts["finished"] >= 1, counts


@pytest.mark.slow
def test_ctrl_c_at_every_moment_of_a_training_postgres(pg_db: str, small_corpus: Path, tmp_path: Path) -> None:
    # Every fifth statement and fewer moments: the SQLite test takes them all; this one checks that
    # what is asked of the database after an interruption is answered right by PostgreSQL too.
    # (Tokens and merges go in as a few multi-row INSERTs, so every fifth statement is a handful.)
    counts = sweep(pg_db, small_corpus, tmp_path, stride=5, moments=2)
    assert counts["nothing"] >= 7 and counts["written"] >= 1 and counts["finished"] >= 1, counts


@pytest.mark.slow
def test_ctrl_c_around_tag_and_rm_says_what_happened(tmp_path: Path, small_corpus: Path) -> None:
    db = str(tmp_path / "r.db")
    check = state_check(db)
    train = ["train", "a", str(small_corpus), "--vocab-size", "300", "-q", "--db", db]
    alias = (
        f"import json, tokreg; r = tokreg.Registry({db!r}); print(json.dumps(r.aliases('a') if r._exists else {{}}))"
    )
    jobs: list[dict[str, Any]] = [{"cli": train}, {"cli": train}, {"cli": train}, {"cli": train}]
    jobs.append({"cli": ["tag", "a@1", "prod", "--db", db], "hook": {"at": "statement"}, "each": True, "check": alias})
    jobs.append(
        {
            "cli": ["rm", "a@2", "--yes", "--db", db],
            "hook": {"at": "statement"},
            "each": True,
            "check": check,
            "inline": True,
        }
    )
    results = run_jobs(jobs, env={"TOKREG_CACHE": str(tmp_path / "cache")})
    tags, rms = results[4]["runs"], results[5]["runs"]
    for r in tags:
        err = [x for x in r["stderr"].splitlines() if x.strip()]
        pointed = json.loads(r["check"]).get("prod") == 1
        if r["status"] == 0:
            assert pointed
            continue
        assert r["status"] == 130 and len(err) == 1 and "Traceback" not in r["stderr"], r
        assert ("a@prod was pointed at a@1" in err[0]) == pointed, (err, pointed)
        assert pointed or "a@prod was not changed" in err[0] or "nothing was written" in err[0]
    removed_seen = False
    for r in rms:
        state = json.loads(r["check"])
        assert state["problems"] == []
        gone = "a@2" not in [v[0] for v in state["versions"]]
        err = [x for x in r["stderr"].splitlines() if x.strip()]
        if r["status"] == 0:
            assert gone
            continue
        assert r["status"] == 130 and len(err) == 1 and "Traceback" not in r["stderr"], r
        assert ("a@2 was removed" in err[0]) == gone, (err, gone)
        removed_seen |= gone
    assert len(tags) > 3 and len(rms) > 3


def test_ctrl_c_during_start_up_is_one_line(tmp_path: Path, small_corpus: Path) -> None:
    """Real processes, signalled from outside while Python imports tokreg, SQLAlchemy and the core."""
    env = {**os.environ, "TOKREG_DB": str(tmp_path / "r.db")}
    argv = [sys.executable, "-m", "tokreg", "train", "a", str(small_corpus), "--vocab-size", "300", "-q"]
    t0 = time.monotonic()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    python = time.monotonic() - t0  # the interpreter's own start-up, before any tokreg code runs
    t0 = time.monotonic()
    subprocess.run(
        argv, env={**env, "TOKREG_DB": str(tmp_path / "timed.db")}, cwd=ROOT, check=True, capture_output=True
    )
    whole = time.monotonic() - t0  # a whole run: the signals below land inside it, wherever it is fast or slow
    caught = 0
    for share in (0.1, 0.25, 0.4, 0.55, 0.7):
        delay = python + (whole - python) * share
        p = subprocess.Popen(
            argv,
            env=env,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(delay)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=120)
        lines = [x for x in err.splitlines() if x.strip()]
        assert "Traceback" not in err, err
        if p.returncode == 0:  # finished before the signal
            continue
        if "init_import_site" in err:
            # On a loaded machine the signal can land while the interpreter still imports its own
            # `site` module, before any line of tokreg runs: Python's to report, not tokreg's.
            continue
        assert p.returncode == 130 and len(lines) == 1, (p.returncode, err)
        assert lines[0].startswith("tokreg: error: interrupted") and "nothing was" in lines[0]
        caught += 1
    assert caught, "no signal landed inside tokreg's start-up"


def test_ctrl_c_stops_a_runaway_sqlite_query_at_once(tmp_path: Path, small_corpus: Path) -> None:
    db = str(tmp_path / "r.db")
    endless = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
    results = run_jobs(
        [
            {"cli": ["train", "a", str(small_corpus), "--vocab-size", "300", "-q", "--db", db]},
            {"cli": ["sql", endless, "--timeout", "0", "--db", db], "delay": 1.0},
            {"cli": ["sql", endless, "--timeout", "0.5", "--db", db]},
        ],
        timeout=120,
    )
    ctrl_c, limited = results[1], results[2]
    assert ctrl_c["status"] == 130 and ctrl_c["stderr"].strip() == (
        "tokreg: error: interrupted; nothing was written to the registry"
    )
    assert ctrl_c["seconds"] < 30  # stopped by the signal, not by anything else
    assert limited["status"] == 1 and "stopped after 0.5 s of database time" in limited["stderr"]


#: A process with the console script's Ctrl-C handler whose main thread imports a module that
#: interrupts itself (SIGINT, `signals` times) in the middle of its body and then goes on.
_SELF_INTERRUPTING_IMPORT = """
import _imp, os, signal, sys, threading, time
from tokreg import console
signal.signal(signal.SIGINT, console._first)
sys.path.insert(0, sys.argv[1])
try:
    import interrupts_itself
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:  # where the interrupt is due, once the import is done
        time.sleep(0.001)
    print("never interrupted")
except KeyboardInterrupt:
    done = getattr(sys.modules.get("interrupts_itself"), "done", False)
    print("after the import" if done else "inside the import")
print("import lock held" if _imp.lock_held() else "import lock free")
other = threading.Thread(target=lambda: __import__("imported_by_another_thread"), daemon=True)
other.start()
other.join(10)
print("another thread stuck" if other.is_alive() else "another thread imported")
"""


def _self_interrupting(tmp_path: Path, signals: int) -> subprocess.CompletedProcess[str]:
    body = "import os, signal, time\n"
    body += "os.kill(os.getpid(), signal.SIGINT); time.sleep(0.05)\n" * signals
    (tmp_path / "interrupts_itself.py").write_text(body + "done = True\n")
    (tmp_path / "imported_by_another_thread.py").write_text("x = 1\n")
    argv = [sys.executable, "-c", _SELF_INTERRUPTING_IMPORT, str(tmp_path)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=ROOT)


def test_ctrl_c_inside_an_import_is_raised_once_the_import_is_done(tmp_path: Path) -> None:
    # Raised inside the import machinery, a KeyboardInterrupt can leave an import lock held for
    # good, and the registry's opening thread, importing too, then waits forever (the start-up
    # test above hung so, now and then). It comes once the import is done, within milliseconds.
    p = _self_interrupting(tmp_path, signals=1)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split("\n")[:3] == ["after the import", "import lock free", "another thread imported"], p.stdout


def test_a_second_ctrl_c_during_an_import_still_stops_at_once(tmp_path: Path) -> None:
    p = _self_interrupting(tmp_path, signals=2)
    assert p.returncode == 130 and p.stdout == "", (p.returncode, p.stdout)
    assert p.stderr.startswith("tokreg: error: interrupted again; stopped at once"), p.stderr
