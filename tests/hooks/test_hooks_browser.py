"""A real Chromium (Debian's, driven by Playwright) against the built site, served on 127.0.0.1.

Nothing is downloaded: the browser is ``$BENCHBOOK_CHROMIUM`` (default /usr/bin/chromium; ``scripts/dev.sh
test`` installs it with apt). Every request the pages make is recorded and must stay on the local server.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.browser

CHROMIUM = os.environ.get("BENCHBOOK_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
HOSTILE = "records/fixture-hostile/20261201T110000Z-hostile-c3d4e5f.html"


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def server(built_site: Path) -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(built_site)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


class Browser:
    """One page with every request, console error, page error and dialog recorded."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        page.on("request", lambda r: self.requests.append(r.url))
        page.on("console", lambda m: self.errors.append(f"console: {m.text}") if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))
        page.on("dialog", self._dialog)

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()


@pytest.fixture(scope="module")
def browser(server: str) -> Iterator[Browser]:
    if not Path(CHROMIUM).is_file():
        pytest.fail(
            f"Chromium not found at {CHROMIUM}: install Debian's chromium (apt-get install -y chromium, "
            "which scripts/dev.sh test does) or set BENCHBOOK_CHROMIUM to its path"
        )
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:  # pragma: no cover - dev extra not installed
        pytest.fail("playwright (python) is not installed: run scripts/dev.sh setup")
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            context = chromium.new_context(service_workers="block")
            yield Browser(context.new_page())
        finally:
            chromium.close()


def _column(page: Any, table: str, header: str) -> list[str]:
    values: list[str] = page.evaluate(
        """([sel, name]) => {
            const t = document.querySelector(sel);
            const heads = [...t.tHead.rows[0].cells].map(c => c.textContent.trim());
            const i = heads.indexOf(name);
            return [...t.tBodies[0].rows].filter(r => !r.hidden).map(r => r.cells[i].textContent.trim());
        }""",
        [table, header],
    )
    return values


def test_eagle_page_has_the_comparison_table_and_charts(browser: Browser, server: str) -> None:
    page = browser.page
    page.goto(f"{server}/eagle-fast-verify.html", wait_until="networkidle")
    table = page.locator("article table", has=page.locator("th", has_text="eagle3 / baseline"))
    assert table.count() == 1
    assert table.locator("tbody tr").count() >= 2
    charts = page.locator("article figure.bench-figure svg.bench-chart")
    assert charts.count() >= 2
    box = charts.first.bounding_box()
    assert box is not None and box["width"] > 300 and box["height"] > 150
    assert page.locator("article figure.bench-figure svg text", has_text="Concurrency (log₂ scale)").count() >= 2


def test_eagle_page_shows_the_computed_verdict(browser: Browser, server: str) -> None:
    page = browser.page
    page.goto(f"{server}/eagle-fast-verify.html", wait_until="networkidle")
    verdict = page.locator("article .admonition.abstract", has_text="Verdict")
    assert verdict.count() >= 1
    text = verdict.first.inner_text()
    # the records there hold no interval at the levels compared: indicative, never "faster than" (issue 9)
    assert "Indicative only" in text and "point estimates favour" in text
    assert "faster than" not in text and "leads by" not in text


def test_pareto_chart_on_an_experiment_page_and_legend_toggles(browser: Browser, server: str) -> None:
    page = browser.page
    page.goto(f"{server}/experiments/eagle-fast-verify.html", wait_until="networkidle")
    chart = page.locator("figure#chart-eagle-fast-verify-tradeoff svg.bench-chart")
    assert chart.count() == 1
    assert chart.locator("polyline.front").count() == 1
    box = chart.bounding_box()
    assert box is not None and box["width"] > 300
    page.goto(f"{server}/experiments/fixture-repeats.html", wait_until="networkidle")
    svg = page.locator("figure#chart-fixture-repeats-total_throughput svg.bench-chart")
    assert svg.locator("g.band").count() == 2
    series = svg.locator("g.series[data-series='ngram']")
    assert series.is_visible()
    entry = svg.locator("g.legend-item[data-series='ngram']")
    entry.click()
    assert entry.get_attribute("aria-pressed") == "false" and not series.is_visible()
    entry.click()
    assert series.is_visible()


def test_records_index_sorts_and_filters(browser: Browser, server: str) -> None:
    page = browser.page
    page.goto(f"{server}/records/index.html", wait_until="networkidle")
    sel = ".bench-records table"
    page.wait_for_selector(f"{sel}[data-bench-sortable]")
    header = page.locator(f"{sel} thead th", has_text="Peak output tok/s")
    header.click()
    first = _column(page, sel, "Peak output tok/s")
    header.click()
    second = _column(page, sel, "Peak output tok/s")

    def num(v: str) -> float:
        v = v.lstrip("≈").replace(",", "")
        return float(v) if v not in ("—", "") else 0.0

    assert [num(v) for v in first] == sorted((num(v) for v in first), reverse=num(first[0]) > num(first[-1]))
    assert second == list(reversed(first))
    assert num(first[0]) != num(second[0])

    page.locator(".bench-filters select[name='Experiment']").select_option("fixture-hostile")
    assert _column(page, sel, "Experiment") == ["fixture-hostile"]
    assert "1 of" in page.locator(".bench-filters output").inner_text()
    page.locator(".bench-filters select[name='Experiment']").select_option("")
    assert len(_column(page, sel, "Experiment")) > 1


def test_hostile_record_runs_no_script(browser: Browser, server: str) -> None:
    page = browser.page
    page.goto(f"{server}/{HOSTILE}", wait_until="networkidle")
    assert page.locator("article img, article iframe, article script").count() == 0
    assert page.locator("article a[href^='javascript']").count() == 0
    assert "<script>alert(1)</script>" in page.locator("article").inner_text()
    page.wait_for_timeout(300)
    assert browser.dialogs == []


def test_no_console_errors_and_no_request_leaves_the_server(browser: Browser, server: str) -> None:
    page = browser.page
    for path in (
        "index.html",
        "methodology.html",
        "dead-ends/dynamic-spec-disable.html",
        "experiments/index.html",
        "history/index.html",
        "experiments/fixture-repeats.html",
    ):
        page.goto(f"{server}/{path}", wait_until="networkidle")
    assert browser.requests, "the browser made requests"
    outside = [u for u in browser.requests if not u.startswith(server + "/") and not u.startswith(("data:", "blob:"))]
    assert outside == [], f"requests left the local server: {outside}"
    assert browser.errors == []
    assert browser.dialogs == []
