"""`tokreg serve` on a PostgreSQL registry: read-only transactions (a write is refused by the
server itself), every page works, the SQL time limit holds, the URL's password never shows, and
a role that can do more than read is said once: a banner on the SQL page and `warning` in its JSON."""

from __future__ import annotations

from pathlib import Path

import pytest

from tokreg import BpeOptions, Registry

from ..pg_server import unavailable
from .conftest import NEEDS, serve_process

pytest.importorskip("starlette", reason=NEEDS)
why = unavailable()
pytestmark = pytest.mark.skipif(why is not None, reason=why or "")

from starlette.testclient import TestClient  # noqa: E402

from tokreg.serve import create_app, limits  # noqa: E402

SECRET = "s3cret-pw"


@pytest.fixture
def pg_url(pg_db: str) -> str:
    # The test server trusts local connections, so the password is never checked: it is here
    # to be hidden.
    return pg_db.replace("tokreg@", f"tokreg:{SECRET}@")


def test_serving_a_postgresql_registry(pg_url: str, small_corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with Registry(pg_url, create=True) as reg:
        ref = reg.train("pgweb", [small_corpus], BpeOptions(vocab_size=400)).ref
    ro = Registry.read_only(pg_url)
    with TestClient(create_app(ro), base_url="http://127.0.0.1:8765", raise_server_exceptions=False) as c:
        pages = [
            "/",
            f"/v/{ref}",
            f"/v/{ref}/tokens?q=th",
            f"/v/{ref}/tokens/300",
            f"/v/{ref}/pin",
            f"/playground?v={ref}",
            f"/diff?a={ref}&b={ref}",
            "/sql",  # the form (a query runs from a POST, below)
        ]
        for url in pages:
            for fmt in ("", "&format=json" if "?" in url else "?format=json"):
                res = c.get(url + fmt)
                assert res.status_code == 200, (url, res.text[:300])
                assert SECRET not in res.text, url
        assert "***" in c.get(f"/v/{ref}/pin?format=json").json()["lockfile"]
        assert c.post("/api/encode", json={"text": "In the beginning", "versions": [ref]}).status_code == 200
        res = c.post("/sql?format=json", json={"q": "DELETE FROM tokens"})
        assert res.status_code == 403 and "read-only" in res.json()["error"]
        monkeypatch.setattr(limits, "SQL_SECONDS", 0.5)
        # a slow statement that reads only tokreg's tables (a recursive CTE, no function call)
        slow = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n"
        res = c.post("/sql?format=json", json={"q": slow})
        assert res.status_code == 400 and "limit of 0.5 s" in res.json()["error"], res.text
        data = c.post("/sql?format=json", json={"q": "SELECT count(*) FROM tokens"}).json()
        assert data["rows"] == [[400]]
        # the test server's role is a superuser: said on the page and in its JSON
        assert "superuser" in data["warning"] and "tokreg db grant-read" in data["warning"]
        html = c.get("/sql").text
        assert 'id="sql-warning"' in html and "superuser" in html
        assert 'id="sql-warning"' not in c.get("/").text
    with pytest.raises(Exception, match="read-only transaction"):  # the server refuses, whatever the code asks
        ro.tag(ref, "prod")
    ro.close()
    with Registry(pg_url) as reg:
        assert reg.aliases("pgweb") == {}


def test_the_role_warning_is_said_once_at_startup(pg_url: str, small_corpus: Path) -> None:
    import json
    import urllib.request

    with Registry(pg_url, create=True) as reg:
        reg.train("pgweb", [small_corpus], BpeOptions(vocab_size=300))
    with serve_process(pg_url) as run:
        assert run.lines[0].startswith("serving postgresql") and SECRET not in run.lines[0], run.lines
        with urllib.request.urlopen(run.url + "sql?format=json", timeout=20) as res:  # up and serving
            assert "superuser" in json.load(res)["warning"]
    err = run.err
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "superuser" in warnings[0] and "tokreg db grant-read" in warnings[0], err
    assert SECRET not in err and "Traceback" not in err
