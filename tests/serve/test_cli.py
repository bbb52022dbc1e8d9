"""`tokreg serve` as a command: it serves until Ctrl-C, says who can reach it, keeps its Host
names explicit on any address (--allowed-host), requires --token when given, and says in one line
when the port is taken, the registry is missing or the serve extra is not installed."""

from __future__ import annotations

import http.client
import json
import socket
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from ..conftest import Cli, one_error_line
from .conftest import NEEDS, Served, file_digest, serve_process

pytest.importorskip("starlette", reason=NEEDS)


def test_serves_until_interrupted(served: Served) -> None:
    with serve_process(str(served.db)) as run:
        assert run.lines[0].startswith("serving sqlite:///") and "(read-only) at http://127.0.0.1:" in run.lines[0]
        with urllib.request.urlopen(run.url + "?format=json", timeout=10) as res:
            refs = {v["ref"] for v in json.load(res)["versions"]}
        assert refs == set(served.refs.values())
    assert run.returncode == 0 and "Traceback" not in run.err, run.err
    assert file_digest(served.db) == served.digest


def test_a_taken_port_is_one_line(served: Served) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        res = Cli(served.db)("serve", "--port", port, ok=False)
    one_error_line(res, f"port {port}", "already in use", "--port", code=1)


def test_a_missing_registry_is_one_line(tmp_path: object) -> None:
    missing = f"{tmp_path}/none.db"
    one_error_line(Cli(missing)("serve", "--port", 0, ok=False), "no registry at", "none.db", code=4)  # type: ignore[arg-type]


def test_without_the_extra_it_names_the_extra(served: Served, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [m for m in sys.modules if m == "tokreg.serve" or m.startswith("tokreg.serve.")]:
        monkeypatch.delitem(sys.modules, name)
    for name in [m for m in sys.modules if m == "starlette" or m.startswith("starlette.")]:
        monkeypatch.setitem(sys.modules, name, None)  # as if not installed
    one_error_line(Cli(served.db)("serve", ok=False), "pip install 'tokreg[serve]'", "starlette", code=1)


@contextmanager
def started(served: Served, *args: str, env: dict[str, str] | None = None) -> Iterator[tuple[int, list[str]]]:
    """`tokreg serve ARGS` on a free port; yields the port and the lines it printed at startup."""
    with serve_process(str(served.db), *args, env=env, lines=2) as run:
        yield int(run.url.rstrip("/").rsplit(":", 1)[1]), run.lines
    assert run.returncode == 0 and "Traceback" not in run.err, run.err


def get(port: int, path: str, headers: dict[str, str]) -> tuple[int, str]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    try:
        conn.request("GET", path, headers=headers)
        res = conn.getresponse()
        return res.status, res.read().decode()
    finally:
        conn.close()


def test_on_every_address_the_host_names_are_explicit(served: Served) -> None:
    with started(served, "--host", "0.0.0.0") as (port, lines):
        assert lines[1].startswith(f"reachable from any machine that can connect to 0.0.0.0 port {port}"), lines
        assert "add --token" in lines[1]
        assert get(port, "/?format=json", {"host": f"127.0.0.1:{port}"})[0] == 200
        assert get(port, "/?format=json", {"host": f"localhost:{port}"})[0] == 200
        for foreign in ("evil.example", f"evil.example:{port}", "tokreg.team.example"):
            status, body = get(port, "/?format=json", {"host": foreign})
            assert status == 400 and "not a name of this server" in json.loads(body)["error"], body
    with started(served, "--host", "0.0.0.0", "--allowed-host", "tokreg.team.example") as (port, lines):
        assert "tokreg.team.example" in lines[1]
        assert get(port, "/?format=json", {"host": "tokreg.team.example"})[0] == 200
        assert get(port, "/?format=json", {"host": "evil.example"})[0] == 400


def test_with_a_token_every_request_needs_it(served: Served) -> None:
    token = "cli-token-0123456789abcdef"
    with started(served, env={"TOKREG_SERVE_TOKEN": token}) as (port, lines):
        assert lines[1] == "reachable from this machine only; every request needs the --token", lines
        host = {"host": f"127.0.0.1:{port}"}
        status, body = get(port, "/?format=json", host)
        assert status == 401 and "needs its token" in json.loads(body)["error"]
        assert get(port, "/?format=json", {**host, "authorization": f"Bearer {token}"})[0] == 200
        assert get(port, "/?format=json", {**host, "authorization": "Bearer wrong-token-0123456789"})[0] == 401
    one_error_line(Cli(served.db)("serve", "--token", "short", "--port", 0, ok=False), "at least 16", code=1)
