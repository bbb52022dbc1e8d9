"""Start to ready: a fresh Python process imports the library, loads a vocabulary and encodes
"hello", as a serving process or a data-pipeline worker starts, timed whole from outside (wall
and the child's CPU time; the interpreter's own start is the `python -c pass` row, common to
all). Every way tokreg loads, beside tiktoken, for cl100k_base and o200k_base:

- `from_file`: `tokreg.Tokenizer.from_file(PATH)` of the file `tokreg export REF --format tokreg`
  wrote: no registry, no cache; the file is read and its content hash checked.
- `load, registry`: `tokreg.load(NAME@1, db=FILE)` with the compiled cache warm: the version's
  row is read (sqlite3, store/sqlite_read.py) and the cached content checked against its hash.
- `load, pinned`: `tokreg.load(NAME)` in a project folder whose tokreg.lock pins the version,
  its content in the cache: no registry is opened (the default registry location is made
  empty to prove it), and neither SQLAlchemy nor Alembic is imported.
- tiktoken: `tiktoken.get_encoding(NAME)` with its download cache already holding the file
  (TIKTOKEN_CACHE_DIR), so no network is used.

Each case runs RUNS times, interleaved with the others (so a busy spell of the machine hits all
of them alike), after one warm-up round; the table gives the best and the median of the wall
and CPU times, and the load average over the run. Warm means every cache a second start finds:
the page cache, tokreg's content and built-encoder caches, tiktoken's download cache, and the
bytecode of both packages (tokreg's is compiled first: with PYTHONDONTWRITEBYTECODE set, as on
some machines, a source tree's edited modules would otherwise be compiled again by every run)."""

from __future__ import annotations

import compileall
import hashlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import tokreg
from benchmarks.common import DATA, table
from benchmarks.vocabs import VOCABS

RUNS = 9
TIKTOKEN_URL = "https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
WAYS = ("from_file", "load, registry", "load, pinned")


def _time(code: str, cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) seconds of a fresh `python -c code`."""
    t = time.perf_counter()
    p = subprocess.Popen([sys.executable, "-c", code], cwd=cwd, env=env)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    if status != 0:
        raise RuntimeError(f"failed: {code}")
    return wall, usage.ru_utime + usage.ru_stime


def _cases(work: Path, db: str) -> dict[str, str]:
    cases = {"python -c pass": "pass", "import tokreg": "import tokreg", "import tiktoken": "import tiktoken"}
    for name in VOCABS:
        file = str(work / f"{name}.tokreg")
        cases[f"{name} from_file"] = f"import tokreg; tokreg.Tokenizer.from_file({file!r}).encode('hello')"
        cases[f"{name} load, registry"] = (
            f"import tokreg, sys; tokreg.load({name + '@1'!r}, db={db!r}).encode('hello'); "
            "assert 'sqlalchemy' not in sys.modules"
        )
        cases[f"{name} load, pinned"] = (
            f"import tokreg, sys; tokreg.load({name!r}).encode('hello'); assert 'sqlalchemy' not in sys.modules"
        )
        cases[f"{name} tiktoken"] = f"import tiktoken; tiktoken.get_encoding({name!r}).encode('hello')"
    return cases


def run() -> None:
    compileall.compile_dir(os.path.dirname(tokreg.__file__), quiet=1)
    work = Path(tempfile.mkdtemp(prefix="tokreg-start-"))
    db = str(work / "registry.db")  # its own registry: the shared bench one is rebuilt by other runs
    try:
        project, cache, tik = work / "project", work / "cache", work / "tiktoken"
        project.mkdir()
        tik.mkdir()
        env = {k: v for k, v in os.environ.items() if k not in ("TOKREG_DB", "TOKREG_LOCK")}
        env.update(TOKREG_CACHE=str(cache), XDG_DATA_HOME=str(work / "no-registry"), TIKTOKEN_CACHE_DIR=str(tik))
        cwd = os.getcwd()
        os.chdir(project)
        try:
            with tokreg.Registry(db) as reg:
                for name, (pattern, specials) in VOCABS.items():
                    reg.import_tiktoken(name, DATA / f"{name}.tiktoken", pattern=pattern, specials=specials)
                    reg.pin(f"{name}@1")
                    reg.export(f"{name}@1", "tokreg", work / f"{name}.tokreg")
        finally:
            os.chdir(cwd)
        for name in VOCABS:
            key = hashlib.sha1(TIKTOKEN_URL.format(name=name).encode()).hexdigest()
            shutil.copyfile(DATA / f"{name}.tiktoken", tik / key)
        cases = _cases(work, db)
        # Warm the caches (and the page cache) once; the first registry load fills tokreg's cache
        # (through the registry, SQLAlchemy and all: the assertion is for the runs timed).
        for code in cases.values():
            _time(code.split("; assert")[0], project, env)
        load_before = os.getloadavg()[0]
        times: dict[str, list[tuple[float, float]]] = {label: [] for label in cases}
        for _ in range(RUNS):
            for label, code in cases.items():
                times[label].append(_time(code, project, env))
        load_after = os.getloadavg()[0]
    finally:
        shutil.rmtree(work, ignore_errors=True)

    def cells(label: str, theirs: str | None) -> list[str]:
        wall = [w for w, _ in times[label]]
        cpu = [c for _, c in times[label]]
        out = [f"{min(wall):.3f}", f"{statistics.median(wall):.3f}", f"{min(cpu):.3f}", f"{statistics.median(cpu):.3f}"]
        if theirs is None:
            return [*out, ""]
        their_cpu = statistics.median(c for _, c in times[theirs])
        return [*out, f"{statistics.median(cpu) / their_cpu:.2f}x"]

    rows = []
    for name in VOCABS:
        for way in (*WAYS, "tiktoken"):
            label = f"{name} {way}"
            rows.append([label, *cells(label, f"{name} tiktoken")])
    for label in ("python -c pass", "import tokreg", "import tiktoken"):
        rows.append([label, *cells(label, None)])
    table(
        f"Start to ready: a fresh process imports, loads and encodes 'hello' ({RUNS} runs each, interleaved, "
        f"whole process, warm caches; load average {load_before:.2f} at the start, {load_after:.2f} at the end)",
        ["process", "wall best s", "wall median s", "CPU best s", "CPU median s", "CPU median vs tiktoken"],
        rows,
    )
