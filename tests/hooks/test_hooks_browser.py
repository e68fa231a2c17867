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


# ---------------------------------------------------------------- pages that read at a glance (issue 12)

FIXTURE_EXPERIMENT = "experiments/fixture-repeats.html"


def test_a_comparison_leads_with_its_compact_table_and_ratio_chart_and_folds_the_long_form(
    browser: Browser, server: str
) -> None:
    page = browser.page
    page.goto(f"{server}/{FIXTURE_EXPERIMENT}", wait_until="networkidle")
    compact = page.locator("article table", has=page.locator("th", has_text="ratio (95% interval)")).first
    assert compact.locator("tbody tr").count() == 4  # one row per level: C=4, C=8, C=16, C=32
    chart = page.locator("article figure.bench-figure svg.bench-chart", has=page.locator("g.zone")).first
    assert chart.locator("g.band").count() == 3  # one band per speed figure
    long_form = page.locator("article details", has=page.locator("th", has_text="ngram / baseline")).first
    assert long_form.get_attribute("open") is None and not long_form.locator("table").is_visible()
    box_table, box_chart = compact.bounding_box(), chart.bounding_box()
    assert box_table is not None and box_chart is not None and box_table["y"] < box_chart["y"]
    long_form.locator("summary").click()
    assert long_form.locator("table").is_visible()
    # unresolved ratios are muted: drawn fainter than decided ones
    page.goto(f"{server}/experiments/eagle-fast-verify.html", wait_until="networkidle")
    muted = page.locator("article td .bench-muted").first
    assert muted.count() == 1
    faint, plain = page.evaluate(
        "(el) => [getComputedStyle(el).color, getComputedStyle(el.closest('td')).color]", muted.element_handle()
    )
    assert faint != plain


def _get(page: Any, url: str) -> str:
    response = page.request.get(url)
    assert response.status == 200, url
    text: str = response.text()
    return text


def test_downloads_sit_beside_comparison_and_history_tables_and_hold_the_same_numbers(
    browser: Browser, server: str
) -> None:
    import csv
    import io
    import json

    page = browser.page
    for path in (FIXTURE_EXPERIMENT, "eagle-fast-verify.html", "history/index.html"):
        page.goto(f"{server}/{path}", wait_until="networkidle")
        links = page.locator("article .bench-downloads a")
        assert links.count() >= 2, path
        for i in range(links.count()):
            href = links.nth(i).get_attribute("href")
            assert href is not None and href.endswith((".csv", ".json"))
            body = _get(page, links.nth(i).evaluate("a => a.href"))
            if href.endswith(".json"):
                json.loads(body)
            else:
                assert next(iter(csv.reader(io.StringIO(body))))
    # the comparison's CSV holds the ratio the compact table shows
    page.goto(f"{server}/{FIXTURE_EXPERIMENT}", wait_until="networkidle")
    href = page.locator("article .bench-downloads a", has_text="rows as CSV").first.evaluate("a => a.href")
    rows = list(csv.DictReader(io.StringIO(_get(page, href))))
    c4 = next(r for r in rows if r["level"] == "C=4" and r["figure"] == "per_request_tok_s")
    cell = page.locator("article table tbody tr", has=page.locator("td", has_text="C=4")).first.locator("td").nth(2)
    assert cell.inner_text().startswith(f"{float(c4['ratio']):.2f}×")
    # a history page offers its rows; they are the records it lists
    page.goto(f"{server}/history/index.html", wait_until="networkidle")
    page.locator("article table a").first.click()
    page.wait_for_load_state("networkidle")
    href = page.locator("article .bench-downloads a", has_text="rows as JSON").first.evaluate("a => a.href")
    listed = {a.split("/")[-1].removesuffix(".html") for a in page.locator("article table a").evaluate_all(
        "els => els.map(e => e.getAttribute('href'))") if a and a.endswith(".html") and "/records/" in a}  # fmt: skip
    assert {r["record_id"] for r in json.loads(_get(page, href))} == listed


def _rgb(text: str) -> tuple[float, float, float, float]:
    parts = [float(x) for x in text[text.index("(") + 1 : text.index(")")].replace("/", ",").split(",")]
    return (parts[0], parts[1], parts[2], parts[3] if len(parts) > 3 else 1.0)


def _luminance(c: tuple[float, float, float]) -> float:
    def channel(v: float) -> float:
        v /= 255
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(c[0]) + 0.7152 * channel(c[1]) + 0.0722 * channel(c[2])


def _contrast(fg: tuple[float, float, float, float], bg: tuple[float, float, float, float], alpha: float) -> float:
    a = fg[3] * alpha  # what shows is the colour blended over the background
    seen = tuple(fg[i] * a + bg[i] * (1 - a) for i in range(3))
    hi, lo = sorted((_luminance(seen), _luminance(bg[:3])), reverse=True)  # type: ignore[arg-type]
    return (hi + 0.05) / (lo + 0.05)


def _chart_colours(page: Any) -> dict[str, Any]:
    return page.evaluate(
        """() => {
          const svg = document.querySelector('article svg.bench-chart');
          const cs = (el) => getComputedStyle(el);
          const texts = [...svg.querySelectorAll('g.ticks text, text.value')].slice(0, 40);
          const series = [...svg.querySelectorAll('g.series')];
          return {
            scheme: document.body.getAttribute('data-md-color-scheme'),
            bg: cs(svg).backgroundColor,
            text: texts.map(t => [cs(t).fill, parseFloat(cs(t).fillOpacity)]),
            series: series.map(g => cs(g).color),
          };
        }"""
    )


def test_charts_are_readable_in_the_light_and_the_dark_scheme(browser: Browser, server: str) -> None:
    page = browser.page
    page.goto(f"{server}/{FIXTURE_EXPERIMENT}", wait_until="networkidle")
    seen = {}
    for toggle in ("Switch to dark mode", "Switch to light mode"):
        colours = _chart_colours(page)
        bg = _rgb(colours["bg"])
        assert bg[3] == 1.0, colours["bg"]  # the chart has the page's background, not a white card
        for fill, opacity in colours["text"]:
            assert _contrast(_rgb(fill), bg, opacity) >= 4.5, (colours["scheme"], fill)
        assert len(colours["series"]) >= 2
        for colour in colours["series"]:
            assert _contrast(_rgb(colour), bg, 1.0) >= 4.5, (colours["scheme"], colour)
        seen[colours["scheme"]] = colours["bg"]
        page.locator(f"label[title='{toggle}']").click()
        page.wait_for_timeout(200)
    assert set(seen) == {"default", "slate"} and seen["default"] != seen["slate"]


def test_value_labels_do_not_overlap_in_the_browser(browser: Browser, server: str) -> None:
    page = browser.page
    for path in (FIXTURE_EXPERIMENT, "experiments/h200-ngram.html", "h200-sglang.html"):
        page.goto(f"{server}/{path}", wait_until="networkidle")
        boxes: list[list[list[float]]] = page.evaluate(
            """() => [...document.querySelectorAll('article svg.bench-chart')].map(svg =>
                 [...svg.querySelectorAll('text.value')].map(t => {
                   const b = t.getBBox(); return [b.x, b.y, b.x + b.width, b.y + b.height];
                 }))"""
        )
        assert any(boxes), path
        for chart in boxes:
            for i, a in enumerate(chart):
                for b in chart[i + 1 :]:
                    overlap_x = min(a[2], b[2]) - max(a[0], b[0])
                    overlap_y = min(a[3], b[3]) - max(a[1], b[1])
                    assert overlap_x <= 0.5 or overlap_y <= 0.5, (path, a, b)


def test_wide_level_tables_scroll_in_their_own_box(server: str, browser: Browser) -> None:
    record = "records/h200-ngram/20261130T234109Z-baseline-db2789a.html"
    check = """() => {
        const art = document.querySelector('.md-content').getBoundingClientRect();  // the content column
        return [...document.querySelectorAll('article table')].map(t => {
          let p = t.parentElement;
          while (p && p.tagName !== 'ARTICLE' && !['auto', 'scroll'].includes(getComputedStyle(p).overflowX)) {
            p = p.parentElement;
          }
          const box = (p && p.tagName !== 'ARTICLE' ? p : t).getBoundingClientRect();
          return [t.getBoundingClientRect().width, box.right - art.right];
        });
    }"""
    browser.page.goto(f"{server}/{record}", wait_until="networkidle")
    with_js = browser.page.evaluate(check)
    assert max(w for w, _ in with_js) > 1000  # the levels table is wider than the content column ...
    assert all(over <= 1 for _, over in with_js)  # ... and scrolls inside its box
    context = browser.page.context.browser.new_context(java_script_enabled=False)  # the site works without JS too
    try:
        page = context.new_page()
        page.goto(f"{server}/{record}", wait_until="networkidle")
        assert all(over <= 1 for _, over in page.evaluate(check))
    finally:
        context.close()


def test_number_columns_are_drawn_right_aligned_and_labels_left(browser: Browser, server: str) -> None:
    """Tables say a column's alignment with ``align`` (mkdocs.yml: use_align_attribute): the theme must draw it."""
    browser.page.goto(f"{server}/records/h200-ngram/20261130T234109Z-baseline-db2789a.html", wait_until="networkidle")
    gaps = browser.page.evaluate(
        """() => {
            const out = {right: [], left: []};
            for (const t of document.querySelectorAll('article table')) {
              const heads = [...t.tHead.rows[0].cells];
              for (const row of t.tBodies[0].rows) {
                [...row.cells].forEach((cell, i) => {
                  if (!cell.textContent.trim() || cell.children.length) return;  // plain text cells only
                  const range = document.createRange();
                  range.selectNodeContents(cell);
                  const text = range.getBoundingClientRect(), box = cell.getBoundingClientRect();
                  const cs = getComputedStyle(cell);
                  const left = text.left - box.left - parseFloat(cs.paddingLeft);
                  const right = box.right - parseFloat(cs.paddingRight) - text.right;
                  (heads[i].getAttribute('align') === 'right' ? out.right : out.left).push([left, right]);
                });
              }
            }
            return out;
        }"""
    )
    assert len(gaps["right"]) > 20 and len(gaps["left"]) > 5, gaps
    assert all(abs(right) <= 1 for _, right in gaps["right"])  # flush with the cell's right edge ...
    assert sum(left > 10 for left, _ in gaps["right"]) > len(gaps["right"]) / 2  # ... and mostly away from its left
    assert all(abs(left) <= 1 for left, _ in gaps["left"])


def test_a_record_page_keeps_the_theme_its_toc_palette_sorting_and_search(browser: Browser, server: str) -> None:
    """Record pages are rendered outside MkDocs' page pipeline (hooks/record_pages.py): the theme still works."""
    page = browser.page
    errors_before = len(browser.errors)
    record = "records/h200-ngram/20261130T234109Z-baseline-db2789a.html"
    page.goto(f"{server}/{record}", wait_until="networkidle")
    toc = page.locator("nav.md-nav--secondary a.md-nav__link")
    assert "Summary" in toc.all_inner_texts() and toc.count() >= 8
    page.locator("nav.md-nav--secondary a.md-nav__link", has_text="Environment").first.click()
    page.wait_for_function("() => location.hash === '#environment'")
    scheme = page.evaluate("() => document.body.getAttribute('data-md-color-scheme')")
    page.locator("label.md-header__button[for^='__palette']:visible").first.click()
    page.wait_for_function(f"() => document.body.getAttribute('data-md-color-scheme') !== '{scheme}'")
    sel = "article table[data-bench-sortable]"
    page.wait_for_selector(sel)
    name = "Output throughput (tok/s)"
    levels = page.locator(sel).filter(has=page.locator("thead th", has_text=name)).first
    header = levels.locator("thead th", has_text=name)
    header.click()
    values = levels.evaluate(
        """(t, name) => {
            const i = [...t.tHead.rows[0].cells].findIndex(c => c.textContent.trim() === name);
            return [...t.tBodies[0].rows].map(r => parseFloat(r.cells[i].textContent.replace(/[^0-9.]/g, '')));
        }""",
        name,
    )
    assert len(values) >= 2 and values in (sorted(values), sorted(values, reverse=True))
    header.click()
    again = levels.evaluate(
        "(t, name) => { const i = [...t.tHead.rows[0].cells].findIndex(c => c.textContent.trim() === name);"
        " return [...t.tBodies[0].rows].map(r => parseFloat(r.cells[i].textContent.replace(/[^0-9.]/g, ''))); }",
        name,
    )
    assert again == list(reversed(values)) and again != values
    page.locator("input.md-search__input").click()
    page.locator("input.md-search__input").press_sequentially("bootstrap", delay=50)
    page.wait_for_selector(".md-search-result__item", timeout=10_000)
    assert browser.errors[errors_before:] == []
