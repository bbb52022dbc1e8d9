"""Who may ask `tokreg serve` for what (access.py, work.py), over HTTP: every route that computes
on its input refuses what a browser marks as coming from another site and runs nothing; the
Host names are explicit whatever the bound address; --token is required on every request when
given; heavy requests queue or are refused, never stall; deeply nested JSON is a 400."""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

import pytest

from tokreg import Registry

from .conftest import NEEDS, Served

pytest.importorskip("starlette", reason=NEEDS)

from starlette.routing import Mount, Route  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

from tokreg.serve import create_app, limits  # noqa: E402
from tokreg.serve.access import Rules, token_cookie  # noqa: E402
from tokreg.serve.work import Work  # noqa: E402

BASE = "http://127.0.0.1:8765"
TOKEN = "team-token-0123456789abcdef"


class Probe:
    """Counts what actually ran: SQL statements and encoders fetched (every encode fetches one)."""

    def __init__(self, app: Any, monkeypatch: pytest.MonkeyPatch):
        self.sql = 0
        self.encoders = 0
        reg, encoders = app.state.reg, app.state.encoders
        real_sql, real_get = reg.sql, encoders.get

        def sql(*a: Any, **k: Any) -> Any:
            self.sql += 1
            return real_sql(*a, **k)

        def get(*a: Any, **k: Any) -> Any:
            self.encoders += 1
            return real_get(*a, **k)

        monkeypatch.setattr(reg, "sql", sql)
        monkeypatch.setattr(encoders, "get", get)

    @property
    def ran(self) -> int:
        return self.sql + self.encoders


@pytest.fixture
def probed(ro_registry: Registry, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[TestClient, Probe]]:
    app = create_app(ro_registry)
    probe = Probe(app, monkeypatch)
    with TestClient(app, base_url=BASE, raise_server_exceptions=False) as c:
        yield c, probe


def form_token(c: TestClient) -> str:
    found = re.search(r'name="form_token" value="([^"]+)"', c.get("/sql").text)
    assert found
    return found.group(1)


def one_line(res: Any, status: int, *words: str) -> None:
    assert res.status_code == status, res.text[:300]
    body = res.json()
    assert body["status"] == status and "\n" not in body["error"], body
    for w in words:
        assert w in body["error"], body["error"]


# Every route, and whether it computes on its input ("work") or only reads the registry. A new
# route fails test_every_route_is_reviewed until it is put here, and, if it works, below.
ROUTES = {
    ("/", "GET"): "reads",
    ("/v/{ref}", "GET"): "reads",
    ("/v/{ref}/tokens", "GET"): "reads",
    ("/v/{ref}/tokens/{id}", "GET"): "reads",
    ("/v/{ref}/pin", "GET"): "reads",
    ("/playground", "GET"): "work (?format=json encodes)",
    ("/playground", "POST"): "reads (draws the form; encoding is /api/encode or ?format=json)",
    ("/api/encode", "POST"): "work",
    ("/diff", "GET"): "work (with text=)",
    ("/diff", "POST"): "work (with text)",
    ("/sql", "GET"): "reads (fills in the form, never runs it)",
    ("/sql", "POST"): "work",
    ("/static", "GET"): "reads",
    ("/index.json", "GET"): "reads",
    ("/content/{hash}", "GET"): "reads (the stored content, or the cached copy of it)",
}


def test_every_route_is_reviewed(client: TestClient) -> None:
    app: Any = client.app
    found = set()
    for r in app.routes:
        if isinstance(r, Mount):
            found.add((r.path, "GET"))
        else:
            assert isinstance(r, Route)
            found |= {(r.path, m) for m in r.methods or () if m != "HEAD"}
    assert found == set(ROUTES)


def work_requests(c: TestClient, refs: dict[str, str]) -> list[tuple[str, Callable[[dict[str, str]], Any]]]:
    """Each request that makes the server compute, as its own page or a script sends it."""
    ref, ref2 = refs["bpe"], refs["bpe2"]
    token = form_token(c)
    return [
        ("POST /sql JSON", lambda h: c.post("/sql?format=json", json={"q": "SELECT 1"}, headers=h)),
        ("POST /sql form", lambda h: c.post("/sql", data={"q": "SELECT 1", "form_token": token}, headers=h)),
        ("POST /api/encode", lambda h: c.post("/api/encode", json={"text": "hi", "versions": [ref]}, headers=h)),
        ("GET /playground JSON", lambda h: c.get(f"/playground?format=json&v={ref}&text=hi", headers=h)),
        (
            "POST /diff text",
            lambda h: c.post("/diff", data={"a": ref, "b": ref2, "text": "hi", "form_token": token}, headers=h),
        ),
        ("GET /diff text", lambda h: c.get(f"/diff?a={ref}&b={ref2}&text=hi", headers=h)),
    ]


CROSS_SITE = [
    {"sec-fetch-site": "cross-site"},
    {"sec-fetch-site": "same-site"},  # another port of the same host is the same site, another origin
    {"origin": "https://evil.example"},
    {"origin": "null"},
    {"origin": "http://127.0.0.1:9999"},
    {"sec-fetch-site": "cross-site", "origin": "https://evil.example", "sec-fetch-mode": "no-cors"},
]


@pytest.mark.parametrize("headers", CROSS_SITE, ids=lambda h: ",".join(f"{k}={v}" for k, v in h.items()))
def test_work_from_another_site_is_refused_and_runs_nothing(
    probed: tuple[TestClient, Probe], served: Served, headers: dict[str, str]
) -> None:
    c, probe = probed
    for name, send in work_requests(c, served.refs):
        res = send({**headers, "accept": "application/json"})
        assert res.status_code == 403, (name, res.status_code, res.text[:200])
        one_line(res, 403, "refused")
    assert probe.ran == 0


def test_work_from_the_same_origin_and_from_scripts_runs(probed: tuple[TestClient, Probe], served: Served) -> None:
    c, probe = probed
    same = {"sec-fetch-site": "same-origin", "origin": BASE}
    for headers in (same, {"sec-fetch-site": "none"}, {}):  # the page itself; a typed URL; curl
        for name, send in work_requests(c, served.refs):
            before = probe.ran
            res = send(headers)
            assert res.status_code == 200, (name, headers, res.text[:200])
            assert probe.ran > before, name  # the probe sees work that ran: the refusals above are real
    # reading pages from another site stays possible (a link to the registry)
    assert c.get("/", headers={"sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate"}).status_code == 200
    assert c.get("/sql?q=SELECT%201", headers={"sec-fetch-site": "cross-site"}).status_code == 200
    assert probe.sql == sum(1 for _ in range(3)) * 2  # two SQL requests per round above, none from the GETs


def test_a_form_post_needs_the_form_token(probed: tuple[TestClient, Probe], served: Served) -> None:
    c, probe = probed
    # no Origin, no Sec-Fetch-Site: what an old browser sends for a form on another site
    one_line(c.post("/sql?format=json", data={"q": "SELECT 1"}), 403, "form token")
    one_line(c.post("/sql?format=json", data={"q": "SELECT 1", "form_token": "x" * 43}), 403, "form token")
    res = c.post(
        "/api/encode?format=json", content=b'{"text":"hi","versions":["web@1"]}', headers={"content-type": "text/plain"}
    )
    one_line(res, 403, "form token")
    assert probe.ran == 0


@pytest.mark.parametrize("body", [b"[" * 100_000, b'{"text": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", b"{" * 50_000])
def test_deeply_nested_json_is_a_400(client: TestClient, body: bytes) -> None:
    res = client.post("/api/encode", content=body, headers={"content-type": "application/json"})
    one_line(res, 400, "JSON")
    res = client.post("/sql?format=json", content=body, headers={"content-type": "application/json"})
    one_line(res, 400, "JSON")


def app_with(reg: Registry, rules: Rules) -> Any:
    return create_app(reg, rules=rules)


def test_hosts_when_bound_to_every_address(ro_registry: Registry) -> None:
    app = app_with(ro_registry, Rules.of("0.0.0.0"))
    with TestClient(app, base_url=BASE) as c:
        for ok in ("127.0.0.1:8765", "localhost:8765", "[::1]:8765", "0.0.0.0:8765"):
            assert c.get("/", headers={"host": ok}).status_code == 200, ok
        for foreign in ("evil.example", "evil.example:8765", "192.168.1.20:8765", "tokreg.team.example"):
            one_line(c.get("/?format=json", headers={"host": foreign}), 400, "not a name of this server")
        page = c.get("/", headers={"host": "evil.example"})  # a rebound name's page reads nothing
        assert page.status_code == 400 and "registry.db" not in page.text and "--allowed-host" in page.text
    app = app_with(ro_registry, Rules.of("0.0.0.0", ["tokreg.team.example", "10.0.0.5"]))
    with TestClient(app, base_url=BASE) as c:
        for ok in ("tokreg.team.example", "TOKREG.team.example:443", "10.0.0.5:8765", "localhost"):
            assert c.get("/", headers={"host": ok}).status_code == 200, ok
        one_line(c.get("/?format=json", headers={"host": "evil.example"}), 400, "--allowed-host")
        # behind a proxy that rewrites Host, the allowed name is this server's origin too
        res = c.post(
            "/sql?format=json",
            json={"q": "SELECT 1"},
            headers={"origin": "https://tokreg.team.example", "sec-fetch-site": "same-origin"},
        )
        assert res.status_code == 200 and res.json()["rows"] == [[1]]
        one_line(c.post("/sql?format=json", json={"q": "SELECT 1"}, headers={"origin": "https://evil.example"}), 403)


def test_rules_say_who_can_reach_the_server() -> None:
    assert Rules.of("127.0.0.1").who("127.0.0.1", 8765) == "reachable from this machine only"
    line = Rules.of("0.0.0.0", ["tokreg.team.example"]).who("0.0.0.0", 8765)
    assert "any machine that can connect to 0.0.0.0 port 8765" in line and "tokreg.team.example" in line
    assert "add --token" in line and "\n" not in line
    assert "needs the --token" in Rules.of("0.0.0.0", token=TOKEN).who("0.0.0.0", 8765)
    with pytest.raises(Exception, match="at least 16"):
        Rules.of("127.0.0.1", token="short")


def test_a_token_is_needed_on_every_request(ro_registry: Registry, served: Served) -> None:
    app = app_with(ro_registry, Rules.of("127.0.0.1", token=TOKEN))
    with TestClient(app, base_url=BASE, follow_redirects=False) as c:
        assert c.get("/static/tokreg.css").status_code == 200  # the package's own files, public
        for url in ("/", "/sql", "/playground", f"/v/{served.refs['bpe']}?format=json"):
            res = c.get(url, headers={"accept": "application/json"})
            one_line(res, 401, "needs its token", "?token=")
            assert res.headers["www-authenticate"].startswith("Bearer")
        one_line(c.post("/sql?format=json", json={"q": "SELECT 1"}), 401)
        page = c.get("/")  # the page for people says what to do, and nothing of the registry
        assert page.status_code == 401 and "Token needed" in page.text and "?token=" in page.text
        assert str(served.db) not in page.text and "registry.db" not in page.text
        one_line(c.get("/?format=json", headers={"authorization": "Bearer " + TOKEN[:-1] + "x"}), 401)
        one_line(c.get("/?format=json&token=wrong-token-0123456789"), 401)
        bearer = {"authorization": f"Bearer {TOKEN}"}
        assert c.get("/?format=json", headers=bearer).status_code == 200
        res = c.post("/sql?format=json", json={"q": "SELECT 1"}, headers=bearer)
        assert res.status_code == 200 and res.json()["rows"] == [[1]]
        # one visit with ?token= sets the cookie and shows the page without the token in its address
        res = c.get(f"/v/{served.refs['bpe']}?token={TOKEN}&x=1")
        assert res.status_code == 303 and res.headers["location"] == f"/v/{served.refs['bpe']}?x=1"
        cookie = res.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=lax" in cookie.replace("Lax", "lax")
        assert cookie.startswith(token_cookie(8765) + "=")
        assert c.get("/", headers={"cookie": f"{token_cookie(8765)}={TOKEN}"}).status_code == 200
        assert c.get("/", headers={"cookie": f"{token_cookie(8765)}=nope"}).status_code == 401
        # the cookie of a server on another port of this host is not this server's token
        assert c.get("/", headers={"cookie": f"{token_cookie(8766)}={TOKEN}"}).status_code == 401
    with TestClient(app, base_url=BASE) as c:  # a browser: follows the redirect, keeps the cookie
        assert c.get(f"/?token={TOKEN}").status_code == 200
        assert c.get("/sql").status_code == 200


def test_heavy_requests_queue_or_are_refused(ro_registry: Registry, served: Served) -> None:
    """One worker, one waiting: with the worker held, a second request waits, a third is refused
    at once with a 503 and Retry-After; a request that waits too long is refused too."""
    release = threading.Event()
    started = threading.Event()
    work = Work(workers=1, queue=1, wait=30.0)
    app = create_app(ro_registry, work=work)
    real_get = app.state.encoders.get

    def slow_get(ref: str) -> Any:
        started.set()
        assert release.wait(30)
        return real_get(ref)

    app.state.encoders.get = slow_get
    body = {"text": "hi", "versions": [served.refs["bpe"]]}
    results: list[Any] = []
    with TestClient(app, base_url=BASE) as c:
        first = threading.Thread(target=lambda: results.append(c.post("/api/encode", json=body)))
        first.start()
        assert started.wait(30)
        second = threading.Thread(target=lambda: results.append(c.post("/api/encode", json=body)))
        second.start()
        for _ in range(300):
            if work.waiting == 1:
                break
            threading.Event().wait(0.01)
        assert work.running == 1 and work.waiting == 1
        res = c.post("/api/encode", json=body)
        one_line(res, 503, "busy", "try again")
        assert res.headers["retry-after"].isdigit()
        assert c.get("/").status_code == 200  # pages answer meanwhile
        release.set()
        first.join(30)
        second.join(30)
    assert [r.status_code for r in results] == [200, 200]
    assert work.refused == 1 and work.running == 0


def test_a_request_past_its_budget_is_a_503(ro_registry: Registry, served: Served) -> None:
    app = create_app(ro_registry, work=Work(seconds=1e-9))
    with TestClient(app, base_url=BASE) as c:
        res = c.post("/api/encode", json={"text": "hi", "versions": [served.refs["bpe"]]})
        one_line(res, 503, "budget")


def test_waiting_too_long_is_a_503(served: Served) -> None:
    work = Work(workers=1, queue=4, wait=0.05)

    class Conn:
        class app:  # noqa: N801 - what require_same_origin reads
            class state:  # noqa: N801
                rules = Rules.of("127.0.0.1")

        headers: dict[str, str] = {}

    gate = threading.Event()

    async def both() -> list[Any]:
        def hold(deadline: Any) -> str:
            gate.wait(5)
            return "done"

        first = asyncio.ensure_future(work.run(Conn(), hold))  # type: ignore[arg-type]
        await asyncio.sleep(0.05)
        try:
            await work.run(Conn(), hold)  # type: ignore[arg-type]
        except Exception as e:
            refused = e
        gate.set()
        return [await first, refused]

    # its own thread: the browser tests' Playwright keeps an event loop running in this one
    with ThreadPoolExecutor(1) as pool:
        done, refused = pool.submit(asyncio.run, both()).result(30)
    assert done == "done" and getattr(refused, "status_code", None) == 503 and "waited" in str(refused.detail)
    assert limits.HEAVY_WORKERS >= 1 and limits.HEAVY_QUEUE >= 1
