"""Start to ready: a fresh Python process that imports the library and loads a vocabulary, as a
serving process or a data-pipeline worker starts, timed whole from outside (the interpreter's
own start is the `python -c pass` row, common to all).

tokreg: `import tokreg; tokreg.load(NAME)` in a project folder whose tokreg.lock pins the version,
its content in the on-disk cache (warmed once): the hash-checked cache file is read and no
registry is opened, so neither SQLAlchemy nor Alembic is imported (the default registry location
is made empty to prove it). `via registry` is `tokreg.load(NAME@1, db=...)` with the same warm
cache. tiktoken: `import tiktoken; tiktoken.get_encoding(NAME)` with its download cache already
holding the file (TIKTOKEN_CACHE_DIR), so no network is used. Best of 7 runs each, interleaved."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import tokreg
from benchmarks.common import DATA, table
from benchmarks.vocabs import VOCABS

RUNS = 7
TIKTOKEN_URL = "https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"


def _time(code: str, cwd: Path, env: dict[str, str]) -> float:
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, check=True)
    return time.perf_counter() - t


def run() -> None:
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
        finally:
            os.chdir(cwd)
        for name in VOCABS:
            key = hashlib.sha1(TIKTOKEN_URL.format(name=name).encode()).hexdigest()
            shutil.copyfile(DATA / f"{name}.tiktoken", tik / key)
        cases = {
            "python -c pass": "pass",
            "import tokreg": "import tokreg",
            "import tiktoken": "import tiktoken",
        }
        for name in VOCABS:
            cases[f"tokreg.load({name}@1), via registry"] = (
                f"import tokreg; tokreg.load({name + '@1'!r}, db={db!r}).encode_ordinary('warm')"
            )
            cases[f"tokreg.load({name}), pinned"] = (
                f"import tokreg, sys; tokreg.load({name!r}).encode_ordinary('warm'); "
                "assert 'sqlalchemy' not in sys.modules"
            )
            cases[f"tiktoken.get_encoding({name})"] = (
                f"import tiktoken; tiktoken.get_encoding({name!r}).encode_ordinary('warm')"
            )
        # Warm the caches (and the page cache) once; the registry load fills tokreg's cache first.
        for code in cases.values():
            _time(code, project, env)
        best = {label: min(_time(code, project, env) for _ in range(1)) for label, code in cases.items()}
        for _ in range(RUNS - 1):
            for label, code in cases.items():
                best[label] = min(best[label], _time(code, project, env))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    rows = []
    for name in VOCABS:
        theirs = best[f"tiktoken.get_encoding({name})"]
        for label in (
            f"tokreg.load({name}), pinned",
            f"tokreg.load({name}@1), via registry",
            f"tiktoken.get_encoding({name})",
        ):
            rows.append([label, f"{best[label]:.3f}", f"{best[label] / theirs:.2f}x"])
    for label in ("python -c pass", "import tokreg", "import tiktoken"):
        rows.append([label, f"{best[label]:.3f}", ""])
    table(
        f"Start to ready: a fresh process imports and loads (best of {RUNS}, whole process, warm caches)",
        ["process", "seconds", "vs tiktoken"],
        rows,
    )
