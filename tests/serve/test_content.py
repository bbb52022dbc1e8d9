"""What programs fetch from `tokreg serve`: `/content/HASH` (the canonical content, immutable:
strong ETag = the hash, a year's cache lifetime, 304 on If-None-Match) and `/index.json`
(name -> versions -> hashes, and aliases), under every rule of access.py."""

from __future__ import annotations

import pytest

from tokreg import Registry
from tokreg.content import content_hash

from .conftest import NEEDS, Served

pytest.importorskip("starlette", reason=NEEDS)

from starlette.testclient import TestClient  # noqa: E402

from tokreg.serve import create_app  # noqa: E402
from tokreg.serve.access import Rules  # noqa: E402

BASE = "http://127.0.0.1:8765"
TOKEN = "team-token-0123456789abcdef"


def test_content_by_hash_is_immutable_and_checked(client: TestClient, ro_registry: Registry, served: Served) -> None:
    v = ro_registry.resolve(served.refs["bpe"])
    res = client.get(f"/content/{v.content_hash}")
    assert res.status_code == 200 and res.headers["content-type"] == "application/octet-stream"
    assert content_hash(res.content) == v.content_hash
    assert res.headers["etag"] == f'"{v.content_hash}"'
    assert res.headers["cache-control"] == "public, max-age=31536000, immutable"
    again = client.get(f"/content/{v.content_hash}", headers={"if-none-match": f'"{v.content_hash}"'})
    assert again.status_code == 304 and again.content == b"" and again.headers["etag"] == f'"{v.content_hash}"'
    missing = client.get("/content/xxh3-128:" + "0" * 32, headers={"accept": "application/json"})
    assert missing.status_code == 404 and "no version with content" in missing.json()["error"]
    bad = client.get("/content/../../etc/passwd", headers={"accept": "application/json"})
    assert bad.status_code in (400, 404)
    bad = client.get("/content/sha256:abc", headers={"accept": "application/json"})
    assert bad.status_code == 400 and "not a content hash" in bad.json()["error"]
    assert client.post(f"/content/{v.content_hash}").status_code == 405  # read-only


def test_index_lists_names_versions_hashes_aliases(client: TestClient, ro_registry: Registry) -> None:
    doc = client.get("/index.json").json()
    assert doc["format"] == "tokreg-index" and doc["format_version"] == 1
    want = {v.name: {} for v in ro_registry.versions()}
    for v in ro_registry.versions():
        want[v.name][str(v.number)] = {"hash": v.content_hash, "sha256": v.sha256}
    assert {n: e["versions"] for n, e in doc["names"].items()} == want
    assert {n: e["aliases"] for n, e in doc["names"].items()} == {n: ro_registry.aliases(n) for n in want}


def test_the_access_rules_apply(ro_registry: Registry, served: Served) -> None:
    h = ro_registry.resolve(served.refs["bpe"]).content_hash
    app = create_app(ro_registry, rules=Rules.of("127.0.0.1", token=TOKEN))
    with TestClient(app, base_url=BASE) as c:
        for url in ("/index.json", f"/content/{h}"):
            assert c.get(url).status_code == 401
            assert c.get(url, headers={"host": "evil.example"}).status_code == 400  # Host checked first
            ok = c.get(url, headers={"authorization": f"Bearer {TOKEN}"})
            assert ok.status_code == 200
        assert ok.headers["cache-control"].startswith("private, ")  # behind a token: no shared caches
