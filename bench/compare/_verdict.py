"""The verdict: a sentence computed from the compared levels, never written by hand (pure).

It first checks that there is something to judge: a pair that differs in context beyond the treatment gets no
verdict (unless a cross-context comparison is forced, and then it says so first); a level where a side failed,
has a flagged error rate or fewer than ``comparison.min_requests`` requests is left out and named.

Then it says which side is faster at which levels, by the speed metrics (per-request tok/s and throughput),
under the evidence rules of ``bench.compare.evidence``: a side is faster only where a ratio's interval lies
entirely beyond the noise floor; an interval inside the floor is "no difference shown"; a ratio without an
interval is indicative, never "faster". It names where the lead changes (the crossover) and the gap at the
lowest level (per-request tok/s first: what one user sees) and at the saturating level (the
``saturation``-labelled level, else the highest level both state; total throughput first).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from bench.figures import format_figure
from bench.level_order import SATURATION, level_sort_key

from ._evidence import estimate_of, floor_text, within_floor
from ._result import ContextWarning, LevelComparison, MetricComparison

__all__ = ["verdict_sentence"]

LOW_PREFERENCE = ("per_request_tok_s", "total_throughput", "output_throughput")
HIGH_PREFERENCE = ("total_throughput", "output_throughput", "per_request_tok_s")
FORCE_HINT = (
    "a cross-context comparison can be forced (bench compare --cross-context, or cross_context: true for the "
    "experiment in benchbook.yaml) and is then labelled as such"
)


def _fmt_gap(factor: float) -> str:
    """How much better one side is: ``3.5%`` below 10%, ``15%`` below 1.5×, ``2.2×`` from there on."""
    if factor >= 1.5:
        return f"{factor:.1f}×"
    pct = (factor - 1.0) * 100
    return f"{pct:.1f}%" if pct < 10 else f"{pct:.0f}%"


def _join(items: Sequence[str]) -> str:
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _pick(row: LevelComparison, preference: Sequence[str]) -> MetricComparison | None:
    for name in preference:
        m = row.metric(name)
        if m is not None and m.ratio.value is not None and m.a and m.b:
            return m
    return None


def _interval(m: MetricComparison, confidence: float) -> str:
    return f"ratio {m.ratio.value:.2f}, {confidence:.0%} interval {m.ratio.lo:.2f}–{m.ratio.hi:.2f}"


def _gap_clause(
    row: LevelComparison, m: MetricComparison, names: dict[str, str], confidence: float, noise_floor: float
) -> str:
    where, floor = f"at {row.name}", floor_text(noise_floor)
    assert m.a is not None and m.b is not None and m.ratio.value is not None
    if m.evidence == "unresolved":
        return f"{where} the difference in {m.label} is not resolved ({_interval(m, confidence)})"
    if m.evidence == "no_difference":
        interval = _interval(m, confidence)
        return f"{where} no difference in {m.label} is shown ({interval}, inside the {floor} noise floor)"
    leader = m.leader
    if leader is None:
        same = format_figure(m.a, approximate=m.approximate)
        return f"{where} both state the same {m.label} ({same} {m.unit})"
    best, worst = (m.a, m.b) if leader == "a" else (m.b, m.a)
    factor = best / worst if m.higher_is_better else worst / best
    shown = [format_figure(v, approximate=m.approximate) for v in (best, worst)]
    figures = f"{shown[0]} vs {shown[1]} {m.unit}"
    if m.evidence == "decided":
        gap = _fmt_gap(factor)
        return f"{where} {names[leader]} leads by {gap} in {m.label} ({figures}; {_interval(m, confidence)})"
    if within_floor(m.ratio.value, noise_floor):
        return (
            f"{where} the point estimates of {m.label} differ by less than the {floor} noise floor "
            f"({figures}, ratio {m.ratio.value:.3f})"
        )
    gap = _fmt_gap(factor)
    return f"{where} the point estimates favour {names[leader]} by {gap} in {m.label} ({figures}, no interval)"


def _phrases(label_a: str, label_b: str, noise_floor: float) -> dict[str, str]:
    return {
        "a": f"{label_a} is faster at",
        "b": f"{label_b} is faster at",
        "mixed": "the speed figures disagree at",
        "unresolved": "the difference is not resolved at",
        "no_difference": f"no difference beyond the {floor_text(noise_floor)} noise floor is shown at",
        "indicative": "there are only point estimates (indicative, no interval) at",
        "none": "no speed figure is stated by both at",
    }


def _summary(rows: Sequence[LevelComparison], label_a: str, label_b: str, noise_floor: float) -> str:
    """The who-is-faster clause."""
    names = {"a": label_a, "b": label_b}
    winners = {r.winner for r in rows}
    every = "the one level both state" if len(rows) == 1 else "every level both state"
    levels = _join([r.name for r in rows])
    if len(winners) == 1 and rows[0].winner in names:
        w = rows[0].winner
        return f"{names[w]} is faster than {label_b if w == 'a' else label_a} at {every} ({levels})"
    if winners == {"no_difference"}:
        return f"no difference beyond the {floor_text(noise_floor)} noise floor is shown at {every} ({levels})"
    by_kind: dict[str, list[str]] = {}
    for r in rows:
        by_kind.setdefault(r.winner, []).append(r.name)
    phrases = _phrases(label_a, label_b, noise_floor)
    return "; ".join(f"{phrases[kind]} {_join(levels)}" for kind, levels in by_kind.items())


def _crossover(rows: Sequence[LevelComparison], label_a: str, label_b: str) -> str | None:
    decided = [r for r in rows if r.winner in ("a", "b")]
    changes = [(p, q) for p, q in itertools.pairwise(decided) if p.winner != q.winner]
    if not changes:
        return None
    names = {"a": label_a, "b": label_b}
    if len(changes) == 1:
        p, q = changes[0]
        return f"the lead crosses over between {p.name} and {q.name}, where {names[q.winner]} takes over"
    spots = _join([f"{p.name}–{q.name}" for p, q in changes])
    return f"the lead changes {len(changes)} times (between {spots})"


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _not_comparable(label_a: str, label_b: str, context: Sequence[ContextWarning]) -> str:
    fields = "; ".join(f"{w.field} ({w.values})" for w in context)
    return (
        f"No verdict: {label_a} and {label_b} are not comparable. They differ in context beyond the treatment: "
        f"{fields}. The figures are shown side by side only; {FORCE_HINT}."
    )


def verdict_sentence(
    rows: Sequence[LevelComparison],
    label_a: str,
    label_b: str,
    *,
    confidence: float = 0.95,
    noise_floor: float = 0.05,
    context: Sequence[ContextWarning] = (),
    cross_context: bool = False,
) -> str:
    """The verdict for compared level rows (``a`` = baseline, ``b`` = candidate), derived from their figures.

    ``context``: the context fields the pair differs in beyond the treatment; with any, there is no verdict
    unless ``cross_context`` forces one (and the sentence then starts by saying so)."""
    if context and not cross_context:
        return _not_comparable(label_a, label_b, context)
    prefix = ""
    if context:
        prefix = (
            f"Cross-context comparison (forced): {label_a} and {label_b} differ in context beyond the treatment "
            f"({', '.join(w.field for w in context)}), so these ratios mix the treatment with those differences. "
        )
    usable = sorted((r for r in rows if r.excluded is None), key=level_sort_key)
    left_out = [f"{r.name} ({r.excluded})" for r in rows if r.excluded is not None]
    if not usable:
        if left_out:
            return prefix + f"No verdict: no level that both state is usable: {_join(left_out)}."
        return prefix + f"No verdict: no level with usable figures is present in both {label_a} and {label_b}."
    names = {"a": label_a, "b": label_b}
    estimate = estimate_of(usable)
    if estimate == "point":
        sentences = [
            "Indicative only: no compared ratio has an interval (the records hold neither per-request samples nor "
            "repeated runs), so neither side is shown to be faster."
        ]
    else:
        summary = _summary(usable, label_a, label_b, noise_floor)
        sentences = [(summary if summary.startswith((label_a, label_b)) else _capital(summary)) + "."]
        cross = _crossover(usable, label_a, label_b)
        if cross:
            sentences.append(_capital(cross) + ".")
    low = usable[0]
    saturating = next((r for r in usable if r.label == SATURATION), usable[-1])
    clauses = []
    m_low = _pick(low, LOW_PREFERENCE)
    if m_low is not None:
        clauses.append(_gap_clause(low, m_low, names, confidence, noise_floor))
    if saturating is not low:
        m_high = _pick(saturating, HIGH_PREFERENCE)
        if m_high is not None:
            clauses.append(_gap_clause(saturating, m_high, names, confidence, noise_floor))
    if clauses:
        sentences.append(_capital("; ".join(clauses)) + ".")
    rule = (
        f"A side is called faster only where the {confidence:.0%} bootstrap interval of the ratio lies entirely "
        f"beyond the {floor_text(noise_floor)} noise floor."
    )
    if estimate == "mixed":
        sentences.append("Ratios without an interval (no per-request samples, no repeated runs) are indicative only.")
    if estimate != "point":
        sentences.append(rule)
    tail = f" Left out: {_join(left_out)}." if left_out else ""
    return prefix + " ".join(sentences) + tail
