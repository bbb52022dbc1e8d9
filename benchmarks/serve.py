"""`tokreg serve`: time to first byte of the registry page with 200 versions, the playground's round
trip for 10 KB of text with o200k_base (over HTTP, and in Chromium from typing to tokens drawn,
when a Chromium is installed), and the server process's memory. The server is the real command
(`python -m tokreg serve`), in its own process, on loopback."""

from __future__ import annotations

import http.client
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from typing import Any

from benchmarks.common import DATA, ROOT, table
from benchmarks.vocabs import db_path, registry
from tokreg import BpeOptions
from tokreg.training import train_run

VERSIONS = 200
TEXT_BYTES = 10 * 1024


def _fill(total: int) -> None:
    """Adds small trained versions until the registry holds `total` (names of 10 versions each,
    every third name with a `prod` alias)."""
    reg = registry()
    have = len(reg.versions())
    corpus = DATA / "kjv.txt"
    head = os.path.join(os.path.dirname(db_path()), f"tokreg-bench-serve-{os.getuid()}.txt")
    with open(corpus, "rb") as src, open(head, "wb") as dst:
        dst.write(src.read(200_000))
    opts = BpeOptions(vocab_size=1000)
    data = train_run.train([head], opts)[0]
    for k in range(total - have):
        name = f"model-{k // 10:02d}"
        v = reg.add(name, data, message=f"benchmark version {k}")
        if k % 30 == 9:
            reg.tag(v.ref, "prod")


def _rss_mb(pid: int) -> tuple[float, float]:
    vals = {}
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith(("VmRSS:", "VmHWM:")):
                vals[line.split(":")[0]] = int(line.split()[1]) / 1024
    return vals["VmRSS"], vals["VmHWM"]


def _get(conn: http.client.HTTPConnection, path: str) -> tuple[float, float, int]:
    """(seconds to the first byte of the answer, seconds to its last, its size)."""
    t0 = time.perf_counter()
    conn.request("GET", path)
    res = conn.getresponse()  # returns once the status line and headers are in
    t1 = time.perf_counter()
    body = res.read()
    t2 = time.perf_counter()
    assert res.status == 200, (path, res.status, body[:200])
    return t1 - t0, t2 - t0, len(body)


def _post(conn: http.client.HTTPConnection, path: str, doc: dict[str, Any]) -> tuple[float, int, Any]:
    body = json.dumps(doc).encode()
    t0 = time.perf_counter()
    conn.request("POST", path, body=body, headers={"content-type": "application/json"})
    res = conn.getresponse()
    raw = res.read()
    out = json.loads(raw)
    t1 = time.perf_counter()
    assert res.status == 200, (path, res.status, raw[:200])
    return t1 - t0, len(raw), out


def _text() -> str:
    raw = (DATA / "kjv.txt").read_bytes()[200_000 : 200_000 + TEXT_BYTES]
    return raw[: raw.rindex(b"\n") + 1].decode("utf-8")


#: Runs in the page: puts `text` in the box as a paste would, and resolves with the milliseconds
#: until the tokens are drawn and the next frame is painted.
_TYPE_AND_WAIT = """async (text) => {
  const box = document.getElementById("pg-text");
  const before = document.body.dataset.encoded;
  const t0 = performance.now();
  box.value = text;
  box.dispatchEvent(new Event("input"));
  await new Promise((done) => {
    const seen = new MutationObserver(() => {
      if (document.body.dataset.encoded !== before) { seen.disconnect(); done(); }
    });
    seen.observe(document.body, { attributes: true });
  });
  await new Promise((r) => requestAnimationFrame(() => r()));
  return performance.now() - t0;
}"""


def _browser(url: str, text: str) -> list[float]:
    """Seconds from a 10 KB paste into the playground's box to its tokens drawn, in Chromium
    (including the 150 ms the page waits after the last keystroke before it asks the server)."""
    path = next((shutil.which(c) for c in ("chromium", "chromium-browser") if shutil.which(c)), None)
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return []
    if path is None:
        return []
    out = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=path)
        page = browser.new_page(viewport={"width": 1366, "height": 768})
        page.goto(url + "playground?v=o200k_base@1")
        page.wait_for_selector("body[data-encoded]")
        for k in range(6):
            out.append(page.evaluate(_TYPE_AND_WAIT, text + str(k)) / 1000)
        browser.close()
    return out[1:]


def run() -> None:
    _fill(VERSIONS)
    n_versions = len(registry().versions())
    proc = subprocess.Popen(
        [sys.executable, "-m", "tokreg", "serve", "--db", db_path(), "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        url = line.split(" at ")[1].split()[0]
        host, port = url.split("//")[1].rstrip("/").split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=60)
        idle_rss, _ = _rss_mb(proc.pid)
        rows = []
        for label, path in (
            (f"registry page, {n_versions} versions", "/"),
            (f"registry JSON, {n_versions} versions", "/?format=json"),
            ("registry page, sorted by vocab size, filtered", "/?q=model-1&sort=vocab&order=desc"),
            ("version page, o200k_base@1", "/v/o200k_base@1"),
            ("token table, o200k_base@1, page 100", "/v/o200k_base@1/tokens?page=100"),
        ):
            first = _get(conn, path)
            runs = [_get(conn, path) for _ in range(20)]
            rows.append(
                [
                    label,
                    f"{first[0] * 1000:.1f}",
                    f"{statistics.median(r[0] for r in runs) * 1000:.1f}",
                    f"{min(r[0] for r in runs) * 1000:.1f}",
                    f"{statistics.median(r[1] for r in runs) * 1000:.1f}",
                    f"{runs[0][2] / 1024:.0f}",
                ]
            )
        table(
            "tokreg serve: time to first byte (ms), 20 requests after a first one, one connection",
            ["page", "first", "median", "best", "median, whole answer", "KB"],
            rows,
        )
        text = _text()
        rows = []
        for label, refs in (
            ("o200k_base", ["o200k_base@1"]),
            ("o200k_base + cl100k_base + 2 small BPE", ["o200k_base@1", "cl100k_base@1", "model-00@1", "model-01@1"]),
        ):
            doc = {"text": text, "versions": refs}
            cold, _, _ = _post(conn, "/api/encode", doc)
            runs = [_post(conn, "/api/encode", doc) for _ in range(10)]
            tokens = sum(v["count"] for v in runs[0][2]["versions"])
            rows.append(
                [
                    label,
                    f"{len(text.encode()):,}",
                    f"{tokens:,}",
                    f"{cold * 1000:.0f}",
                    f"{statistics.median(r[0] for r in runs) * 1000:.1f}",
                    f"{min(r[0] for r in runs) * 1000:.1f}",
                    f"{runs[0][1] / 1024:.0f}",
                ]
            )
        table(
            "tokreg serve: playground round trip (POST /api/encode, ms; first = the version loaded)",
            ["versions", "text bytes", "tokens", "first", "median", "best", "answer KB"],
            rows,
        )
        drawn = _browser(url, text)
        rss, hwm = _rss_mb(proc.pid)
        rows = [
            ["server RSS after start, MB", f"{idle_rss:.0f}"],
            ["server RSS after the runs above, MB", f"{rss:.0f}"],
        ]
        rows.append(["server peak RSS (VmHWM), MB", f"{hwm:.0f}"])
        if drawn:
            rows.append(
                [
                    "Chromium: 10 KB pasted into the playground (o200k_base) to tokens drawn, ms (median of 5)",
                    f"{statistics.median(drawn) * 1000:.0f}",
                ]
            )
        table("tokreg serve: memory, and the round trip seen in a browser", ["what", "value"], rows)
    finally:
        proc.terminate()
        proc.wait(20)
