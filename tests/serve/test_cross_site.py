"""`tokreg serve` attacked from another origin, in a real browser: a page served by a second
local server (another port, reached as `localhost`: another site; and as `127.0.0.1`: the same
site, another origin) tries an `<img>`, `<form>` POSTs and `fetch` (with and without `no-cors`)
against `/sql`, `/api/encode`, the playground's JSON and the diff on text of a running server,
in headless Chromium through Playwright. A probe inside the server counts every SQL statement
run and every encoder fetched: it must stay at zero, while the server's request log shows the
attacks arrived and were refused. The same probe sees the server's own pages run SQL and encode,
so a refusal that let work through would fail here."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tokreg import Registry

from .conftest import NEEDS, Served, running
from .conftest import chromium as browser_path

pytest.importorskip("starlette", reason=NEEDS)
pytest.importorskip("playwright", reason="the browser tests need Playwright: pip install playwright")

from playwright.sync_api import Browser, Page, expect  # noqa: E402

from tokreg.serve import create_app  # noqa: E402

#: A query whose running the probe sees (it calls no function: nothing but the count shows it ran).
PROBE = "SELECT count(*) AS probe FROM versions"


class Logged:
    """The app, recording (method, path, status) of every request: the server's request log."""

    def __init__(self, app: Any):
        self.app = app
        self.log: list[tuple[str, str, int]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def record(message: Any) -> None:
            if message["type"] == "http.response.start":
                self.log.append((scope["method"], scope["path"], message["status"]))
            await send(message)

        await self.app(scope, receive, record)


class Target:
    def __init__(self, url: str, app: Any, logged: Logged):
        self.url, self.app, self.logged = url, app, logged
        self.sql = 0
        self.encoders = 0


@pytest.fixture
def target(ro_registry: Registry, monkeypatch: pytest.MonkeyPatch) -> Iterator[Target]:
    """A running `tokreg serve` app whose SQL and encoders are counted."""
    app = create_app(ro_registry)
    logged = Logged(app)
    with running(logged) as url:
        t = Target(url, app, logged)
        reg, encoders = app.state.reg, app.state.encoders
        real_sql, real_get = reg.sql, encoders.get

        def sql(*a: Any, **k: Any) -> Any:
            t.sql += 1
            return real_sql(*a, **k)

        def get(*a: Any, **k: Any) -> Any:
            t.encoders += 1
            return real_get(*a, **k)

        monkeypatch.setattr(reg, "sql", sql)
        monkeypatch.setattr(encoders, "get", get)
        yield t


def attack_page(target: str, ref: str, ref2: str) -> str:
    """The other site's page: every way a page can send a request without the server's consent."""
    q = json.dumps(PROBE)
    encode = json.dumps({"text": "probe", "versions": [ref]})
    # text/plain form that spells a JSON body: {"text":"probe","versions":["REF"],"pad":"="}
    plain_name = '{"text":"probe","versions":["' + ref + '"],"pad":"'
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>another site</title></head><body>
<h1>another site</h1>
<img class="probe" src="{target}/sql?q={PROBE.replace(" ", "%20")}&format=json">
<img class="probe" src="{target}/sql?q={PROBE.replace(" ", "%20")}">
<img class="probe" src="{target}/playground?format=json&v={ref}&text=probe">
<img class="probe" src="{target}/diff?a={ref}&b={ref2}&text=probe">
<iframe name="s1"></iframe><iframe name="s2"></iframe><iframe name="s3"></iframe><iframe name="s4"></iframe>
<form method="post" action="{target}/sql?format=json" target="s1"><input name="q" value='{PROBE}'></form>
<form method="post" action="{target}/sql" target="s2"><input name="q" value='{PROBE}'>
  <input name="form_token" value="guessed"></form>
<form method="post" action="{target}/api/encode" target="s3" enctype="text/plain">
  <input name='{plain_name}' value='"}}'></form>
<form method="post" action="{target}/diff" target="s4"><input name="a" value="{ref}"><input name="b" value="{ref2}">
  <input name="text" value="probe"></form>
<form method="post" action="{target}/sql" id="top"><input name="q" value='{PROBE}'></form>
<script>
const T = {json.dumps(target)};
const results = {{}};
async function attempt(name, promise) {{
  try {{ const r = await promise; results[name] = r.type + " " + r.status; }}
  catch (e) {{ results[name] = "blocked: " + e.message; }}
}}
function loaded(el) {{ return new Promise((ok) => {{ el.onload = ok; el.onerror = ok; if (el.complete) ok(); }}); }}
window.addEventListener("load", async () => {{
  const frames = [...document.querySelectorAll("iframe")].map(loaded);
  for (const f of document.forms) if (f.target) f.submit();
  const J = {{ "content-type": "application/json" }};
  const F = {{ "content-type": "application/x-www-form-urlencoded" }};
  const sql = JSON.stringify({{ q: {q} }});
  const enc = {json.dumps(encode)};
  const go = (name, path, init) => attempt(name, fetch(T + path, init));
  const post = {{ method: "POST" }};
  const blind = {{ method: "POST", mode: "no-cors" }};
  await Promise.all([
    go("fetch POST /sql JSON", "/sql?format=json", {{ ...post, headers: J, body: sql }}),
    go("fetch POST /sql, cookies", "/sql?format=json", {{ ...post, credentials: "include", headers: J, body: sql }}),
    go("no-cors POST /sql form", "/sql?format=json", {{ ...blind, headers: F, body: "q=" + encodeURIComponent({q}) }}),
    go("no-cors POST /sql JSON", "/sql?format=json", {{ ...blind, headers: J, body: sql }}),
    go("no-cors GET /sql", "/sql?format=json&q=" + encodeURIComponent({q}), {{ mode: "no-cors" }}),
    go("fetch POST /api/encode", "/api/encode", {{ ...post, headers: J, body: enc }}),
    go("no-cors POST /api/encode", "/api/encode", {{ ...blind, headers: J, body: enc }}),
    go("no-cors GET /playground", "/playground?format=json&v={ref}&text=probe", {{ mode: "no-cors" }}),
    ...[...document.images].map(loaded),
  ]);
  await Promise.race([Promise.all(frames), new Promise((ok) => setTimeout(ok, 5000))]);
  window.__done = results;
}});
</script></body></html>"""


@pytest.fixture
def other_site(target: Target, served: Served) -> Iterator[int]:
    """A second local HTTP server (another port) serving the attack page; yields its port."""
    page = attack_page(target.url, served.refs["bpe"], served.refs["bpe2"]).encode("utf-8")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            self.send_response(200)
            self.send_header("content-type", "text/html; charset=utf-8")
            self.send_header("content-length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def browser_page(browser: Browser) -> Iterator[Page]:
    """A fresh page in a fresh context (no cookies from other tests)."""
    context = browser.new_context(viewport={"width": 1366, "height": 768})
    page = context.new_page()
    page.set_default_timeout(20_000)
    yield page
    context.close()


WORK = ("/sql", "/api/encode", "/playground", "/diff")


@pytest.mark.parametrize("site", ["localhost", "127.0.0.1"], ids=["cross-site", "same-site-other-port"])
def test_another_origin_runs_nothing(
    browser_page: Page, target: Target, other_site: int, served: Served, site: str, tmp_path: Path
) -> None:
    page = browser_page
    page.goto(f"http://{site}:{other_site}/attack.html")
    page.wait_for_function("window.__done !== undefined")
    results = page.evaluate("window.__done")
    time.sleep(0.5)  # anything that got through has had time to run
    assert (target.sql, target.encoders) == (0, 0), (results, target.logged.log)
    log = target.logged.log
    # the attacks reached the server and were refused there (403), or never left the browser
    refused = {(m, p) for m, p, s in log if s == 403}
    assert {("POST", "/sql"), ("POST", "/api/encode"), ("POST", "/diff"), ("GET", "/playground")} <= refused, log
    assert ("GET", "/diff") in refused, log
    for method, path, status in log:
        if path in WORK:
            # what answered 200 is the SQL form, drawn from a GET (it runs nothing); OPTIONS is a
            # CORS preflight, never granted
            assert status in (403, 405) or (method, path, status) == ("GET", "/sql", 200), (method, path, status)
    assert all(not r.startswith(("cors 200", "basic 200")) for r in results.values()), results
    # a top-level form POST from the other site: the browser shows the refusal
    page.locator("#top").evaluate("f => f.submit()")
    expect(page.locator(".error")).to_contain_text("refused")
    expect(page.locator("h1")).to_contain_text("Refused")
    page.screenshot(path=str(tmp_path / f"refused-{site}.png"))
    print(f"screenshot: {tmp_path / f'refused-{site}.png'}")
    assert (target.sql, target.encoders) == (0, 0)


def test_the_servers_own_pages_still_work(browser_page: Page, target: Target, served: Served) -> None:
    """Same origin: the SQL page's form and the playground run, and the probe sees them run."""
    page = browser_page
    page.goto(f"{target.url}/sql?q=" + PROBE.replace(" ", "%20"))
    expect(page.locator("#sql-not-run")).to_be_visible()  # a link only fills the form in
    assert target.sql == 0
    page.get_by_role("button", name="Run").click()
    expect(page.locator("#sql-result tbody tr")).to_have_count(1)
    assert target.sql == 1
    page.goto(f"{target.url}/playground?v={served.refs['bpe']}")
    page.locator("#pg-text").fill("In the beginning")
    expect(page.locator(".pg-col .pg-tokens .chip").first).to_be_visible()
    assert target.encoders >= 1
    ran = page.evaluate(
        """async (q) => (await (await fetch("/sql?format=json", {method: "POST",
             headers: {"content-type": "application/json"}, body: JSON.stringify({q})})).json()).rows""",
        PROBE,
    )
    assert ran == [[len(served.refs)]] and target.sql == 2


def test_a_server_with_a_token_in_the_browser(browser_page: Page, ro_registry: Registry, served: Served) -> None:
    """--token: a page without it is refused (and shows nothing of the registry); one visit with
    ?token= sets the cookie, leaves the address clean, and the pages and the SQL form work."""
    from tokreg.serve.access import Rules

    token = "browser-token-0123456789abcdef"
    page = browser_page
    with running(create_app(ro_registry, rules=Rules.of("127.0.0.1", token=token))) as url:
        res: Any = page.goto(url + "/sql")
        assert res.status == 401
        expect(page.locator("h1")).to_contain_text("Token needed")
        assert "registry.db" not in page.content()
        page.goto(f"{url}/sql?token={token}")
        assert page.url == url + "/sql"  # the token left the address bar
        page.locator("textarea[name=q]").fill(PROBE)
        page.get_by_role("button", name="Run").click()
        expect(page.locator("#sql-result tbody tr")).to_have_count(1)
        expect(page.locator("#sql-result tbody td").first).to_have_text(str(len(served.refs)))
        port = urlsplit(url).port
        cookie = next(c for c in page.context.cookies() if c["name"] == f"tokreg_token_{port}")
        assert cookie["httpOnly"] and cookie["sameSite"] == "Lax"


def test_a_rebound_dns_name_gets_nothing(browser: Browser, ro_registry: Registry, tmp_path: Path) -> None:
    """DNS rebinding, in the browser: Chromium resolves evil.example to 127.0.0.1 (as a rebound
    name would), so the page at http://evil.example:PORT/ is the attacker's origin talking to this
    server. Its Host names no name of the server: refused, whatever --host is (here 0.0.0.0)."""
    from tokreg.serve.access import Rules

    with running(create_app(ro_registry, rules=Rules.of("0.0.0.0"))) as url:
        port = url.rsplit(":", 1)[1]
        rebound = browser.browser_type.launch(
            executable_path=browser_path(), args=["--host-resolver-rules=MAP evil.example 127.0.0.1"]
        )
        try:
            page = rebound.new_page(viewport={"width": 1100, "height": 400})
            res: Any = page.goto(f"http://evil.example:{port}/")
            assert res.status == 400
            expect(page.locator(".error")).to_contain_text(f"Host evil.example:{port} is not a name of this server")
            assert "registry.db" not in page.content()
            page.screenshot(path=str(tmp_path / "host-refused.png"))
            print(f"screenshot: {tmp_path / 'host-refused.png'}")
            assert page.goto(f"{url}/").status == 200  # type: ignore[union-attr]  # its own name: served
        finally:
            rebound.close()
