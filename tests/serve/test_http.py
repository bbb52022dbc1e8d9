"""`tokreg serve` over HTTP: every page answers with HTML and its JSON twin, the JSON holds what the
page shows, bad requests get one clear 4xx (never a traceback), text from the registry is escaped,
requests are capped, and nothing a request does changes the registry."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

import tokreg
from tokreg import NotFoundError, Registry, TokregError
from tokreg.store import migrate

from .conftest import NEEDS, Served, file_digest

pytest.importorskip("starlette", reason=NEEDS)

from starlette.testclient import TestClient  # noqa: E402

from tokreg.serve import create_app, limits  # noqa: E402
from tokreg.serve.encoding import disagreements  # noqa: E402
from tokreg.serve.http import to_json, to_json_in_parts  # noqa: E402


def get_json(client: TestClient, url: str, status: int = 200) -> Any:
    res = client.get(url, headers={"accept": "application/json"} if "format=" not in url else {})
    assert res.status_code == status, res.text[:500]
    assert res.headers["content-type"].startswith("application/json")
    return res.json()


def page(client: TestClient, url: str, status: int = 200) -> str:
    res = client.get(url)
    assert res.status_code == status, res.text[:500]
    assert res.headers["content-type"].startswith("text/html")
    assert "Traceback" not in res.text
    return res.text


def assert_clear_error(res: Any, status: int, *words: str) -> None:
    assert res.status_code == status, res.text[:300]
    body = res.json()
    assert set(body) == {"error", "status"} and body["status"] == status
    assert "\n" not in body["error"] and "Traceback" not in body["error"]
    for w in words:
        assert w in body["error"], body["error"]


# -- every page and its JSON twin -----------------------------------------------------------------


def test_registry_page_and_twin(client: TestClient, served: Served) -> None:
    data = get_json(client, "/?format=json")
    refs = [v["ref"] for v in data["versions"]]
    assert sorted(refs) == sorted(served.refs.values())
    prod = next(v for v in data["versions"] if v["ref"] == served.refs["bpe2"])
    assert prod["aliases"] == ["prod"] and prod["title"] == "byte-level BPE" and prod["hash"].startswith("xxh3-128:")
    html = page(client, "/")
    for r in refs:
        name, n = r.split("@")
        assert f"<b>{name}</b>@{n}" in html
    # filter and sort
    only = get_json(client, "/?format=json&q=prod")["versions"]
    assert [v["ref"] for v in only] == [served.refs["bpe2"]]
    by_size = get_json(client, "/?format=json&sort=vocab&order=desc")["versions"]
    assert [v["vocab_size"] for v in by_size] == sorted((v["vocab_size"] for v in by_size), reverse=True)
    uni = get_json(client, "/?format=json&algorithm=Unigram")["versions"]
    assert [v["ref"] for v in uni] == [served.refs["unigram"]]


@pytest.mark.parametrize("what", ["bpe", "bpe2", "wordpiece", "unigram", "cl100k"])
def test_version_page_and_twin(client: TestClient, served: Served, what: str) -> None:
    if what not in served.refs:
        pytest.skip("cl100k_base.tiktoken is not in the shared data")
    ref = served.refs[what]
    data = get_json(client, f"/v/{ref}?format=json")
    with Registry(served.db) as reg:
        shown = reg.show(ref, merges=30).to_json()
    for key in ("ref", "hash", "sha256", "vocab_size", "config", "tokens_by_kind", "merges", "lossless", "title"):
        assert data[key] == shown[key], key
    assert len(data["samples"]) == 6 and all(s["tokens"] for s in data["samples"])
    html = page(client, f"/v/{ref}")
    assert data["hash"] in html and data["title"] in html
    if what == "unigram":
        assert data["rounds"] and data["curve"]["series"][0]["points"]
        assert '<svg class="chart"' in html and "<polyline" in html
    if what in ("bpe", "bpe2"):  # evaluated in the fixture: the stored results are on the page
        with Registry(served.db) as reg:
            stored = reg.evaluations(ref)
        assert [r["metrics"] for r in data["evaluations"]["rows"]] == [r.metrics for r in stored] != []
        assert data["evaluations"]["compression"][0]["value"] == stored[0].metrics["bytes_per_token"]
        assert "<h2>Evaluations" in html and "bytes/token" in html
    else:
        assert data["evaluations"]["rows"] == [] and "<h2>Evaluations" not in html
    if what in ("bpe", "bpe2"):
        assert data["training_run"]["corpus_files"][0]["path"].endswith("corpus.txt") and data["first_merges"]
    if what == "cl100k":
        assert data["source"] == "import:tiktoken" and "Not trained by tokreg" in html


def test_a_version_by_alias_and_by_hash(client: TestClient, served: Served) -> None:
    ref = served.refs["bpe2"]
    assert get_json(client, "/v/web@prod?format=json")["ref"] == ref
    h = get_json(client, f"/v/{ref}?format=json")["hash"]
    assert get_json(client, f"/v/{h[:20]}?format=json")["ref"] == ref


def test_a_derived_version_page_shows_its_lineage(served: Served, tmp_path: Path) -> None:
    # The version page says where a derived version came from, as `tokreg show` does; a trained
    # version's page has no lineage line.
    with Registry(tmp_path / "r.db") as reg:
        base = reg.train("b", [served.corpus], tokreg.BpeOptions(vocab_size=400)).ref
        derived = reg.add_tokens(base, "b", ["<|tool|>"], special=True).ref
    reg = Registry.read_only(tmp_path / "r.db")
    try:
        with TestClient(create_app(reg), base_url="http://127.0.0.1:8765", raise_server_exceptions=False) as c:
            html = page(c, f"/v/{derived}")
            lines = get_json(c, f"/v/{derived}?format=json")["lineage_lines"]
            assert "Lineage:" not in page(c, f"/v/{base}")
    finally:
        reg.close()
    assert [x["ref"] for x in lines] == [derived, base]
    assert lines[0]["line"].startswith(f"added tokens from {base}") and "ids kept" in lines[0]["line"]
    assert "Lineage:" in html and f'<a href="/v/{base}">{base}</a>' in html and "ids kept" in html


def test_token_table_search_sort_and_pages(client: TestClient, served: Served) -> None:
    ref = served.refs["bpe2"]
    first = get_json(client, f"/v/{ref}/tokens?format=json&per=50")
    assert first["total"] == 900 and first["pages"] == 18 and [t["id"] for t in first["tokens"]] == list(range(50))
    assert first["tokens"][32]["segments"] == [["ws", "·"]]  # the space byte, made visible
    lone = get_json(client, f"/v/{ref}/tokens?format=json&q=200")["tokens"][0]  # the byte \xc8, alone
    assert lone["id"] == 200 and lone["partial"] and lone["segments"] == [["b", "\\xc8"]]
    last = get_json(client, f"/v/{ref}/tokens?format=json&per=50&page=18")
    assert [t["id"] for t in last["tokens"]] == list(range(850, 900))
    found = get_json(client, f"/v/{ref}/tokens?format=json&q=the")["tokens"]
    assert found and all("the" in (t["text"] or "") for t in found)
    assert [t["id"] for t in get_json(client, f"/v/{ref}/tokens?format=json&q=300")["tokens"]][:1] == [300]
    by_count = get_json(client, f"/v/{ref}/tokens?format=json&sort=count&kind=merged")["tokens"]
    counts = [t["count"] for t in by_count]
    assert counts == sorted(counts, reverse=True) and {t["kind"] for t in by_count} == {"merged"}
    assert '<span class="ws">·</span><span class="t">the</span>' in page(client, f"/v/{ref}/tokens?q=the")


def test_token_page_ancestry_and_versions_with_the_same_bytes(client: TestClient, served: Served) -> None:
    ref = served.refs["bpe2"]
    with Registry(served.db) as reg:
        _, rows = reg.sql(
            f"SELECT result_id, rank, count FROM merges_view WHERE tokenizer = '{ref}' AND result_text = ' the'"
        )
    (tid, rank, count) = rows[0]
    data = get_json(client, f"/v/{ref}/tokens/{tid}?format=json")
    root = data["ancestry"]
    assert root["id"] == tid and root["merge"]["rank"] == rank and root["merge"]["count"] == count

    def leaves(n: dict[str, Any]) -> list[str]:
        return [n["bytes"]] if not n["children"] else [b for c in n["children"] for b in leaves(c)]

    # down to single bytes, which spell the token in order
    assert "".join(b[2:] for b in leaves(root)) == b" the".hex() and all(len(b) == 4 for b in leaves(root))
    holders = {h["ref"] for h in data["also_in"]}
    assert {served.refs["bpe"], ref} <= holders
    html = page(client, f"/v/{ref}/tokens/{tid}")
    assert f"merge rank {rank}" in html and 'class="tree"' in html
    uni = served.refs["unigram"]
    assert get_json(client, f"/v/{uni}/tokens/300?format=json")["ancestry"]["children"] == []


def test_playground_encodes_with_the_librarys_ids(client: TestClient, served: Served) -> None:
    text = "Hello world, 東京 café  x\n\tdef f(x): return 1234567 <b>"
    refs = [served.refs[w] for w in ("bpe", "wordpiece", "unigram", "cl100k") if w in served.refs]
    res = client.post("/api/encode", json={"text": text, "versions": refs})
    assert res.status_code == 200, res.text
    data = res.json()
    raw = text.encode("utf-8")
    assert data["text"] == {"bytes": len(raw), "characters": len(text)}
    for ref, v in zip(refs, data["versions"]):
        tok = tokreg.load(ref, db=served.db)
        assert v["ids"] == tok.encode(text) and v["count"] == len(v["ids"])
        assert set(v["pieces"]) == {str(i) for i in v["ids"]}  # each distinct token drawn once
        assert all(bytes.fromhex(v["pieces"][str(i)]["bytes"]) == tok.token_bytes(i) for i in v["ids"])
        if v["exact_spans"]:  # spans tile the input's bytes exactly
            starts = [0, *v["ends"][:-1]]
            assert b"".join(raw[s:e] for s, e in zip(starts, v["ends"])) == raw and len(v["ends"]) == len(v["ids"])
        else:
            assert v["ends"] is None
    exact = [v["exact_spans"] for v in data["versions"]]
    assert exact[:3] == [True, False, True]  # WordPiece normalizes: no spans
    assert data["disagreements"]
    marked = data["versions"][0]["disagree"]
    assert marked and all(0 <= a < b <= data["versions"][0]["count"] for a, b in marked)
    # the same through GET, as the page's JSON twin
    q = "&".join(f"v={r}" for r in refs)
    assert get_json(client, f"/playground?format=json&{q}&text=Hello%20world")["versions"][0]["ids"] == (
        tokreg.load(refs[0], db=served.db).encode("Hello world")
    )
    assert 'id="pg-text"' in page(client, f"/playground?{q}")
    # a ref the version list does not spell that way (an alias) stays picked
    assert '<option value="web@prod" selected>' in page(client, "/playground?v=web@prod")


def test_playground_special_tokens(client: TestClient, served: Served) -> None:
    ref = served.refs["bpe"]
    tok = tokreg.load(ref, db=served.db)
    body = {"text": "a<|endoftext|>b", "versions": [ref]}
    as_text = client.post("/api/encode", json=body).json()["versions"][0]["ids"]
    assert as_text == tok.encode_ordinary("a<|endoftext|>b") and tok.special_tokens["<|endoftext|>"] not in as_text
    special = client.post("/api/encode", json={**body, "allow_special": True}).json()["versions"][0]["ids"]
    assert special == tok.encode("a<|endoftext|>b", allowed_special="all")


def test_json_in_parts_is_the_same_json() -> None:
    data = {"a": list(range(25)), "b": {"x": [1, 2], "y": None}, "c": [{"s": 'é"<'}] * 7, "e": [], "n": 1.5}
    for d in (data, [], {}, list(range(10)), "x"):
        assert to_json_in_parts(d, part=3) == to_json(d)


def test_disagreements_are_the_stretches_cut_differently() -> None:
    def view(*cuts: int) -> dict[str, Any]:
        return {"exact_spans": True, "ends": list(cuts), "disagree": []}

    # both cut at 2, 5 and 10; between 2 and 5 only b cuts (at 4), between 5 and 10 only a (at 8)
    a, b = view(2, 5, 8, 10), view(2, 4, 5, 10)
    assert disagreements([a, b], 10) == [(2, 5), (5, 10)]
    assert a["disagree"] == [[1, 4]] and b["disagree"] == [[1, 4]]  # tokens 1 to 3 of each; not token 0
    # an empty token (a dummy prefix: end == start) is never marked, and splits the ranges
    c, d = view(0, 2, 4, 4, 6), view(1, 2, 3, 6)
    assert disagreements([c, d], 6) == [(0, 2), (2, 6)]
    assert c["disagree"] == [[1, 3], [4, 5]] and d["disagree"] == [[0, 4]]
    assert disagreements([view(3, 6), view(3, 6)], 6) == []


def test_diff_page_and_twin(client: TestClient, served: Served) -> None:
    a, b = served.refs["bpe"], served.refs["bpe2"]
    data = get_json(client, f"/diff?format=json&a={a}&b={b}")
    with Registry(served.db) as reg:
        expected = reg.diff(a, b, top=20).to_json()
    assert data["diff"]["tokens"] == expected["tokens"] and data["diff"]["merges"] == expected["merges"]
    assert data["diff"]["config"] == expected["config"]
    html = page(client, f"/diff?a={a}&b={b}")
    assert "Vocabulary" in html and "Merges" in html and "same first merges" in html
    text = "the theatre thereof thee then " * 3
    token = form_token(client)
    res = client.post(f"/diff?format=json&a={a}&b={b}", data={"a": a, "b": b, "text": text, "form_token": token})
    effect = res.json()["diff"]["text"]
    assert effect["files"][0]["bytes"] == len(text) and effect["words"]["distinct"] == 5
    res = client.post(
        "/diff",
        data={"a": served.refs["wordpiece"], "b": served.refs["unigram"], "text": "Hello there", "form_token": token},
    )
    assert res.status_code == 200 and "Effect on your text" in res.text
    # no pair picked: the two newest versions of the newest name
    assert get_json(client, "/diff?format=json")["picked"]["a"]


def form_token(client: TestClient) -> str:
    """The form token the server's own pages carry (in every form that POSTs)."""
    found = re.search(r'name="form_token" value="([^"]+)"', client.get("/sql").text)
    assert found, "the SQL page's form carries the form token"
    return found.group(1)


def run_sql(client: TestClient, q: str, **fields: str) -> Any:
    """A query run as the SQL page's form runs it: POSTed, with the page's form token."""
    return client.post("/sql", data={"q": q, "form_token": form_token(client), **fields})


def sql_json(client: TestClient, q: str) -> Any:
    """A query run as a script runs it: its JSON POSTed, no form token."""
    return client.post("/sql?format=json", json={"q": q})


def test_sql_page_table_csv_and_json(client: TestClient, served: Served) -> None:
    q = f"SELECT id, text, bytes, count FROM vocab WHERE tokenizer = '{served.refs['bpe']}' AND id IN (104, 105)"
    res = sql_json(client, q)
    data = res.json()
    assert res.status_code == 200 and data["columns"] == ["id", "text", "bytes", "count"]
    assert data["rows"][0][:3] == [104, "h", "0x68"] and not data["truncated"] and data["warning"] is None
    res = run_sql(client, q, format="csv")  # the page's CSV button
    assert res.headers["content-type"].startswith("text/csv")
    assert res.text.splitlines()[:2] == ["id,text,bytes,count", res.text.splitlines()[1]]
    assert res.text.splitlines()[1].startswith("104,h,0x68,")
    assert run_sql(client, q, format="json").json()["rows"] == data["rows"]  # the page's JSON button
    html = run_sql(client, q).text
    assert '<td class="num">104</td>' in html and "2 rows" in html


def test_sql_runs_only_from_a_post(client: TestClient) -> None:
    q = "SELECT 1 AS one"
    html = client.get("/sql", params={"q": q}).text  # a link fills in the form, and runs nothing
    assert ">SELECT 1 AS one</textarea>" in html and 'id="sql-not-run"' in html and 'id="sql-result"' not in html
    assert '<a href="/sql?format=json">' in html  # the page's twin link answers (a GET with q would not)
    for fmt in ("json", "csv"):
        assert_clear_error(
            client.get("/sql", params={"q": q, "format": fmt}, headers={"accept": "application/json"}),
            405,
            "never runs a query",
            "POST",
        )
    # a form POST without the page's form token (what a page elsewhere could send) runs nothing
    res = client.post("/sql?format=json", data={"q": q})
    assert_clear_error(res, 403, "form token")
    res = client.post("/sql?format=json", data={"q": q, "form_token": "guess"})
    assert_clear_error(res, 403, "form token")
    assert sql_json(client, q).json()["rows"] == [[1]]


def test_pin_page(client: TestClient, served: Served) -> None:
    ref = served.refs["bpe2"]
    data = get_json(client, "/v/web@prod/pin?format=json")
    assert data["ref"] == ref and f'hash = "{data["hash"]}"' in data["lockfile"] and "[[pin]]" in data["lockfile"]
    assert data["command"].startswith(f"tokreg pin {ref}")
    assert "lock_version = 1" in page(client, f"/v/{ref}/pin")


# -- bad requests: one clear 4xx, never a traceback -----------------------------------------------


@pytest.mark.parametrize(
    "url,status,word",
    [
        ("/v/nosuch@1", 404, "no tokenizer named 'nosuch'"),
        ("/v/web@99", 404, "no version 99"),
        ("/v/web@nosuch/tokens", 404, "no version or alias"),
        ("/v/web@1/tokens/999999", 404, "has no token 999999"),
        ("/v/web@1/tokens/abc", 404, "whole numbers"),
        ("/v/web@1/tokens?page=abc", 400, "page"),
        ("/v/web@1/tokens?page=99", 404, "page"),
        ("/v/web@1/tokens?sort=bogus", 400, "sort"),
        ("/v/web@1/tokens?per=100000", 400, "per"),
        ("/?sort=bogus", 400, "sort"),
        ("/diff?a=web@1&b=nosuch@2", 404, "nosuch"),
        ("/playground?v=nosuch@1&text=x", 404, "nosuch"),
        ("/playground", 400, "at least one version"),
        ("/nowhere", 404, "no page"),
    ],
)
def test_bad_requests_get_a_clear_4xx(client: TestClient, url: str, status: int, word: str) -> None:
    assert_clear_error(client.get(url + ("&" if "?" in url else "?") + "format=json"), status, word)
    if url.startswith("/playground"):
        return  # the page itself draws any ref it is given (its script shows the error)
    html = client.get(url)
    assert html.status_code == status and "Traceback" not in html.text and 'class="error"' in html.text


def test_huge_text_too_many_versions_and_bad_bodies(client: TestClient, served: Served) -> None:
    ref = served.refs["bpe"]
    huge = "x" * (limits.MAX_TEXT_BYTES + 1)
    assert_clear_error(client.post("/api/encode", json={"text": huge, "versions": [ref]}), 413, "limit")
    body = b'{"text": "' + b"x" * (limits.MAX_BODY_BYTES + 10) + b'", "versions": ["web@1"]}'
    res = client.post("/api/encode", content=body, headers={"content-type": "application/json"})
    assert_clear_error(res, 413, "limit")
    assert_clear_error(client.post("/api/encode", json={"text": "x", "versions": [ref] * 5}), 400, "at most 4")
    assert_clear_error(client.post("/api/encode", json={"text": "x"}), 400, "at least one version")
    res = client.post("/api/encode", content=b"{not json", headers={"content-type": "application/json"})
    assert_clear_error(res, 400, "not valid JSON")
    assert_clear_error(client.post("/api/encode", json=["x"]), 400, "object")
    assert_clear_error(client.get("/api/encode"), 405)
    res = client.post("/diff?format=json", data={"a": ref, "b": ref, "text": huge, "form_token": form_token(client)})
    assert_clear_error(res, 413, "limit")


@pytest.mark.parametrize(
    "q,status,word",
    [
        ("DELETE FROM tokens", 403, "read-only"),
        ("DROP TABLE versions", 403, "read-only"),
        ("UPDATE versions SET message = 'x'", 403, "read-only"),
        ("ATTACH DATABASE '/tmp/x.db' AS x", 403, "read-only"),
        ("PRAGMA journal_mode = DELETE", 403, "read-only"),
        ("SELECT * FROM nosuch", 400, "no such table"),
        ("SELEC 1", 400, "syntax error"),
        ("SELECT 1; SELECT 2", 400, "one statement"),
    ],
)
def test_sql_refusals_and_errors(client: TestClient, q: str, status: int, word: str) -> None:
    assert_clear_error(sql_json(client, q), status, word)
    res = run_sql(client, q)  # the page keeps the query and shows the error under it
    assert res.status_code == status and 'id="sql-error"' in res.text and "Traceback" not in res.text


def test_sql_rows_and_time_are_capped(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    many = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n LIMIT 25000) SELECT i FROM n"
    res = sql_json(client, many)
    data = res.json()
    assert data["truncated"] and len(data["rows"]) == limits.MAX_SQL_ROWS and data["rows"][-1] == [limits.MAX_SQL_ROWS]
    monkeypatch.setattr(limits, "SQL_SECONDS", 0.3)
    forever = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n"
    assert_clear_error(sql_json(client, forever), 400, "limit of 0.3 s")
    assert sql_json(client, "SELECT 2").json()["rows"] == [[2]]  # the connection still works
    long = "SELECT " + "1," * limits.MAX_SQL_CHARS + "1"
    assert_clear_error(sql_json(client, long), 400, "limit")


# -- safe by construction --------------------------------------------------------------------------


def test_text_from_the_registry_is_escaped(client: TestClient, served: Served) -> None:
    html = page(client, "/")
    assert "<script>alert" not in html and "&lt;script&gt;alert(&#39;message&#39;)&lt;/script&gt;" in html
    html = run_sql(client, "SELECT '<script>alert(1)</script>' AS x").text
    assert "<script>alert(1)" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    ref = served.refs["bpe2"]
    tokens = get_json(client, f"/v/{ref}/tokens?format=json&q=%3C&per=500")["tokens"]
    assert tokens, "the corpus puts '<' into tokens"
    html = page(client, f"/v/{ref}/tokens?q=%3C&per=500")
    assert not re.search(r"<(script|b)>", html.split("<main>")[1]) and "&lt;" in html
    res = client.get("/")
    csp = res.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert res.headers["x-content-type-options"] == "nosniff"
    assert res.headers["referrer-policy"] == "same-origin"  # no-referrer would make the forms' Origin null


def test_the_registry_is_opened_read_only(served: Served, client: TestClient, ro_registry: Registry) -> None:
    # everything above ran against this registry; the file is byte for byte what was written
    for url in ("/", f"/v/{served.refs['bpe']}", "/sql?q=SELECT%201", "/diff"):
        client.get(url)
    sql_json(client, "SELECT 1")
    assert file_digest(served.db) == served.digest
    with pytest.raises(Exception):  # noqa: B017 - SQLite refuses the write itself
        ro_registry.tag(served.refs["bpe"], "staging")
    with ro_registry.engine.connect() as conn, pytest.raises(Exception):  # noqa: B017
        conn.exec_driver_sql("CREATE TABLE evil (x)")
    assert file_digest(served.db) == served.digest


def test_read_only_never_creates_or_upgrades(tmp_path: Any) -> None:
    missing = tmp_path / "missing.db"
    with pytest.raises(NotFoundError, match="no registry at"):
        Registry.read_only(missing)
    assert not missing.exists()
    old = tmp_path / "old.db"
    from tokreg.store.engine import create, locate

    engine = create(locate(old))
    migrate.upgrade(engine, "0002")
    engine.dispose()
    with pytest.raises(TokregError, match="tokreg db upgrade"):
        Registry.read_only(old)
    engine = create(locate(old))
    assert migrate.current(engine) == "0002"
    engine.dispose()
    (tmp_path / "junk.db").write_bytes(b"not a database" * 100)
    with pytest.raises(TokregError, match="cannot read the registry|not a tokreg registry"):
        Registry.read_only(tmp_path / "junk.db")


def test_unknown_hosts_are_refused(ro_registry: Registry) -> None:
    app = create_app(ro_registry)  # bound to 127.0.0.1: the loopback names only
    with TestClient(app, base_url="http://127.0.0.1:8765") as c:
        assert c.get("/").status_code == 200
        for ok in ("localhost:8765", "[::1]:8765", "127.0.0.1"):
            assert c.get("/", headers={"host": ok}).status_code == 200, ok
        res = c.get("/?format=json", headers={"host": "evil.example:8765"})
        assert_clear_error(res, 400, "Host evil.example:8765", "--allowed-host")
