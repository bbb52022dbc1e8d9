"""`tokreg serve` as a command: it serves until Ctrl-C, says in one line when the port is taken,
the registry is missing or the serve extra is not installed."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import urllib.request

import pytest

from ..conftest import ROOT, Cli
from .conftest import NEEDS, Served, file_digest

pytest.importorskip("starlette", reason=NEEDS)


def one_line_error(res: object, code: int, *words: str) -> None:
    out = res.output  # type: ignore[attr-defined]
    lines = [x for x in out.splitlines() if x]
    assert res.exit_code == code and len(lines) == 1 and lines[0].startswith("tokreg: error:"), out  # type: ignore[attr-defined]
    assert "Traceback" not in out
    for w in words:
        assert w in lines[0], lines[0]


def test_serves_until_interrupted(served: Served) -> None:
    p = subprocess.Popen(
        [sys.executable, "-m", "tokreg", "serve", "--db", str(served.db), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        first = p.stdout.readline() if p.stdout else ""
        assert first.startswith("serving sqlite:///") and "(read-only) at http://127.0.0.1:" in first, first
        url = first.split(" at ")[1].split()[0]
        with urllib.request.urlopen(url + "?format=json", timeout=10) as res:
            refs = {v["ref"] for v in json.load(res)["versions"]}
        assert refs == set(served.refs.values())
    finally:
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=20)
    assert p.returncode == 0 and "Traceback" not in err, err
    assert file_digest(served.db) == served.digest


def test_a_taken_port_is_one_line(served: Served) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        res = Cli(served.db)("serve", "--port", port, ok=False)
    one_line_error(res, 1, f"port {port}", "already in use", "--port")


def test_a_missing_registry_is_one_line(tmp_path: object) -> None:
    missing = f"{tmp_path}/none.db"
    one_line_error(Cli(missing)("serve", "--port", 0, ok=False), 4, "no registry at", "none.db")  # type: ignore[arg-type]


def test_without_the_extra_it_names_the_extra(served: Served, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [m for m in sys.modules if m == "tokreg.serve" or m.startswith("tokreg.serve.")]:
        monkeypatch.delitem(sys.modules, name)
    for name in [m for m in sys.modules if m == "starlette" or m.startswith("starlette.")]:
        monkeypatch.setitem(sys.modules, name, None)  # as if not installed
    one_line_error(Cli(served.db)("serve", ok=False), 1, "pip install 'tokreg[serve]'", "starlette")
