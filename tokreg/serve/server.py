"""Running the app: bind the address first (so a taken port is one clear line, not a server
log), then serve it with uvicorn until Ctrl-C."""

from __future__ import annotations

import errno
import logging
import socket
import sys
import webbrowser
from collections.abc import Sequence
from typing import Callable, Optional

import uvicorn

from ..errors import InputError
from ..registry import Registry
from .access import Rules
from .app import create_app


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on (host, port); port 0 picks a free one."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as e:
        raise InputError(f"cannot listen on host {host!r}: {e.strerror}; give an address such as 127.0.0.1") from None
    family, kind, proto, _, addr = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(addr)
        sock.listen(128)
    except OSError as e:
        sock.close()
        if e.errno == errno.EADDRINUSE:
            raise InputError(
                f"port {port} on {host} is already in use (another tokreg serve?); pick another with --port N"
            ) from None
        raise InputError(f"cannot listen on {host}:{port}: {e.strerror}") from None
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    if host in ("0.0.0.0", "::"):
        shown = "127.0.0.1"
    return f"http://{shown}:{port}/"


def serve(
    db: Optional[str],
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    open_browser: bool = False,
    allowed_hosts: Sequence[str] = (),
    token: Optional[str] = None,
    say: Callable[[str], None] = print,
    warn: Callable[[str], None] = lambda line: print(line, file=sys.stderr),
) -> None:
    """Serves the registry at `db` read-only on host:port until interrupted. With a host that is
    not loopback, the Host names accepted are the loopback ones, `host` and `allowed_hosts`; with
    `token`, every request must carry it (see access.py)."""
    rules = Rules.of(host, allowed_hosts, token)
    reg = Registry.read_only(db)
    try:
        sock = bind(host, port)
    except InputError:
        reg.close()
        raise
    url = url_of(sock)
    app = create_app(reg, rules=rules)
    say(f"serving {reg.location} (read-only) at {url}  (Ctrl-C stops)")
    say(rules.who(host, sock.getsockname()[1]))
    if app.state.role_warning:
        warn(f"warning: {app.state.role_warning}")
    config = uvicorn.Config(app, log_level="warning", access_log=False, limit_concurrency=100, timeout_keep_alive=5)
    server = uvicorn.Server(config)
    if open_browser:
        webbrowser.open(url)
    logging.getLogger("tokreg.serve").setLevel(logging.WARNING)
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass  # uvicorn re-raises the Ctrl-C it shut down on; for a server that is how it stops
    finally:
        sock.close()
        reg.close()
    say("stopped")
