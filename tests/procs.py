"""Real processes for the fault tests (Ctrl-C, kill -9, concurrency, migrations), cheaply.

`run_jobs(jobs)` starts ONE Python process (`python -m tests.procs`) that imports tokreg, the
CLI and SQLAlchemy once, then forks a child per job, so a job costs a fork instead of a
second of start-up. A forked child is a real process: it gets its own signals, its own database
connections and its own thread pools (the parent never opens a connection or starts a thread
pool before forking), and it dies for real under SIGKILL.

A job is a dict:

- `cli`: the arguments of a `tokreg` command, run through the console script's entry point
  (tokreg.console.main, with its Ctrl-C handling), or `code`: Python source to exec;
- `env`: environment variables for the child;
- `hook`: {"at": WHERE, "n": N, "sig": "INT"|"KILL"} sends the child itself that signal at
  the N-th (1-based) occurrence of WHERE: "statement" (before an SQL statement is executed),
  "write" (before a statement of a write transaction: recording a version, migrating),
  "commit" (before a COMMIT), "after_commit" (when the connection goes back to its pool after
  the N-th commit), "progress" (a progress report: training's, or `tokreg tokenize`'s per batch);
- `delay`: seconds after the fork at which the parent sends `sig` ("INT" by default);
- `group`: a list of jobs started at once (each may have its own delay), waited for together;
- `check`: Python source exec'd in a fresh child after the job; what it prints is kept;
- `inline`: exec `reset` and `check` in the helper itself instead of a child (faster; they must
  close every connection they open, since the helper forks again afterwards);
- `each`: K with a `hook`: run the job again for N = 1, 1 + K, 1 + 2K, … until the hook no
  longer fires (the child ends on its own), exec'ing `reset` in a child before each run; the
  result is then {"runs": [result per N]} (each with its `n`).

Each result has `status` (exit code, or -SIGNAL), `fired` (whether the hook sent its signal),
`stdout`, `stderr`, `seconds` and `check`.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Optional

ROOT = Path(__file__).resolve().parent.parent
SIGNALS = {"INT": signal.SIGINT, "KILL": signal.SIGKILL}


def run_jobs(
    jobs: list[dict[str, Any]], timeout: float = 600, env: Optional[dict[str, str]] = None
) -> list[dict[str, Any]]:
    """Runs `jobs` in one forking helper process (with `env` added to its environment); returns
    a result per job."""
    env = {
        **os.environ,
        **(env or {}),
        "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
    }
    out = subprocess.run(
        [sys.executable, "-m", "tests.procs"],
        input=json.dumps(jobs),
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=timeout,
    )
    if out.returncode != 0:
        raise AssertionError(f"the process helper failed ({out.returncode}):\n{out.stderr[-4000:]}")
    results: list[dict[str, Any]] = json.loads(out.stdout)
    return results


# -- in the helper process --------------------------------------------------------------------------


def _install_hook(hook: dict[str, Any], marker: str) -> None:
    from sqlalchemy import event
    from sqlalchemy.engine import Engine
    from sqlalchemy.pool import Pool

    sig = SIGNALS[hook.get("sig", "INT")]
    n = int(hook["n"])
    seen = {"count": 0, "commits": 0, "fired": False}

    def fire() -> None:
        if not seen["fired"]:
            seen["fired"] = True
            Path(marker).touch()
            os.kill(os.getpid(), sig)

    def count(*_: Any, **__: Any) -> None:
        seen["count"] += 1
        if seen["count"] == n:
            fire()

    at = hook["at"]
    if at in ("statement", "write", "commit", "after_commit"):
        _hook_lean_write(at, n, seen, count, fire)
    if at == "statement":
        event.listen(Engine, "before_cursor_execute", count)
    elif at == "write":

        def written(conn: Any, *_: Any) -> None:
            if conn.get_execution_options().get("tokreg_write"):
                count()

        event.listen(Engine, "before_cursor_execute", written)
    elif at == "commit":
        event.listen(Engine, "commit", count)
    elif at == "after_commit":

        def committed(*_: Any) -> None:
            seen["commits"] += 1

        def returned(*_: Any) -> None:
            if seen["commits"] >= n:
                fire()

        event.listen(Engine, "commit", committed)
        event.listen(Pool, "checkin", returned)
    elif at == "progress":
        import tokreg.training.progress

        real = tokreg.training.progress.Progress.__call__

        def report(self: Any, phase: str, done: int, total: int, **detail: int) -> None:
            count()
            real(self, phase, done, total, **detail)

        tokreg.training.progress.Progress.__call__ = report  # type: ignore[method-assign]
    else:
        raise ValueError(f"unknown hook point {at!r}")


def _hook_lean_write(at: str, n: int, seen: dict[str, Any], count: Any, fire: Any) -> None:
    """The same hook points on `tokreg train`'s lean write (store/sqlite_write.py), which talks
    to SQLite through the sqlite3 module rather than SQLAlchemy: its connections are wrapped so
    that each statement counts before it runs, as SQLAlchemy's events count them."""
    import sqlite3
    import types

    import tokreg.store.sqlite_write as lean

    class Hooked:
        def __init__(self, real: sqlite3.Connection) -> None:
            self._real = real
            self._writing = False

        def __getattr__(self, name: str) -> Any:
            return getattr(self._real, name)

        def __enter__(self) -> Any:
            self._real.__enter__()
            return self

        def __exit__(self, *exc: Any) -> Any:
            return self._real.__exit__(*exc)

        def _run(self, method: str, sql: str, *args: Any) -> Any:
            word = sql.lstrip().split(None, 1)[0].upper()
            if at == "statement" or (at == "write" and self._writing) or (at == "commit" and word == "COMMIT"):
                count()
            self._writing = self._writing or word == "BEGIN"
            out = getattr(self._real, method)(sql, *args)
            if word in ("COMMIT", "ROLLBACK"):
                self._writing = False
            if at == "after_commit" and word == "COMMIT":
                seen["commits"] += 1
                if seen["commits"] >= n:
                    fire()
            return out

        def execute(self, sql: str, *args: Any) -> Any:
            return self._run("execute", sql, *args)

        def executemany(self, sql: str, *args: Any) -> Any:
            return self._run("executemany", sql, *args)

    def connect(*args: Any, **kwargs: Any) -> Hooked:
        return Hooked(sqlite3.connect(*args, **kwargs))

    lean.sqlite3 = types.SimpleNamespace(connect=connect, Error=sqlite3.Error, Connection=sqlite3.Connection)  # type: ignore[assignment]


def _child(job: dict[str, Any], out_path: str, err_path: str) -> None:
    """Runs in the forked child; never returns."""
    code = 0
    try:
        out_fd = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        err_fd = os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(out_fd, 1)
        os.dup2(err_fd, 2)
        sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
        os.environ.update(job.get("env", {}))
        # A Ctrl-C that comes before the job's own code installs a handler is dropped: that moment
        # is the helper's, not tokreg's (test_interrupts.py signals real processes for start-up).
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        if "hook" in job:
            _install_hook(job["hook"], err_path + ".fired")
        if "cli" in job:
            from tokreg.console import main

            sys.argv = ["tokreg", *job["cli"]]
            main()
        else:
            exec(compile(job["code"], "<job>", "exec"), {"__name__": "__job__"})
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except BaseException:
        import traceback

        traceback.print_exc()
        code = 99
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _status(raw: int) -> int:
    return -os.WTERMSIG(raw) if os.WIFSIGNALED(raw) else os.WEXITSTATUS(raw)


def _start(job: dict[str, Any], folder: str, i: int) -> dict[str, Any]:
    out_path, err_path = os.path.join(folder, f"{i}.out"), os.path.join(folder, f"{i}.err")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(err_path + ".fired")
    sys.stdout.flush()
    sys.stderr.flush()
    # SIGINT is blocked across the fork and ignored in the child before it is unblocked: a
    # signal sent at once (delay 0) then waits for the child instead of interrupting its set-up
    # (an exit 99 with no output, seen under load), and is dropped as the docstring of _child says.
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    pid = os.fork()
    if pid == 0:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        _child(job, out_path, err_path)
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    return {"pid": pid, "job": job, "out": out_path, "err": err_path, "t0": time.monotonic(), "sent": False}


def _finish(run: dict[str, Any]) -> dict[str, Any]:
    return {
        "fired": os.path.exists(run["err"] + ".fired"),
        "status": _status(run["raw"]),
        "stdout": Path(run["out"]).read_text(errors="replace"),
        "stderr": Path(run["err"]).read_text(errors="replace"),
        "seconds": run["seconds"],
    }


def _wait_all(runs: list[dict[str, Any]]) -> None:
    pending = {r["pid"]: r for r in runs}
    while pending:
        now = time.monotonic()
        for r in pending.values():
            delay = r["job"].get("delay")
            if delay is not None and not r["sent"] and now - r["t0"] >= delay:
                r["sent"] = True
                os.kill(r["pid"], SIGNALS[r["job"].get("sig", "INT")])
        pid, raw = os.waitpid(-1, os.WNOHANG)
        if pid in pending:
            r = pending.pop(pid)
            r["raw"], r["seconds"] = raw, time.monotonic() - r["t0"]
            continue
        time.sleep(0.002)


def _check(code: str, folder: str, inline: bool = False) -> str:
    if inline:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, "<check>", "exec"), {"__name__": "__check__"})
        return out.getvalue()
    run = _start({"code": code}, folder, 10**6)
    _wait_all([run])
    done = _finish(run)
    if done["status"] != 0:
        raise AssertionError(f"check failed:\n{done['stderr']}")
    return str(done["stdout"])


def main() -> None:
    # Everything a child needs, imported once here (never connected: see the docstring).
    import alembic.command  # noqa: F401  (the migrations' own imports, for the migration tests)
    import alembic.op  # noqa: F401
    import sqlalchemy  # noqa: F401

    import tokreg.cli  # noqa: F401
    import tokreg.console  # noqa: F401

    try:  # the PostgreSQL driver takes 0.3 s to import; once here, not in every child
        import psycopg  # noqa: F401
        import sqlalchemy.dialects.postgresql.psycopg  # noqa: F401
    except ImportError:
        pass

    jobs = json.loads(sys.stdin.read())
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="tokreg-procs-") as folder:
        for i, job in enumerate(jobs):
            results.append(_each(job, folder, i) if job.get("each") else _one(job, folder, i))
    sys.stdout.write(json.dumps(results))


def _one(job: dict[str, Any], folder: str, i: int) -> dict[str, Any]:
    members = job.get("group", [job])
    runs = [_start(m, folder, i * 1000 + k) for k, m in enumerate(members)]
    _wait_all(runs)
    done = [_finish(r) for r in runs]
    result: dict[str, Any] = {"group": done} if "group" in job else done[0]
    if "check" in job:
        result["check"] = _check(job["check"], folder, job.get("inline", False))
    return result


def _each(job: dict[str, Any], folder: str, i: int) -> dict[str, Any]:
    runs = []
    stride = int(job["each"])
    for n in range(1, 10_000, stride):
        if "reset" in job:
            _check(job["reset"], folder, job.get("inline", False))
        one = {**job, "hook": {**job["hook"], "n": n}}
        result = _one(one, folder, i)
        result["n"] = n
        runs.append(result)
        if not result["fired"]:
            break  # the job ran to its end before the N-th occurrence
    return {"runs": runs}


if __name__ == "__main__":
    main()


def state_check(db: str, verify_last: int = 2) -> str:
    """Source for a `check`: prints, as JSON, what the registry at `db` holds and whether it is
    whole: {"exists", "versions": [[ref, hash]], "problems": [...]}. Problems are what `verify`
    finds in the newest `verify_last` versions (the ones a run can have just written), partial
    versions (token rows short of the vocabulary size, samples or stored content missing) and
    rows of versions that do not exist."""
    return f"""
import json, tokreg
from sqlalchemy import text
reg = tokreg.Registry({db!r})
out = {{"exists": False, "versions": [], "problems": []}}
if reg._exists:
    out["exists"] = True
    vs = reg.versions()
    out["versions"] = [[v.ref, v.content_hash] for v in vs]
    newest = sorted(vs, key=lambda v: v.id)[-{verify_last}:]
    out["problems"] = [f"{{r.ref}}: {{p}}" for v in newest for r in reg.verify(v.ref) for p in r.problems]
    with reg.engine.connect() as c:
        def per_version(table):
            q = f"SELECT version_id, count(*) FROM {{table}} GROUP BY version_id"
            return dict(c.execute(text(q)).all())
        tokens, samples, contents = per_version("tokens"), per_version("samples"), per_version("version_contents")
        for v in vs:
            if tokens.get(v.id) != v.vocab_size or samples.get(v.id) != 6 or contents.get(v.id) != 1:
                out["problems"].append(f"{{v.ref}} is partial")
        ids = {{v.id for v in vs}}
        for t in ("tokens", "merges", "samples", "version_contents", "training_runs"):
            if set(per_version(t)) - ids:
                out["problems"].append(f"orphan rows in {{t}}")
reg.close()
print(json.dumps(out))
"""
