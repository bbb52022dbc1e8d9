"""`tokreg serve` under load: 16 maximal playground requests at once (the largest text the limits
allow, four versions) while a page is fetched in a loop. Pages keep answering while the heavy
requests run (a server whose pages waited behind the heavy work would answer one page, after the
last heavy request), and every heavy request gets either the library's own ids or a clear
refusal (503, one line, Retry-After): never a stall, never a wrong answer. No bound on seconds:
this machine is shared, and latency is measured by the benchmarks, not asserted here.

The figures (answers, refusals, page latencies) are printed; run with -s to see them."""

from __future__ import annotations

import http.client
import json
import threading
import time
from typing import Any
from urllib.parse import urlsplit

import pytest

import tokreg
from tokreg import Registry

from .conftest import NEEDS, Served, running

pytest.importorskip("starlette", reason=NEEDS)

from tokreg.serve import create_app, limits  # noqa: E402

HEAVY = 16


def maximal_text(served: Served) -> str:
    """The corpus (English and Chinese, markup), repeated up to the text limit, cut at a character."""
    raw = served.corpus.read_bytes()
    raw = (raw * (limits.MAX_TEXT_BYTES // len(raw) + 1))[: limits.MAX_TEXT_BYTES]
    return raw.decode("utf-8", errors="ignore")


def request(
    url: str, method: str, path: str, body: bytes = b"", timeout: float = 300
) -> tuple[int, dict[str, str], bytes]:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=timeout)
    try:
        headers = {"content-type": "application/json"} if body else {}
        conn.request(method, path, body=body or None, headers=headers)
        res = conn.getresponse()
        return res.status, {k.lower(): v for k, v in res.getheaders()}, res.read()
    finally:
        conn.close()


@pytest.mark.slow
def test_pages_answer_while_heavy_requests_queue(ro_registry: Registry, served: Served) -> None:
    refs = [served.refs[w] for w in ("bpe2", "wordpiece", "unigram", "cl100k") if w in served.refs]
    if len(refs) < 4:
        refs.append(served.refs["bpe"])
    text = maximal_text(served)
    assert len(text.encode("utf-8")) <= limits.MAX_TEXT_BYTES and len(refs) == limits.MAX_VERSIONS
    expected = [tokreg.load(r, db=served.db).encode_ordinary(text) for r in refs]
    body = json.dumps({"text": text, "versions": refs}).encode("utf-8")
    app = create_app(ro_registry)
    with running(app) as url:
        assert request(url, "POST", "/api/encode", body)[0] == 200  # versions loaded once, as after any first use
        answers: list[Any] = [None] * HEAVY
        heavy_seconds: list[float] = [0.0] * HEAVY
        gate = threading.Barrier(HEAVY + 1)

        def heavy(k: int) -> None:
            gate.wait()
            t = time.perf_counter()
            answers[k] = request(url, "POST", "/api/encode", body)
            heavy_seconds[k] = time.perf_counter() - t

        threads = [threading.Thread(target=heavy, args=(k,)) for k in range(HEAVY)]
        for t in threads:
            t.start()
        gate.wait()
        pages: list[float] = []
        while any(t.is_alive() for t in threads) and len(pages) < 2000:
            t0 = time.perf_counter()
            status, _, html = request(url, "GET", "/", timeout=30)
            pages.append(time.perf_counter() - t0)
            assert status == 200 and b"<table" in html
        for t in threads:
            t.join(300)
        assert not any(t.is_alive() for t in threads), "a heavy request never got an answer"
        work = app.state.work
        assert work.running == 0 and work.waiting == 0

    done = refused = 0
    for status, headers, raw in answers:
        data = json.loads(raw)
        if status == 200:
            assert [v["ids"] for v in data["versions"]] == expected
            done += 1
        else:
            assert status == 503 and set(data) == {"error", "status"} and "\n" not in data["error"], data
            assert "busy" in data["error"] and headers["retry-after"].isdigit()
            refused += 1
    pages.sort()
    print(
        f"\n{HEAVY} maximal playground requests ({len(text.encode()):,} bytes, {len(refs)} versions): "
        f"{done} answered, {refused} refused (503); slowest answer {max(heavy_seconds):.2f} s; "
        f"{len(pages)} pages meanwhile: median {pages[len(pages) // 2] * 1000:.0f} ms, "
        f"max {pages[-1] * 1000:.0f} ms"
    )
    assert done >= limits.HEAVY_WORKERS and done + refused == HEAVY
    assert len(pages) >= 5, "pages did not answer while the heavy requests ran (or these ended first)"


def test_maximal_texts_cost_little(ro_registry: Registry, served: Served) -> None:
    """The texts that were slowest (a run of 200 KB of spaces took 95 s of CPU for Unigram spans
    from the core's offsets; random CJK text 20 s for WordPiece): each maximal request, four
    versions, costs well under a second of CPU, with the library's ids and spans that tile."""
    import random

    from tokreg.serve.encoding import Encoders
    from tokreg.serve.pages.playground import run_json
    from tokreg.serve.work import Deadline

    refs = [served.refs[w] for w in ("bpe2", "wordpiece", "unigram", "cl100k") if w in served.refs]
    encoders = Encoders(ro_registry)
    rnd = random.Random(21)
    texts = {
        "spaces": " " * (limits.MAX_TEXT_BYTES - 1),
        "CJK": "".join(chr(rnd.randint(0x4E00, 0x9FFF)) for _ in range(limits.MAX_TEXT_BYTES // 3)),
        "whitespace": "".join(rnd.choice(" \t\n\u3000x") for _ in range(limits.MAX_TEXT_BYTES // 2)),
        "corpus": maximal_text(served),
    }
    run_json(encoders, refs, "warm up", False, Deadline(60))
    for name, text in texts.items():
        cpu = time.process_time()
        data = json.loads(bytes(run_json(encoders, refs, text, False, Deadline(60)).body))
        cpu = time.process_time() - cpu
        print(f"\n{name}: {len(text.encode()):,} bytes, {len(refs)} versions: {cpu:.2f} s of CPU")
        raw = text.encode("utf-8")
        for ref, v in zip(refs, data["versions"]):
            assert v["ids"] == tokreg.load(ref, db=served.db).encode_ordinary(text), (name, ref)
            if v["exact_spans"]:
                starts = [0, *v["ends"][:-1]]
                assert b"".join(raw[s:e] for s, e in zip(starts, v["ends"])) == raw, (name, ref)
        assert [v["exact_spans"] for v in data["versions"]][:3] == [True, False, True], name
        assert cpu < 5.0, f"{name}: {cpu:.1f} s of CPU for one maximal request"
