"""`tokreg serve` in a real browser: headless Chromium (the system's, e.g. Debian's `chromium`)
driven through Playwright opens every page on a registry with a trained BPE, WordPiece and
Unigram version and the imported cl100k_base, types text in the playground and checks the ids it
shows against `tokreg.load(...).encode(...)`, runs SQL and sees a write refused. Every page is
saved as a screenshot (1366x768, a laptop screen) in a folder printed at the end of the run.

One browser for the session, one page reused by every test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import tokreg

from .conftest import NEEDS, SCREENSHOTS, Served, file_digest

pytest.importorskip("starlette", reason=NEEDS)
pytest.importorskip("playwright", reason="the browser tests need Playwright: pip install playwright")

from playwright.sync_api import Browser, Page, expect  # noqa: E402


@pytest.fixture(scope="session")
def shots(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Path:
    """The screenshots' folder (conftest.py prints it in the run's summary)."""
    folder = tmp_path_factory.mktemp("screenshots")
    request.config.stash[SCREENSHOTS] = folder
    return folder


@pytest.fixture(scope="session")
def browser_page(live: str, browser: Browser) -> Iterator[tuple[Page, list[str]]]:
    """One Chromium and one 1366x768 page for the session; the second item collects the page's
    script errors and any failed request for a script, a stylesheet or the encode API (pages
    themselves answer 4xx on purpose in some tests)."""
    page = browser.new_page(viewport={"width": 1366, "height": 768}, base_url=live)
    page.set_default_timeout(15_000)
    problems: list[str] = []
    page.on("pageerror", lambda e: problems.append(f"script error: {e}"))
    page.on(
        "response",
        lambda r: (
            problems.append(f"{r.status} for {r.url}")
            if r.status >= 400 and ("/static/" in r.url or "/api/" in r.url)
            else None
        ),
    )
    yield page, problems
    page.close()


@pytest.fixture
def page(browser_page: tuple[Page, list[str]]) -> Iterator[Page]:
    pg, problems = browser_page
    problems.clear()
    yield pg
    assert problems == []


def snap(page: Page, shots: Path, name: str, *, full: bool = True) -> None:
    page.screenshot(path=str(shots / f"{name}.png"), full_page=full)


def test_registry_page(page: Page, served: Served, shots: Path) -> None:
    page.goto("/")
    rows = page.locator("table tbody tr")
    expect(rows).to_have_count(len(served.refs))
    snap(page, shots, "registry", full=False)
    page.get_by_role("link", name="vocab size").click()
    sizes = [int(x.replace(",", "")) for x in page.locator("tbody td.num:nth-child(3)").all_inner_texts()]
    assert sizes == sorted(sizes)
    page.locator("input[name=q]").fill("prod")
    page.keyboard.press("Enter")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("@prod")


@pytest.mark.parametrize("what", ["bpe2", "wordpiece", "unigram", "cl100k"])
@pytest.mark.slow
def test_version_page(page: Page, served: Served, shots: Path, what: str) -> None:
    if what not in served.refs:
        pytest.skip("cl100k_base.tiktoken is not in the shared data")
    ref = served.refs[what]
    page.goto(f"/v/{ref}")
    expect(page.locator("h1")).to_contain_text(ref)
    expect(page.locator("text=Tokens by kind")).to_be_visible()
    assert page.locator("h2:has-text('Samples') + table tr").count() == 6
    if what == "unigram":
        expect(page.locator("svg.chart polyline").first).to_be_visible()
    if what == "bpe2":
        expect(page.locator("text=First merges")).to_be_visible()
        expect(page.locator(".badge.alias")).to_have_text("@prod")
    snap(page, shots, f"version-{what}")


@pytest.mark.slow
def test_tokens_and_a_tokens_ancestry(page: Page, served: Served, shots: Path) -> None:
    ref = served.refs["bpe2"]
    page.goto(f"/v/{ref}/tokens")
    page.locator("input[name=q]").fill(" the")
    page.keyboard.press("Enter")
    first = page.locator("tbody tr").first
    expect(first).to_contain_text("the")
    snap(page, shots, "tokens", full=False)
    first.locator("td a").first.click()
    expect(page.locator("h1")).to_contain_text(f"of {ref}")
    tree = page.locator("ul.tree li")
    assert tree.count() >= 3, "a merged token has at least itself and two parts"
    expect(page.locator("ul.tree .how").first).to_contain_text("merge rank")
    expect(page.locator("text=Versions with the same bytes")).to_be_visible()
    snap(page, shots, "token", full=False)


TEXT = "Hello world, 東京 café  x\n\tdef f(x): return 1234567 # über"


def test_playground_shows_the_librarys_ids(page: Page, served: Served, shots: Path) -> None:
    refs = [served.refs[w] for w in ("bpe2", "wordpiece", "unigram", "cl100k") if w in served.refs]
    page.goto("/playground")
    for k, ref in enumerate(refs):
        page.locator("select.pg-version").nth(k).select_option(ref)
    box = page.locator("#pg-text")
    box.fill(TEXT[:20])
    box.press_sequentially(TEXT[20:])  # typed key by key, as a person would
    columns = page.locator(".pg-col")
    expect(columns).to_have_count(len(refs))
    for k, ref in enumerate(refs):
        ids = tokreg.load(ref, db=served.db).encode(TEXT)
        expect(columns.nth(k).locator(".pg-ids")).to_have_text(" ".join(map(str, ids)))
        expect(columns.nth(k).locator(".meta")).to_contain_text(f"{len(ids)} tokens")
        expect(columns.nth(k).locator(".pg-tokens .chip")).to_have_count(len(ids))
    expect(page.locator("#pg-stats")).to_contain_text(f"{len(TEXT)} characters · {len(TEXT.encode())} bytes")
    assert page.locator(".chip.disagree").count() > 0
    assert page.locator(".chip.partial").count() > 0  # 東京 cut inside its characters by the small BPE
    first = columns.nth(0).locator(".pg-tokens .chip").first
    first.hover()
    tip = page.locator(".pg-tip")
    expect(tip).to_be_visible()
    ids0 = tokreg.load(refs[0], db=served.db).encode(TEXT)
    expect(tip).to_contain_text(f"id {ids0[0]}")
    expect(tip).to_contain_text("span [0, ")
    snap(page, shots, "playground", full=False)
    # the page's address keeps the choice, so it can be shared
    assert all(f"v={r}".replace("@", "%40") in page.url for r in refs)


@pytest.mark.slow
def test_playground_draws_markup_as_text(page: Page, served: Served) -> None:
    page.goto(f"/playground?v={served.refs['bpe']}")
    hostile = '<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>'
    page.locator("#pg-text").fill(hostile)
    expect(page.locator(".pg-ids")).to_have_text(
        " ".join(map(str, tokreg.load(served.refs["bpe"], db=served.db).encode(hostile)))
    )
    assert page.evaluate("window.__xss") is None
    assert page.locator("#pg-cols img, #pg-cols script").count() == 0


@pytest.mark.slow
def test_diff_page(page: Page, served: Served, shots: Path) -> None:
    a, b = served.refs["bpe"], served.refs["bpe2"]
    page.goto(f"/diff?a={a}&b={b}")
    expect(page.locator("h2:has-text('Vocabulary')")).to_be_visible()
    page.locator("textarea[name=text]").fill("In the beginning God created the heaven and the earth. " * 3)
    page.get_by_role("button", name="Compare").click()
    expect(page.locator("h2:has-text('Effect on your text')")).to_be_visible()
    expect(page.locator("text=Words segmented differently")).to_be_visible()
    snap(page, shots, "diff")


@pytest.mark.slow
def test_sql_query_and_a_refused_write(page: Page, served: Served, shots: Path) -> None:
    page.goto("/sql")
    q = f"SELECT id, text, count FROM vocab WHERE tokenizer = '{served.refs['bpe2']}' ORDER BY count DESC LIMIT 12"
    page.locator("textarea[name=q]").fill(q)
    page.get_by_role("button", name="Run").click()
    expect(page.locator("#sql-result tbody tr")).to_have_count(12)
    expect(page.locator("#sql-summary")).to_contain_text("12 rows")
    snap(page, shots, "sql", full=False)
    page.locator("textarea[name=q]").fill("DELETE FROM tokens")
    page.get_by_role("button", name="Run").click()
    expect(page.locator("#sql-error")).to_contain_text("read-only")
    expect(page.locator("textarea[name=q]")).to_have_value("DELETE FROM tokens")
    snap(page, shots, "sql-refused", full=False)
    assert file_digest(served.db) == served.digest


@pytest.mark.slow
def test_pin_page(page: Page, served: Served, shots: Path) -> None:
    page.goto("/v/web@prod/pin")
    h = tokreg.load(served.refs["bpe2"], db=served.db).hash
    expect(page.locator("#pin-lockfile")).to_contain_text(f'hash = "{h}"')
    page.locator("button.copy").first.click()
    expect(page.locator("button.copy").first).not_to_have_text("copy")
    snap(page, shots, "pin", full=False)


@pytest.mark.slow
def test_an_unknown_version(page: Page, shots: Path) -> None:
    res: Any = page.goto("/v/nosuch@1")
    assert res.status == 404
    expect(page.locator(".error")).to_contain_text("no tokenizer named 'nosuch'")
    snap(page, shots, "not-found", full=False)
