"""Where the registry is, and whether it can be written: reads never create a registry (they say
there is none and how to make one), train and import create one and say where, a location that
is not a registry or not a location at all is one line and exit 1 with nothing created, and a
registry that cannot be written is refused before any training starts, in one line."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

import tokreg
from tokreg import BpeOptions, NotFoundError, ReadOnlyError, Registry

from .conftest import ROOT, Cli, one_error_line, pg_role


def tree(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.mark.parametrize(
    "args",
    [["list"], ["show", "x"], ["log", "x"], ["sql", "SELECT 1"], ["verify"], ["db", "current"], ["encode", "x", "hi"]],
    ids=lambda a: a[0],
)
def test_reads_never_create_a_registry(tmp_path: Path, args: list[str]) -> None:
    where = tmp_path / "no" / "such" / "dir" / "x.db"
    line = one_error_line(Cli(where)(*args, ok=False), f"there is no registry at {where}", "tokreg train", code=4)
    assert "--db" in line
    assert tree(tmp_path) == []


def test_the_python_api_does_not_create_one_either(tmp_path: Path) -> None:
    where = tmp_path / "sub" / "r.db"
    with pytest.raises(NotFoundError, match="there is no registry at"):
        tokreg.load("x", db=where)
    reg = Registry(where)
    with pytest.raises(NotFoundError):
        reg.versions()
    reg.close()
    assert tree(tmp_path) == []


BAD_LOCATIONS = {
    "not a url": ("::not a url::", "neither a path nor a database URL"),
    "scheme-like": ("postgres:tokreg", "neither a path nor a database URL"),
    "unsupported scheme": ("mysql://u@localhost/db", "SQLite or PostgreSQL, not 'mysql'"),
    "unknown scheme": ("nosuchdialect://x", "SQLite or PostgreSQL, not 'nosuchdialect'"),
    "bad url": ("postgresql://u@host:notaport/db", "not a valid database URL"),
    "in memory": ("sqlite://", "in-memory SQLite database"),
    "text file": ("{tmp}/notes.txt", "is not a SQLite database"),
    "folder": ("{tmp}/folder", "is a folder"),
    "under a file": ("{tmp}/notes.txt/r.db", "is a file, not a folder"),
    "other program": ("{tmp}/other.sqlite", "a SQLite database of another program (tables: people)"),
    "no server": ("postgresql+psycopg://u@/db?host={tmp}/nosock", "cannot open the registry at"),
    "empty": ("   ", "the registry location is empty"),
}


@pytest.mark.parametrize("case", sorted(BAD_LOCATIONS))
@pytest.mark.parametrize("command", ["list", "train"])
def test_a_bad_location_is_one_line_and_creates_nothing(
    case: str, command: str, tmp_path: Path, small_corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "notes.txt").write_text("not a database\n")
    (tmp_path / "folder").mkdir()
    other = sqlite3.connect(tmp_path / "other.sqlite")
    other.execute("CREATE TABLE people (name TEXT)")
    other.commit()
    other.close()
    corpus = tmp_path / "corpus" / "c.txt"
    corpus.parent.mkdir()
    shutil.copy(small_corpus, corpus)
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    before = {p: (p.stat().st_size, p.stat().st_mtime_ns) for p in tmp_path.rglob("*")}
    location, needle = BAD_LOCATIONS[case]
    argv = ["list"] if command == "list" else ["train", "x", str(corpus), "--vocab-size", "300", "-q"]
    res = Cli(Path("unused"))(*argv, "--db", location.format(tmp=tmp_path), ok=False)
    one_error_line(res, needle, code=1)
    assert {p: (p.stat().st_size, p.stat().st_mtime_ns) for p in tmp_path.rglob("*")} == before


def test_train_and_import_create_a_registry_and_say_where(tmp_path: Path, small_corpus: Path) -> None:
    where = tmp_path / "new" / "folder" / "r.db"
    run = Cli(where)
    res = run("train", "a", small_corpus, "--vocab-size", "300", "-q", "--json")
    assert res.stderr.strip() == f"created a new registry at {where}"
    assert res.stdout.lstrip().startswith("{")
    again = run("train", "a", small_corpus, "--vocab-size", "300", "-q")
    assert "created" not in again.output and "a@2" in again.output
    exported = tmp_path / "a.tokreg.json"
    run("export", "a@1", "--format", "tokreg", "-o", exported)
    other = tmp_path / "other.db"
    res = Cli(other)("import", "hf", _hf(run, tmp_path), "--name", "h")
    assert res.output.splitlines()[0] == f"created a new registry at {other}"


def _hf(run: Cli, tmp_path: Path) -> Path:
    out = tmp_path / "tokenizer.json"
    run("export", "a@1", "--format", "hf", "-o", out)
    return out


def test_a_failed_training_creates_nothing(tmp_path: Path) -> None:
    where = tmp_path / "fresh" / "r.db"
    one_error_line(
        Cli(where)("train", "a", tmp_path / "missing.txt", "--vocab-size", "300", ok=False), "does not exist", code=1
    )
    assert tree(tmp_path) == []


# -- read-only registries --------------------------------------------------------------------------


@pytest.fixture
def existing(tmp_path: Path, small_corpus: Path) -> Path:
    folder = tmp_path / "reg"
    folder.mkdir()
    db = folder / "r.db"
    with Registry(db) as reg:
        reg.train("a", [small_corpus], BpeOptions(vocab_size=300))
    return db


def _refused_before_training(db: Path, small_corpus: Path, *needles: str) -> None:
    before = tree(db.parent)
    # A corpus that would take minutes to train: the refusal must come first.
    res = Cli(db)("train", "b", small_corpus, "--vocab-size", "300", "-q", ok=False)
    one_error_line(res, *needles, code=1)
    res = Cli(db)("tag", "a@1", "prod", ok=False)
    one_error_line(res, "cannot be written", code=1)
    assert tree(db.parent) == before, "no -wal/-shm left behind"
    assert "a@1" in Cli(db)("list").output  # reading still works


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("chattr") is None, reason="chattr +i needs root")
def test_an_immutable_registry_is_refused_before_training(existing: Path, small_corpus: Path) -> None:
    if subprocess.run(["chattr", "+i", existing], capture_output=True).returncode != 0:
        pytest.skip("this file system does not support chattr +i")
    try:
        _refused_before_training(existing, small_corpus, str(existing), "is read-only", "chattr -i")
        with pytest.raises(ReadOnlyError, match="is read-only"):
            Registry(existing).check_writable()
    finally:
        subprocess.run(["chattr", "-i", existing], check=True)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes files whatever their permissions (chattr covers root)")
def test_a_registry_without_write_permission_is_refused(existing: Path, small_corpus: Path) -> None:
    existing.chmod(0o444)
    try:
        _refused_before_training(existing, small_corpus, "is read-only", "chmod u+w")
    finally:
        existing.chmod(0o644)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes folders whatever their permissions")
def test_a_read_only_folder_is_refused_for_a_new_registry(tmp_path: Path, small_corpus: Path) -> None:
    folder = tmp_path / "locked"
    folder.mkdir(mode=0o555)
    try:
        res = Cli(folder / "r.db")("train", "a", small_corpus, "--vocab-size", "300", ok=False)
        one_error_line(res, "is not writable", code=1)
    finally:
        folder.chmod(0o755)


_RO_MOUNT = r"""
import sys
from click.testing import CliRunner
from tokreg.cli import cli
db, corpus = sys.argv[1], sys.argv[2]
r = CliRunner()
for args in (["train", "b", corpus, "--vocab-size", "300", "-q"], ["list"], ["encode", "a@1", "hello"]):
    res = r.invoke(cli, [*args, "--db", db])
    print(res.exit_code, res.output.strip().replace("\n", " | "))
"""


@pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("unshare") is None, reason="a read-only bind mount needs root and unshare"
)
def test_a_registry_on_read_only_media(existing: Path, small_corpus: Path, tmp_path: Path) -> None:
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    script = (
        f"mount --bind -o ro {existing.parent} {mnt} && "
        f"{sys.executable} -c '{_RO_MOUNT}' {mnt / existing.name} {small_corpus}"
    )
    out = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, cwd=ROOT)
    if out.returncode != 0 and "mount" in out.stderr:
        pytest.skip(f"cannot make a read-only mount here: {out.stderr.strip()}")
    train, listing, encode = out.stdout.splitlines()
    assert train.startswith("1 tokreg: error: ") and "read-only file system" in train and "|" not in train
    assert listing.startswith("0 REF") and "a@1" in listing
    assert encode.startswith("0 ")


def test_a_read_only_postgres_role_is_refused_before_training(pg_db: str, small_corpus: Path) -> None:
    reg = Registry(pg_db)
    reg.train("a", [small_corpus], BpeOptions(vocab_size=300))
    ro_url = pg_role(pg_db, "ro_user")
    reg.grant_read("ro_user")
    reg.close()
    res = Cli(Path("unused"))("train", "b", small_corpus, "--vocab-size", "300", "--db", ro_url, ok=False)
    one_error_line(res, "role 'ro_user' cannot write", "no INSERT on", code=1)
    assert "a@1" in Cli(Path("unused"))("list", "--db", ro_url).output
    fresh = make_url(ro_url).set(database="postgres").render_as_string(hide_password=False)
    res = Cli(Path("unused"))("train", "b", small_corpus, "--vocab-size", "300", "--db", fresh, ok=False)
    one_error_line(res, "cannot create tables", code=1)
