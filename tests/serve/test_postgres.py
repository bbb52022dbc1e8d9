"""`tokreg serve` on a PostgreSQL registry: read-only transactions (a write is refused by the
server itself), every page works, the SQL time limit holds, and the URL's password never shows."""

from __future__ import annotations

from pathlib import Path

import pytest

from tokreg import BpeOptions, Registry

from ..pg_server import unavailable
from .conftest import NEEDS

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
    with TestClient(create_app(ro), raise_server_exceptions=False) as c:
        pages = [
            "/",
            f"/v/{ref}",
            f"/v/{ref}/tokens?q=th",
            f"/v/{ref}/tokens/300",
            f"/v/{ref}/pin",
            f"/playground?v={ref}",
            f"/diff?a={ref}&b={ref}",
            "/sql?q=SELECT%20count(*)%20FROM%20tokens",
        ]
        for url in pages:
            for fmt in ("", "&format=json" if "?" in url else "?format=json"):
                res = c.get(url + fmt)
                assert res.status_code == 200, (url, res.text[:300])
                assert SECRET not in res.text, url
        assert "***" in c.get(f"/v/{ref}/pin?format=json").json()["lockfile"]
        assert c.post("/api/encode", json={"text": "In the beginning", "versions": [ref]}).status_code == 200
        res = c.get("/sql", params={"q": "DELETE FROM tokens", "format": "json"})
        assert res.status_code == 403 and "read-only" in res.json()["error"]
        monkeypatch.setattr(limits, "SQL_SECONDS", 0.5)
        res = c.get("/sql", params={"q": "SELECT pg_sleep(5)", "format": "json"})
        assert res.status_code == 400 and "limit of 0.5 s" in res.json()["error"], res.text
        assert c.get("/sql", params={"q": "SELECT count(*) FROM tokens", "format": "json"}).json()["rows"] == [[400]]
    with pytest.raises(Exception, match="read-only transaction"):  # the server refuses, whatever the code asks
        ro.tag(ref, "prod")
    ro.close()
    with Registry(pg_url) as reg:
        assert reg.aliases("pgweb") == {}
