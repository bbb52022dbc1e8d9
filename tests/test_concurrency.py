"""Concurrent writers and readers, on SQLite and on PostgreSQL: 16 processes training or
importing into the same name at once, on a registry that does not exist yet, give versions
1..16, each whole, none lost or duplicated, and none fails; meanwhile 4 readers (`tokreg list`,
`tokreg encode`, `tokreg sql`, `tokreg.load`) loop and never error or see a partial version."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .conftest import slow
from .procs import run_jobs, state_check

WRITERS, READERS = 16, 4

# Each reader loops until it has seen all 16 versions (or 120 s have passed), then prints how
# many rounds it made and what went wrong (nothing, it must be).
READER = """
import json, time, tokreg
from click.testing import CliRunner
from tokreg.cli import cli
db, kind, total = {db!r}, {kind!r}, {total}
runner = CliRunner()
rounds, errors, seen, deadline = 0, [], 0, time.monotonic() + 120
def cmd(*args):
    res = runner.invoke(cli, [*args, "--db", db])
    early = "there is no registry at" in res.output or "no tokenizer named" in res.output
    if res.exit_code == 4 and seen == 0 and early:
        return None  # the first writer has not created it, or not committed, yet: true answers
    if res.exit_code != 0:
        errors.append(f"{{args[0]}} exited {{res.exit_code}}: {{res.output.strip()}}")
        return None
    return res.stdout  # stderr may say something (tokreg sql: the PostgreSQL role's warning)
while seen < total and time.monotonic() < deadline and len(errors) < 5:
    rounds += 1
    if kind == "list":
        out = cmd("list", "--json")
        if out is not None:
            seen = len(json.loads(out))
    elif kind == "encode":
        out = cmd("encode", "n", "In the beginning God created", "--json")
        if out is not None:
            got = json.loads(out)
            seen = int(got["ref"].split("@")[1])
            if not got["ids"]:
                errors.append("encode gave no ids")
    elif kind == "sql":
        q = ("SELECT v.number, v.vocab_size, (SELECT count(*) FROM tokens t WHERE t.version_id = v.id), "
             "(SELECT count(*) FROM version_contents c WHERE c.version_id = v.id) FROM versions v")
        out = cmd("sql", q, "--json")
        if out is not None:
            rows = json.loads(out)
            seen = len(rows)
            for r in rows:
                vals = list(r.values())
                if vals[1] != vals[2] or vals[3] != 1:
                    errors.append(f"partial version seen: {{vals}}")
    else:
        try:
            reg = tokreg.Registry(db)
            if reg._exists:
                vs = reg.versions()
                seen = len(vs)
                for v in vs[-3:]:
                    tok = tokreg.load(v.ref, db=db)
                    if tok.hash != v.content_hash or tok.decode(tok.encode("In the beginning")) != "In the beginning":
                        errors.append(f"{{v.ref}} loaded wrong")
            reg.close()
        except Exception as e:
            errors.append(f"load: {{type(e).__name__}}: {{e}}")
print(json.dumps({{"rounds": rounds, "seen": seen, "errors": errors}}))
"""


def crowd(db: str, corpus: Path, tmp_path: Path, n: int = WRITERS) -> dict[str, Any]:
    # A tokenizer.json to import, made in a registry of its own.
    hf = tmp_path / "tokenizer.json"
    side = str(tmp_path / "side.db")
    writers: list[dict[str, Any]] = []
    for i in range(n):
        if i % 4 == 3:
            writers.append({"cli": ["import", "hf", str(hf), "--name", "n", "-m", f"w{i}", "--db", db]})
        else:
            writers.append({"cli": ["train", "n", str(corpus), "--vocab-size", "300", "-q", "-m", f"w{i}", "--db", db]})
    readers = [{"code": READER.format(db=db, kind=k, total=n)} for k in ("list", "encode", "sql", "load")]
    jobs = [
        {"cli": ["train", "x", str(corpus), "--vocab-size", "300", "-q", "--db", side]},
        {"cli": ["export", "x@1", "--format", "hf", "-o", str(hf), "--db", side]},
        {"group": writers + readers, "check": state_check(db, verify_last=n)},
    ]
    results = run_jobs(jobs, env={"TOKREG_CACHE": str(tmp_path / "cache")})
    group = results[2]["group"]
    for w in group[:n]:
        assert w["status"] == 0 and "Traceback" not in w["stderr"], w
    created = [w for w in group[:n] if "created a new registry" in w["stderr"]]
    assert len(created) == 1  # exactly one writer made it, and said so
    for r in group[n:]:
        assert r["status"] == 0, r
        report = json.loads(r["stdout"])
        assert report["errors"] == [] and report["rounds"] > 0, report
    state = json.loads(results[2]["check"])
    assert state["problems"] == []
    refs = [ref for ref, _ in state["versions"]]
    assert refs == [f"n@{k}" for k in range(1, n + 1)]
    printed = sorted(w["stdout"].split()[0] for w in group[:n])
    assert printed == sorted(refs)  # each writer got its own number, and said which
    return {"writers": group[:n], "readers": [json.loads(r["stdout"]) for r in group[n:]]}


def _messages(db: str) -> list[str]:
    from tokreg import Registry

    with Registry(db) as reg:
        return sorted(v.message or "" for v in reg.versions("n"))


@pytest.mark.parametrize("n", [4, slow(WRITERS)])  # the fast lane: four writers, `just test`: sixteen
def test_many_writers_and_four_readers_sqlite(tmp_path: Path, small_corpus: Path, n: int) -> None:
    db = str(tmp_path / "new" / "r.db")
    crowd(db, small_corpus, tmp_path, n)
    assert _messages(db) == sorted(f"w{i}" for i in range(n))  # none lost, none twice


@pytest.mark.slow
def test_sixteen_writers_and_four_readers_postgres(pg_db: str, small_corpus: Path, tmp_path: Path) -> None:
    crowd(pg_db, small_corpus, tmp_path)
    assert _messages(pg_db) == sorted(f"w{i}" for i in range(WRITERS))
