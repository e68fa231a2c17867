"""Every figure a level can state, defined once: key, label, unit, which direction is better, its formula, where it
lives in a :class:`~bench.record.model.Level`, whether it is neutral, whether ``bench.compare`` compares it, and its
counterpart. ``bench.compare``, the site (record pages, charts, comparisons, history), the PR report, the CSV
downloads and :func:`bench.frame` all read figures through this registry, so a figure is added or renamed here once.

A figure is either a level field's headline (``Metric.headline()``: the stated value, else the mean, else the
median) or one statistic of a latency distribution (``ttft_p99``: ``Level.ttft_ms.p99``).

Per-request values (for the bootstrap of ``bench.compare``) follow ``shared/MEASUREMENT.md``:

* per-request tok/s = output_tokens / (E2E − TTFT), mean over requests;
* TPOT = (E2E − TTFT) / (output_tokens − 1), mean over requests with more than one token;
* TTFT: mean over requests;
* total throughput = Σ (input + output tokens) / level duration; output throughput = Σ output tokens / duration.

A request whose token count is unknown is left out of the means; a throughput needs every count.

The two speculative figures are compared only like with like: the acceptance rate (accepted / proposed draft
tokens, 0..1) and the accept length (output tokens per verify step) are never converted into each other; each names
the other as its ``counterpart``. They are level-wide sums, with no per-request samples: an interval needs repeated
runs.

The cache-hit share (Σ cached prompt tokens ÷ Σ prompt tokens, ``Level.prefix_cache``) is *neutral*: it describes
what the workload let the server reuse, so no side "leads" on it and no regression is flagged on it. It is a share of
sums, bootstrapped as a ``rate`` whose "duration" is the level's Σ prompt tokens and whose per-request "times" are the
prompt tokens: a resample's share is then exactly Σ cached[idx] ÷ Σ prompt[idx].
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from bench.record.model import Level, Metric, Samples

__all__ = [
    "COMPARED",
    "FIGURES",
    "SPEED",
    "Figure",
    "figure",
    "figures_table_markdown",
    "format_figure",
]

Kind = Literal["mean", "rate"]
Better = Literal["higher", "lower"]
PerRequest = Callable[[Samples], list[float] | None]


def _per_request_tok_s(s: Samples) -> list[float] | None:
    out = []
    for ttft, e2e, n in zip(s.ttft_ms, s.e2e_ms, s.output_tokens, strict=True):
        if n is not None and e2e > ttft:
            out.append(n / ((e2e - ttft) / 1000.0))
    return out


def _tpot(s: Samples) -> list[float] | None:
    return [
        (e2e - ttft) / (n - 1)
        for ttft, e2e, n in zip(s.ttft_ms, s.e2e_ms, s.output_tokens, strict=True)
        if n is not None and n > 1
    ]


def _ttft(s: Samples) -> list[float] | None:
    return list(s.ttft_ms)


def _total_tokens(s: Samples) -> list[float] | None:
    if len(s.input_tokens) != len(s.output_tokens):
        return None
    pairs = list(zip(s.input_tokens, s.output_tokens, strict=True))
    if any(i is None or o is None for i, o in pairs):
        return None
    return [float(i) + float(o) for i, o in pairs if i is not None and o is not None]


def _output_tokens(s: Samples) -> list[float] | None:
    if any(n is None for n in s.output_tokens):
        return None
    return [float(n) for n in s.output_tokens if n is not None]


def _cache_pairs(s: Samples) -> list[tuple[float, float]]:
    """(cached, prompt tokens) of the requests that report both, with a positive prompt."""
    if not s.cached_tokens or len(s.cached_tokens) != len(s.input_tokens):
        return []
    return [
        (float(c), float(i))
        for c, i in zip(s.cached_tokens, s.input_tokens, strict=True)
        if c is not None and i is not None and 0 <= c <= i and i > 0
    ]


def _cached_tokens(s: Samples) -> list[float] | None:
    return [c for c, _ in _cache_pairs(s)] or None


def _cache_prompt_tokens(s: Samples) -> list[float] | None:
    return [i for _, i in _cache_pairs(s)] or None


@dataclass(frozen=True)
class Figure:
    """One figure a level can state.

    ``field`` is where it lives in a level: a ``Level`` attribute holding a ``Metric``, ``speculative.<name>``, or
    ``prefix_cache.hit_share``. ``stat`` picks one statistic of that metric (None: its headline). ``better`` is
    None for a neutral (workload) figure. ``per_request`` gives its per-request values from ``Level.samples``
    (None: the figure has none), ``kind`` how they make the figure (a mean, or a sum over a duration), ``share_of``
    the denominators of a share of sums. ``compared``: ``bench.compare`` compares it; ``speed``: it decides which
    side of a comparison is faster. ``counterpart`` names a related figure that is NOT the same quantity.
    """

    key: str
    label: str  # as it reads inside a sentence: "per-request tok/s", "TTFT p99"
    unit: str
    better: Better | None
    formula: str
    field: str
    stat: Literal["p50", "p90", "p99"] | None = None
    per_request: PerRequest | None = None
    kind: Kind = "mean"
    share_of: PerRequest | None = None
    compared: bool = False
    speed: bool = False
    counterpart: str | None = None

    @property
    def neutral(self) -> bool:
        """A workload figure: shown, never a leader, never a regression."""
        return self.better is None

    @property
    def higher_is_better(self) -> bool:
        return self.better == "higher"

    @property
    def heading(self) -> str:
        """The label starting with a capital, for a heading or a column: "Per-request tok/s"."""
        return self.label[:1].upper() + self.label[1:]

    @property
    def title(self) -> str:
        """``Heading (unit)`` (an axis or column title), the heading alone when it names its unit already."""
        return self.heading if self.unit in self.label else f"{self.heading} ({self.unit})"

    def metric(self, level: Level) -> Metric | None:
        """The ``Metric`` this figure is read from at ``level`` (for a statistic, the whole distribution)."""
        if self.field == "prefix_cache.hit_share":
            pc = level.prefix_cache
            if pc is None:
                return None
            return Metric(unit="share", formula=self.formula, value=pc.hit_share, n=pc.requests)
        owner: object = level
        name = self.field
        if name.startswith("speculative."):
            owner, name = level.speculative, name.removeprefix("speculative.")
        m = getattr(owner, name, None) if owner is not None else None
        return m if isinstance(m, Metric) else None

    def value(self, level: Level) -> tuple[float, bool] | None:
        """(figure, approximate), or None when the level does not state it."""
        m = self.metric(level)
        if m is None:
            return None
        if self.stat is None:
            return m.headline(), m.approximate
        v = getattr(m, self.stat)
        return (float(v), m.approximate) if v is not None else None


def _headline(
    key: str,
    label: str,
    unit: str,
    better: Better | None,
    formula: str,
    *,
    field: str | None = None,
    per_request: PerRequest | None = None,
    kind: Kind = "mean",
    compared: bool = False,
    speed: bool = False,
    share_of: PerRequest | None = None,
    counterpart: str | None = None,
) -> Figure:
    return Figure(
        key,
        label,
        unit,
        better,
        formula,
        field or key,
        None,
        per_request,
        kind,
        share_of,
        compared,
        speed,
        counterpart,
    )


_LATENCIES: tuple[tuple[str, str, str], ...] = (
    ("ttft", "TTFT", "request sent → first chunk that carries generated text"),
    ("tpot", "TPOT", "(E2E − TTFT) / (output tokens − 1) per request"),
    ("itl", "ITL", "gaps between token-bearing chunks, spread over the tokens each chunk carries"),
    ("e2e", "E2E latency", "request sent → last token-bearing chunk"),
)


def _percentiles() -> tuple[Figure, ...]:
    return tuple(
        Figure(
            f"{short}_{stat}", f"{label} {stat}", "ms", "lower", f"{stat} over requests of {what}", f"{short}_ms", stat
        )
        for short, label, what in _LATENCIES
        for stat in ("p50", "p90", "p99")
    )


FIGURES: tuple[Figure, ...] = (
    _headline(
        "per_request_tok_s",
        "per-request tok/s",
        "tok/s",
        "higher",
        "output tokens / (E2E − TTFT), mean over requests (one user's decode speed)",
        per_request=_per_request_tok_s,
        compared=True,
        speed=True,
    ),
    _headline(
        "total_throughput",
        "total throughput",
        "tok/s",
        "higher",
        "Σ (input + output tokens) / level duration",
        per_request=_total_tokens,
        kind="rate",
        compared=True,
        speed=True,
    ),
    _headline(
        "output_throughput",
        "output throughput",
        "tok/s",
        "higher",
        "Σ output tokens / level duration",
        per_request=_output_tokens,
        kind="rate",
        compared=True,
        speed=True,
    ),
    _headline(
        "ttft_ms", "TTFT", "ms", "lower", "mean over requests of " + _LATENCIES[0][2], per_request=_ttft, compared=True
    ),
    _headline(
        "tpot_ms", "TPOT", "ms", "lower", "mean over requests of " + _LATENCIES[1][2], per_request=_tpot, compared=True
    ),
    _headline(
        "acceptance_rate",
        "acceptance rate",
        "accepted / drafted",
        "higher",
        "Σ accepted draft tokens / Σ proposed draft tokens over the level's requests",
        field="speculative.acceptance_rate",
        compared=True,
        counterpart="accept_length",
    ),
    _headline(
        "accept_length",
        "accept length",
        "tokens/step",
        "higher",
        "Σ output tokens / Σ verify steps over the level's requests",
        field="speculative.accept_length",
        compared=True,
        counterpart="acceptance_rate",
    ),
    _headline(
        "cache_hit_share",
        "cache-hit share",
        "cached/prompt tokens",
        None,
        "sum_cached_prompt_tokens/sum_prompt_tokens",
        field="prefix_cache.hit_share",
        per_request=_cached_tokens,
        kind="rate",
        compared=True,
        share_of=_cache_prompt_tokens,
    ),
    _headline("request_throughput", "request throughput", "req/s", "higher", "completed requests / level duration"),
    _headline(
        "per_request_tok_s_e2e",
        "per-request tok/s incl. TTFT",
        "tok/s",
        "higher",
        "output tokens / E2E, mean over requests",
    ),
    _headline("itl_ms", "ITL", "ms", "lower", "mean of " + _LATENCIES[2][2]),
    _headline("e2e_ms", "E2E latency", "ms", "lower", "mean over requests of " + _LATENCIES[3][2]),
    *_percentiles(),
)
_BY_KEY: dict[str, Figure] = {f.key: f for f in FIGURES}
COMPARED: tuple[Figure, ...] = tuple(f for f in FIGURES if f.compared)
"""The figures ``bench.compare`` compares, in the order its tables list them."""
SPEED: tuple[str, ...] = tuple(f.key for f in FIGURES if f.speed)
"""The figures that decide which side is faster at a level (latencies and speculative figures are shown, not voted)."""


def figure(key: str) -> Figure:
    """The figure named ``key``; a KeyError names the known keys."""
    try:
        return _BY_KEY[key]
    except KeyError:
        raise KeyError(f"unknown figure {key!r}; known: {', '.join(_BY_KEY)}") from None


def format_figure(value: float | int | None, *, approximate: bool = False, missing: str = "—") -> str:
    """A figure for people, at a precision that suits its size: ``8,166``, ``354``, ``92.7``, ``3.42``, ``0.0123``;
    ``≈`` in front of an approximate one, ``missing`` for none. The one number format of pages, tables and
    sentences."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return missing
    mark = "≈" if approximate else ""
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{mark}{value:,}"
    v = float(value)
    a = abs(v)
    if a >= 100:
        text = f"{v:,.0f}"
    elif a >= 10:
        text = f"{v:.1f}"
    elif a >= 1:
        text = f"{v:.2f}"
    elif a == 0:
        text = "0"
    else:
        text = f"{v:.3g}"
    return mark + text


def figures_table_markdown() -> str:
    """The registry as a Markdown table (the ``figures`` shortcode; the columns of :func:`bench.frame`)."""
    lines = [
        "| key | figure | unit | better | how it is computed | where in a level | compared |",
        "|---|---|---|---|---|---|---|",
    ]
    for f in FIGURES:
        where = f"`{f.field}`" + (f" `{f.stat}`" if f.stat else "")
        compared = "speed (decides)" if f.speed else "yes" if f.compared else ""
        better = f.better or "neither (workload)"
        cells = [f"`{f.key}`", f.label, f.unit, better, f.formula.replace("|", "\\|"), where, compared]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
