"""Charts drawn as static, self-contained SVG: no JavaScript needed, readable without hovering.

:func:`render_svg` draws a :class:`~bench.site._chart_model.Chart`. Every point carries a ``<title>`` tooltip and,
where there is room (:func:`~bench.site._chart_model.place_labels`), a visible value label; the x axis may be log2
(concurrency). A series may carry a confidence band (a shaded area behind its line, an error bar for one level);
series may share a colour (``group``); marked points get a ring, and ``Chart.front`` is drawn as a dashed line (a
Pareto front); zones are shaded across the plot.

Colours follow the page's colour scheme: the chart's text, axes and grid use ``currentColor`` (the page's text
colour), each series takes its colour from a ``color`` attribute that the site's stylesheet may override per scheme
(class ``bench-c<k>``). Opened on its own, the SVG uses the attributes (dark text, :data:`PALETTE`). Each legend entry
and the elements of its series share a ``data-series`` attribute, so a page script may toggle a series
(``docs/assets/js/bench-charts.js``); without the script nothing is hidden.
"""

from __future__ import annotations

from collections.abc import Sequence

from bench.figures import format_figure

from ._chart_model import PALETTE, Chart, LabelSpot, Scale, Series, place_labels, scale_for
from ._escape import TEXT_LIMIT, html_attr, html_text

__all__ = ["render_svg"]

MARKERS = ("circle", "square", "triangle", "diamond")
DASHES = ("", "6 3", "2 3", "8 3 2 3")
WIDTH, HEIGHT = 720, 400
MARGIN_L, MARGIN_R, MARGIN_T, MARGIN_B = 72, 24, 56, 56
X_PAD = 18  # points at the ends of a log axis stay clear of the y axis
MAX_LABELLED = 40  # more points than this: no value labels unless the chart asks for them
FG = "#222"  # the chart's text colour when no page sets one
# a label keeps a rim of the background around its glyphs, so a line passing behind it does not cross its text
HALO = ' stroke="#fff" stroke-width="3" stroke-linejoin="round" paint-order="stroke"'


def _marker(shape: str, x: float, y: float, hollow: bool) -> str:
    fill = 'class="hollow" fill="#fff"' if hollow else 'fill="currentColor"'
    common = f'{fill} stroke="currentColor" stroke-width="1.5"'
    if shape == "square":
        return f'<rect x="{x - 4:.1f}" y="{y - 4:.1f}" width="8" height="8" {common}/>'
    if shape == "triangle":
        return f'<path d="M{x:.1f},{y - 5:.1f} L{x + 5:.1f},{y + 4:.1f} L{x - 5:.1f},{y + 4:.1f} Z" {common}/>'
    if shape == "diamond":
        d = f"M{x:.1f},{y - 5:.1f} L{x + 5:.1f},{y:.1f} L{x:.1f},{y + 5:.1f} L{x - 5:.1f},{y:.1f} Z"
        return f'<path d="{d}" {common}/>'
    return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" {common}/>'


def _legend_rows(names: Sequence[str], x0: float, x1: float) -> list[list[tuple[str, float]]]:
    """Legend entries laid out left to right, wrapping onto a new row when one would pass ``x1``."""
    rows: list[list[tuple[str, float]]] = [[]]
    lx = x0
    for name in names:
        width = 24 + 7 * len(name) + 18
        if rows[-1] and lx + width - 18 > x1:
            rows.append([])
            lx = x0
        rows[-1].append((name, lx))
        lx += width
    return rows


def _dash_attr(k: int) -> str:
    dash = DASHES[k % len(DASHES)]
    return f' stroke-dasharray="{dash}"' if dash else ""


def _group(cls: str, i: int, series: str | None = None) -> str:
    """A ``<g>`` of class ``cls`` coloured as palette entry ``i`` (its class for the page's stylesheet, its colour on
    the light scheme), tagged with its series for the legend toggle."""
    tag = f' data-series="{html_attr(series)}"' if series is not None else ""
    k = i % len(PALETTE)
    return f'<g class="{cls} bench-c{k}"{tag} color="{PALETTE[k]}">'


def _axes(chart: Chart, sx: Scale, sy: Scale, box: tuple[float, float, float, float], height: int) -> list[str]:
    x0, y1, x1, y0 = box
    out = ['<g class="axes" stroke="currentColor" stroke-opacity="0.5" stroke-width="1">']
    out.append(f'<line x1="{x0}" y1="{y0}" x2="{x1}" y2="{y0}"/><line x1="{x0}" y1="{y0}" x2="{x0}" y2="{y1}"/>')
    out.append("</g>")
    out.append('<g class="ticks" fill="currentColor" fill-opacity="0.8">')
    for t in sx.ticks:
        px = sx(t)
        out.append(
            f'<line x1="{px:.1f}" y1="{y0}" x2="{px:.1f}" y2="{y1}" stroke="currentColor" stroke-opacity="0.1"/>'
        )
        out.append(f'<text x="{px:.1f}" y="{y0 + 16}" text-anchor="middle">{sx.tick_label(t)}</text>')
    for t in sy.ticks:
        py = sy(t)
        out.append(
            f'<line x1="{x0}" y1="{py:.1f}" x2="{x1}" y2="{py:.1f}" stroke="currentColor" stroke-opacity="0.1"/>'
        )
        out.append(f'<text x="{x0 - 6}" y="{py + 4:.1f}" text-anchor="end">{sy.tick_label(t)}</text>')
    out.append("</g>")
    x_title = chart.x.title + (" (log₂ scale)" if chart.x.scale == "log2" else "")
    out.append(
        f'<text x="{(x0 + x1) / 2:.0f}" y="{height - 18}" text-anchor="middle" fill="currentColor">'
        f"{html_text(x_title)}</text>"
    )
    out.append(
        f'<text transform="translate(16,{(y0 + y1) / 2:.0f}) rotate(-90)" text-anchor="middle" fill="currentColor">'
        f"{html_text(chart.y.title)}</text>"
    )
    return out


def _bands(series: Sequence[Series], colours: dict[str, int], sx: Scale, sy: Scale) -> list[str]:
    out = []
    for s in series:
        if not s.band:
            continue
        band = sorted(s.band, key=lambda b: b.x)
        tip = f"{s.name}: confidence band ({len(band)} level(s))"
        out.append(_group("band", colours[s.name], s.name) + f"<title>{html_text(tip)}</title>")
        if len(band) == 1:  # one level: an error bar
            b = band[0]
            px = sx(b.x)
            out.append(
                f'<line x1="{px:.1f}" y1="{sy(b.lo):.1f}" x2="{px:.1f}" y2="{sy(b.hi):.1f}" stroke="currentColor" '
                'stroke-width="8" stroke-opacity="0.3"/>'
            )
        else:
            upper = [f"{sx(b.x):.1f},{sy(b.hi):.1f}" for b in band]
            lower = [f"{sx(b.x):.1f},{sy(b.lo):.1f}" for b in reversed(band)]
            out.append(
                f'<polygon points="{" ".join(upper + lower)}" fill="currentColor" fill-opacity="0.2" stroke="none"/>'
            )
        out.append("</g>")
    return out


def _zones(chart: Chart, sy: Scale, x0: float, x1: float) -> list[str]:
    out = []
    for z in chart.zones:
        top, bottom = sy(z.hi), sy(z.lo)
        out.append(f'<g class="zone"><title>{html_text(z.text)}</title>')
        if z.hi > z.lo:
            out.append(
                f'<rect x="{x0}" y="{top:.1f}" width="{x1 - x0}" height="{bottom - top:.1f}" fill="currentColor" '
                'fill-opacity="0.08"/>'
            )
        else:
            out.append(
                f'<line x1="{x0}" y1="{top:.1f}" x2="{x1}" y2="{top:.1f}" stroke="currentColor" stroke-opacity="0.6"/>'
            )
        out.append(
            f'<text x="{x0 + 4}" y="{top - 4:.1f}" font-size="11" fill="currentColor" fill-opacity="0.8">'
            f"{html_text(z.text)}</text></g>"
        )
    return out


def _hlines(chart: Chart, colours: dict[str, int], sy: Scale, x0: float, x1: float) -> list[str]:
    out = []
    for i, h in enumerate(chart.hlines):
        py = sy(h.y)
        ty = py - 5 if i % 2 == 0 else py + 14
        out.append(_group("hline", colours.get(h.series, 6), h.series))
        out.append(f"<title>{html_text(h.series)}: {html_text(h.text)}</title>")
        out.append(
            f'<line x1="{x0}" y1="{py:.1f}" x2="{x1}" y2="{py:.1f}" stroke="currentColor" stroke-width="2" '
            'stroke-dasharray="8 4"/>'
        )
        out.append(
            f'<text x="{x1 - 4}" y="{ty:.1f}" text-anchor="end" fill="currentColor">'
            f"{html_text(h.series)}: {html_text(h.text)}</text></g>"
        )
    return out


def _legend(
    shown: Sequence[Series], rows: list[list[tuple[str, float]]], colours: dict[str, int], styles: dict[str, int]
) -> list[str]:
    if not rows:
        return []
    out = ['<g class="legend">']
    for r, row in enumerate(rows):
        ly = 36 + 16 * r
        for name, lx in row:
            k = styles[name]
            out.append(f'<g class="legend-item" data-series="{html_attr(name)}">')
            out.append(_group("legend-mark", colours[name]))
            out.append(
                f'<line x1="{lx:.0f}" y1="{ly}" x2="{lx + 18:.0f}" y2="{ly}" stroke="currentColor" '
                f'stroke-width="2"{_dash_attr(k)}/>'
            )
            out.append(_marker(MARKERS[k % len(MARKERS)], lx + 9, ly, False))
            out.append("</g>")
            out.append(f'<text x="{lx + 24:.0f}" y="{ly + 4}" fill="currentColor">{html_text(name)}</text>')
            out.append("</g>")
    out.append("</g>")
    return out


def _tip(series: str, series_html: str, value: str, x_title: str, x_html: str, x: float, tooltip: str | None) -> str:
    """A point's tooltip, ``<series>: <value> at <x title> <x>[ (<tooltip>)]``, as HTML text.

    Each string in it passes through the redaction on its own (``html_text``): the series name and the axis title
    once per chart, the value and the tooltip from the redaction's memo (they recur), where the whole sentence, new
    at every point of every chart, would be redacted afresh (most of a chart's cost in a cold build). A sentence
    longer than a page shows inline is cut as a whole, as before."""
    plain = f"{series}: {value} at {x_title} {x:g}" + (f" ({tooltip})" if tooltip else "")
    if len(plain) > TEXT_LIMIT:
        return html_text(plain)
    return f"{series_html}: {html_text(value)} at {x_html} {x:g}" + (f" ({html_text(tooltip)})" if tooltip else "")


def render_svg(chart: Chart) -> str:
    """The chart as one ``<svg>`` element (no blank lines, so it can sit in Markdown as raw HTML)."""
    series = chart.series
    x0, x1 = MARGIN_L, WIDTH - MARGIN_R
    shown = [s for s in series if s.points or s.band or any(h.series == s.name for h in chart.hlines)]
    legend = _legend_rows([s.name for s in shown], x0, x1) if shown else []
    extra = 16 * max(len(legend) - 1, 0)  # each further legend row pushes the plot down
    height = HEIGHT + extra
    y0, y1 = height - MARGIN_B, MARGIN_T + extra

    pad = X_PAD if chart.x.scale == "log2" else 0
    sx = scale_for(chart.x, chart.x_values(), x0 + pad, x1 - pad)
    sy = scale_for(chart.y, chart.y_values(), y0, y1)
    groups = list(dict.fromkeys(s.group or s.name for s in series))
    colours = {s.name: groups.index(s.group or s.name) for s in series}
    styles = {s.name: (s.style if s.style is not None else i) for i, s in enumerate(series)}
    n_points = sum(len(s.points) for s in series)
    labels_on = chart.value_labels if chart.value_labels is not None else n_points <= MAX_LABELLED

    out: list[str] = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="bench-chart" viewBox="0 0 {WIDTH} {height}" '
        f'role="img" aria-labelledby="{html_attr(chart.id)}-title" font-family="sans-serif" font-size="12" '
        f'color="{FG}">',
        f'<title id="{html_attr(chart.id)}-title">{html_text(chart.title)}</title>',
        f'<text x="{WIDTH / 2:.0f}" y="20" text-anchor="middle" font-size="14" font-weight="bold" '
        f'fill="currentColor">{html_text(chart.title)}</text>',
    ]
    out += _axes(chart, sx, sy, (x0, y1, x1, y0), height)
    out += _zones(chart, sy, x0, x1)
    out += _bands(series, colours, sx, sy)  # behind everything drawn for the series
    out += _hlines(chart, colours, sy, x0, x1)
    if len(chart.front) > 1:
        path = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in chart.front)
        out.append(
            f'<polyline class="front" points="{path}" fill="none" stroke="currentColor" stroke-opacity="0.7" '
            'stroke-width="1.5" stroke-dasharray="3 3"/>'
        )

    ordered = {s.name: sorted(s.points, key=lambda p: p.x) if chart.connect == "x" else list(s.points) for s in series}
    values = {
        (s.name, i): p.label or format_figure(p.y, approximate=p.approximate)
        for s in series
        for i, p in enumerate(ordered[s.name])
    }
    keys = list(values)
    spots: dict[tuple[str, int], LabelSpot | None] = {}
    if labels_on:
        found = place_labels(
            [(sx(ordered[n][i].x), sy(ordered[n][i].y), values[(n, i)]) for n, i in keys], (x0, y1 - 14, WIDTH, y0)
        )
        spots = dict(zip(keys, found, strict=True))
    x_name = html_text(chart.x.title.lower())
    for s in series:
        pts = ordered[s.name]
        if not pts:
            continue
        k = styles[s.name]
        name = html_text(s.name)
        out.append(_group("series", colours[s.name], s.name))
        if len(pts) > 1:
            path = " ".join(f"{sx(p.x):.1f},{sy(p.y):.1f}" for p in pts)
            out.append(f'<polyline points="{path}" fill="none" stroke="currentColor" stroke-width="2"{_dash_attr(k)}/>')
        for i, p in enumerate(pts):
            px, py = sx(p.x), sy(p.y)
            value = values[(s.name, i)]
            out.append(
                f'<g class="point" data-x="{p.x:g}" data-y="{p.y:g}"><title>'
                f"{_tip(s.name, name, value, chart.x.title.lower(), x_name, p.x, p.tooltip)}</title>"
            )
            if p.marked:
                out.append(
                    f'<circle class="ring" cx="{px:.1f}" cy="{py:.1f}" r="8" fill="none" stroke="currentColor" '
                    'stroke-width="1.5"/>'
                )
            out.append(_marker(MARKERS[k % len(MARKERS)], px, py, p.approximate))
            spot = spots.get((s.name, i))
            if spot is not None:
                out.append(
                    f'<text class="value" x="{spot.x:.1f}" y="{spot.y:.1f}" text-anchor="{spot.anchor}" '
                    f'fill="currentColor"{HALO}>{html_text(value)}</text>'
                )
            out.append("</g>")
        out.append("</g>")

    out += _legend(shown, legend, colours, styles)
    if chart.empty:
        out.append(
            f'<text x="{(x0 + x1) / 2:.0f}" y="{(y0 + y1) / 2:.0f}" text-anchor="middle" fill="currentColor">'
            "no figures for this chart</text>"
        )
    note = chart.note
    if labels_on and any(v is None for v in spots.values()):
        note = "; ".join(x for x in (note, "labels without room are left out: hover a point for its value") if x)
    if note:
        out.append(f'<text x="{x0}" y="{height - 2}" font-size="11" fill="currentColor">{html_text(note)}</text>')
    out.append("</svg>")
    return "\n".join(out)
