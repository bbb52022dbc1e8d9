"""Pins that travel (issue 26), played on two machines: machine A (its own HOME, XDG folders and
registry) trains, pins and vendors; the project folder is copied to machine B (a fresh HOME, no
registry, A's registry path unreachable) where `tokreg.load` must give A's ids offline, from the
vendored folder, or after `tokreg sync --from` a registry file, an export or a `tokreg serve` on
loopback. Also: the one rule for a pin whose number disagrees with the registry's (warm and
cold), duplicate pins, TOKREG_OFFLINE refusing every connection, and the one-line errors."""

from __future__ import annotations

import json
import lzma
import os
import shutil
import socket
import stat
import subprocess
import sys
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import tokreg
from tokreg import BpeOptions, IntegrityError, NotFoundError, Registry
from tokreg.cli import cli
from tokreg.versions import lockfile, vendor

from .conftest import slow

TEXT = "In the beginning God created the heaven and the earth. Über naïve café 東京 🚀"


def machine(root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Makes `root` this process's machine: its own HOME and XDG folders, no tokreg overrides."""
    for var in ("HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME"):
        (root / var.lower()).mkdir(parents=True, exist_ok=True)
        monkeypatch.setenv(var, str(root / var.lower()))
    for var in ("TOKREG_DB", "TOKREG_CACHE", "TOKREG_LOCK", "TOKREG_OFFLINE", "TOKREG_SERVE_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    return root


def tokreg_cli(*args: str, ok: bool = True, env: dict[str, Any] | None = None) -> Any:
    res = CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)
    if ok and res.exit_code != 0:
        raise AssertionError(f"tokreg {' '.join(args)} exited {res.exit_code}: {res.output}")
    return res


def one_line_error(res: Any, code: int, *words: str) -> None:
    """A refusal: exit `code`, one `tokreg: error:` line naming `words`, no traceback."""
    assert res.exit_code == code, res.output
    lines = [line for line in res.output.splitlines() if line.startswith("tokreg: error:")]
    assert len(lines) == 1 and "Traceback" not in res.output, res.output
    for w in words:
        assert w in lines[0], (w, lines[0])


@contextmanager
def no_connections() -> Iterator[None]:
    """Fails the test if anything opens a network connection (TOKREG_OFFLINE's promise)."""
    real = socket.socket.connect

    def refuse(self: socket.socket, address: Any) -> None:
        if self.family in (socket.AF_INET, socket.AF_INET6):
            raise AssertionError(f"a connection to {address} was attempted while offline")
        real(self, address)

    socket.socket.connect = refuse  # type: ignore[method-assign]
    try:
        yield
    finally:
        socket.socket.connect = real  # type: ignore[method-assign]


@contextmanager
def serving(db: Path, token: str | None = None) -> Iterator[str]:
    """`tokreg serve`'s app on a loopback port in a thread over `db` (read-only); yields its URL."""
    import uvicorn

    from tokreg.serve.access import Rules
    from tokreg.serve.app import create_app

    reg = Registry.read_only(db)
    app = create_app(reg, rules=Rules.of("127.0.0.1", token=token))
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started and thread.is_alive():
        thread.join(0.02)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()
        reg.close()


@pytest.fixture
def machine_a(tmp_path: Path, small_corpus: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Machine A: trains m@1 (and m@2), pins m@1 with --vendor in its project, exports m@1;
    returns the project, the registry file, the export and the ids A's load gives."""
    a = machine(tmp_path / "a", monkeypatch)
    project = a / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    tokreg_cli("train", "m", str(small_corpus), "--vocab-size", "300")
    tokreg_cli("train", "m", str(small_corpus), "--vocab-size", "330")
    out = tokreg_cli("pin", "m@1", "--vendor").output
    assert "pinned m@1" in out and "tokreg.vendor" in out
    export = a / "m.tokreg.json"
    tokreg_cli("export", "m@1", "--format", "tokreg", "-o", str(export))
    db = a / "xdg_data_home" / "tokreg" / "registry.db"
    assert db.is_file() and lockfile.read(project / "tokreg.lock").pins["m"].registry.endswith(str(db))
    ids = tokreg.load("m").encode(TEXT)
    assert ids != tokreg.load("m@2").encode(TEXT)
    return {"root": a, "project": project, "db": db, "export": export, "ids": ids}


def to_machine_b(a: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, vendored: bool) -> Path:
    """Copies A's project to a fresh machine B, where A's registry path does not exist; returns
    B's project (the working directory)."""
    b = machine(tmp_path / "b", monkeypatch)
    project = b / "project"
    shutil.copytree(a["project"], project)
    if not vendored:
        shutil.rmtree(project / vendor.FOLDER)
    monkeypatch.chdir(project)
    # A's registry is not reachable from B: its path does not exist there.
    a["db"].rename(a["db"].with_name("elsewhere.db"))
    return project


def test_two_machines_vendored_offline(
    machine_a: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = to_machine_b(machine_a, tmp_path, monkeypatch, vendored=True)
    # A fresh process, as a clone in CI would run it: offline, no registry, no cache.
    env = {**os.environ, "TOKREG_OFFLINE": "1"}
    code = f"import sys, tokreg; print(tokreg.load('m').encode({TEXT!r}), 'sqlalchemy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=project, env=env, capture_output=True, text=True, check=True)
    ids, opened_a_registry = out.stdout.rsplit(" ", 1)
    assert json.loads(ids) == machine_a["ids"] and opened_a_registry.strip() == "False"
    monkeypatch.setenv("TOKREG_OFFLINE", "1")
    with no_connections():
        tok = tokreg.load("m")
    assert (tok.ref, tok.encode(TEXT)) == ("m@1", machine_a["ids"])
    assert not (tmp_path / "b" / "xdg_data_home" / "tokreg").exists()  # no registry was made on B
    # The vendored file: xz, named by the hash, readable by the group/others as the umask says.
    pin = lockfile.read(project / "tokreg.lock").pins["m"]
    f = vendor.path_of(project, pin.hash)
    assert f.read_bytes()[:6] == b"\xfd7zXZ\x00" and f.name == pin.hash.split(":")[1] + ".content.xz"
    assert stat.S_IMODE(os.stat(f).st_mode) == 0o666 & ~_umask()


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# The fast lane syncs from a server (the whole path: HTTP, the index, the hash check); a registry
# file and an export run in `just test`.
@pytest.mark.parametrize("source", [slow("registry"), slow("export"), "serve"])
def test_two_machines_sync_from(
    source: str, machine_a: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = to_machine_b(machine_a, tmp_path, monkeypatch, vendored=False)
    moved = machine_a["db"].with_name("elsewhere.db")
    offline = {"TOKREG_OFFLINE": "1"}
    # Before a sync, offline, nothing holds the pin: one line naming the lockfile, the pin and
    # every source tried, and no connection attempted.
    with no_connections():
        res = tokreg_cli("encode", "m", "x", ok=False, env=offline)
    one_line_error(res, 4, str(project / "tokreg.lock"), "m@1", "vendored folder", "local cache", "registry sqlite:")
    if source == "serve":
        with serving(moved) as url:
            out = tokreg_cli("sync", "--from", url, "--json").output
            # The server also answers `tokreg.load(..., db=URL)`, read-only, for any ref.
            assert tokreg.load("m@2", db=url).encode(TEXT) == Registry(moved).load("m@2").encode(TEXT)
            assert tokreg.load("m", db=url).encode(TEXT) == machine_a["ids"]  # pinned: by its hash
        assert json.loads(out)[0]["source"] == f"tokreg serve {url}"
    else:
        spec = str(moved if source == "registry" else machine_a["export"])
        out = tokreg_cli("sync", "--from", spec, "--json").output
        assert spec in json.loads(out)[0]["source"]
    assert json.loads(out)[0]["hash"] == lockfile.read(project / "tokreg.lock").pins["m"].hash
    monkeypatch.setenv("TOKREG_OFFLINE", "1")
    with no_connections():
        assert tokreg.load("m").encode(TEXT) == machine_a["ids"]
        assert tokreg_cli("sync", "--json").output.count('"cached"') == 1  # a second sync: nothing to fetch
    # Every pin is cached, and a --from typed wrong is still named, not silently never asked.
    typo = tmp_path / "typo.db"
    one_line_error(tokreg_cli("sync", "--from", str(typo), ok=False), 4, "typo.db", "nothing was synced")
    assert not typo.exists()


def test_offline_never_connects_and_names_every_source(
    registry: Registry, small_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TOKREG_CACHE", str(tmp_path / "cache"))
    v = registry.train("m", [small_corpus], BpeOptions(vocab_size=280))
    pin = lockfile.new_pin("m", 1, v.content_hash, v.sha256, "postgresql://team@192.0.2.1/tokreg")
    lockfile.write(tmp_path / "tokreg.lock", pin)
    monkeypatch.setenv("TOKREG_OFFLINE", "1")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "nothing"))
    with no_connections():
        with pytest.raises(NotFoundError) as e:
            tokreg.load("m", db="http://192.0.2.1:8750")
        res = tokreg_cli("sync", "--from", "http://192.0.2.1:9", ok=False)
    msg = str(e.value)
    assert msg.count("skipped: TOKREG_OFFLINE=1") == 2 and "192.0.2.1" in msg and "\n" not in msg
    one_line_error(res, 4, "tokreg.lock", "m@1", "tokreg serve http://192.0.2.1:9 (skipped: TOKREG_OFFLINE=1)")
    # Online, the same lockfile syncs from a registry named with --from, and then loads offline.
    monkeypatch.delenv("TOKREG_OFFLINE")
    tokreg_cli("sync", "--from", str(registry.where))
    monkeypatch.setenv("TOKREG_OFFLINE", "1")
    with no_connections():
        assert tokreg.load("m").hash == v.content_hash


@pytest.fixture
def relabelled(registry: Registry, small_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project whose lockfile pins tam@2 with the hash of tam@1 (the number disagrees with what
    the registry holds under that hash)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TOKREG_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("TOKREG_DB", str(registry.where))
    one = registry.train("tam", [small_corpus], BpeOptions(vocab_size=290))
    registry.train("tam", [small_corpus], BpeOptions(vocab_size=320))
    lockfile.write(
        tmp_path / "tokreg.lock", lockfile.new_pin("tam", 2, one.content_hash, one.sha256, str(registry.url))
    )
    return tmp_path


def test_a_relabelled_pin_is_the_same_warm_or_cold(relabelled: Path, registry: Registry, tmp_path: Path) -> None:
    one_ids = registry.load("tam@1").encode(TEXT)
    two_ids = registry.load("tam@2").encode(TEXT)
    assert one_ids != two_ids
    one = registry.resolve("tam@1").content_hash
    want = f"{relabelled / 'tokreg.lock'} pins tam@2 ({one}); {registry.where} holds that content as tam@1"
    for state in ("cold", "warm", "warm again"):
        if state == "cold":
            shutil.rmtree(tmp_path / "cache", ignore_errors=True)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # tokreg.load never compares labels: nothing to say
            tok = tokreg.load("tam")
        assert (tok.ref, tok.encode(TEXT)) == ("tam@2", one_ids), state
        # A registry's reads use the registry's version holding that content, and say so.
        with pytest.warns(lockfile.PinLabelWarning) as said:
            assert registry.resolve("tam").ref == "tam@1"
        assert [str(w.message) for w in said] == [want + ": using it (the hash is the pin; the number is provenance)"]
        res = CliRunner().invoke(cli, ["show", "tam", "--json"], catch_exceptions=False)
        assert res.exit_code == 0 and json.loads(res.stdout)["ref"] == "tam@1"
        assert res.stderr.count("tokreg: warning:") == 1 and want in res.stderr
        enc = tokreg_cli("encode", "tam", TEXT)
        assert enc.exit_code == 0 and enc.stdout.split() == [str(i) for i in one_ids] and enc.stderr == ""


def test_a_pin_no_source_holds_is_refused_the_same_warm_or_cold(relabelled: Path, registry: Registry) -> None:
    lock = relabelled / "tokreg.lock"
    pin = lockfile.read(lock).pins["tam"]
    wrong = "xxh3-128:" + "1" * 32
    lock.write_text(lock.read_text(encoding="utf-8").replace(pin.hash, wrong), encoding="utf-8")
    for _ in range(2):  # the loads before cached nothing under a hash no source holds
        with pytest.raises(IntegrityError, match=r"holds tam@2 as xxh3-128:\w+, not the pinned content"):
            tokreg.load("tam")


def test_duplicate_pins_are_refused_in_one_line(
    registry: Registry, small_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    v = registry.train("m", [small_corpus], BpeOptions(vocab_size=280))
    one = lockfile.render([lockfile.new_pin("m", 1, v.content_hash, v.sha256, "")])
    (tmp_path / "tokreg.lock").write_text(one + one.split("\n", 2)[2], encoding="utf-8")
    res = tokreg_cli("encode", "m", "hi", ok=False, env={"TOKREG_DB": str(registry.where)})
    one_line_error(res, 1, str(tmp_path / "tokreg.lock"), "pins 'm' twice (pins 1 and 2)")


def test_damaged_vendored_content_is_never_loaded(
    machine_a: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = to_machine_b(machine_a, tmp_path, monkeypatch, vendored=True)
    pin = lockfile.read(project / "tokreg.lock").pins["m"]
    f = vendor.path_of(project, pin.hash)
    good = lzma.decompress(f.read_bytes())
    f.write_bytes(lzma.compress(good + b"\x00"))
    with pytest.raises(IntegrityError) as e:
        tokreg.load("m")
    assert str(f) in str(e.value) and "hashes to" in str(e.value) and pin.hash in str(e.value)
    f.write_bytes(b"not xz at all")
    with pytest.raises(IntegrityError, match="damaged"):
        tokreg.load("m")


@pytest.mark.slow
def test_sync_refusals_are_one_line(machine_a: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    other = machine_a["root"] / "m2.tokreg.json"
    tokreg_cli("export", "m@2", "--format", "tokreg", "-o", str(other))
    to_machine_b(machine_a, tmp_path, monkeypatch, vendored=False)
    one_line_error(tokreg_cli("sync", "--from", str(tmp_path / "missing.db"), ok=False), 4, "missing.db")
    # A --from that holds another version: the advice is to name another source, not to run sync.
    res = tokreg_cli("sync", "--from", str(other), ok=False)
    one_line_error(res, 4, "m2.tokreg.json", "holds", "Name a source that holds this version with --from")
    assert "Run `tokreg sync" not in res.output
    one_line_error(tokreg_cli("sync", "--from", "http://127.0.0.1:9", ok=False), 4, "cannot reach http://127.0.0.1:9")
    one_line_error(tokreg_cli("sync", "--from", "http://", ok=False), 4, "is not a tokreg serve URL")
    one_line_error(
        tokreg_cli("sync", "--lock", str(tmp_path / "nope.lock"), ok=False), 1, "nope.lock", "does not exist"
    )
    os.chdir(tmp_path)
    res = tokreg_cli("sync", ok=False)
    assert res.exit_code == 2 and "no tokreg.lock" in res.output and "Traceback" not in res.output


def test_a_served_token_is_sent_and_content_is_checked(
    machine_a: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tokreg.versions import remote

    token = "t0ken-" + "x" * 30
    pin = lockfile.read(machine_a["project"] / "tokreg.lock").pins["m"]
    with serving(machine_a["db"], token=token) as url:
        with pytest.raises(tokreg.InputError, match="401.*TOKREG_SERVE_TOKEN"):
            remote.content(url, pin.hash)
        monkeypatch.setenv("TOKREG_SERVE_TOKEN", token)
        assert remote.content(url, pin.hash) is not None
        assert remote.content(url, "xxh3-128:" + "0" * 32) is None
        # Content that does not hash right on arrival is refused (a server or a proxy changed it).
        monkeypatch.setattr(remote, "_get", lambda base, path: b"tokreg-content-v1\n{}")
        with pytest.raises(IntegrityError, match="served content hashing to"):
            remote.content(url, pin.hash)
