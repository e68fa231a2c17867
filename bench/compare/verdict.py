"""The verdict: a sentence computed from the compared levels, never written by hand (pure).

It says which side is faster at which levels (by the speed metrics: per-request tok/s and throughput), where
the lead changes (the crossover), and the gap at the lowest level (per-request tok/s first: what one user
sees) and at the saturating level (the ``saturation``-labelled level, else the highest level both state;
total throughput first: what the server delivers). A level whose interval contains 1 is "not resolved";
excluded levels (too few requests, flagged error rate) are left out and named.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Literal

from bench.record.model import Level

from .result import LevelComparison, MetricComparison

__all__ = ["fmt_figure", "fmt_gap", "level_sort_key", "verdict_sentence"]

LOW_PREFERENCE = ("per_request_tok_s", "total_throughput", "output_throughput")
HIGH_PREFERENCE = ("total_throughput", "output_throughput", "per_request_tok_s")
SATURATION = "saturation"


def level_sort_key(level: Level | LevelComparison) -> tuple[int, int, str]:
    """Numeric concurrencies in order, then other labels, then ``saturation`` last."""
    if level.concurrency is not None:
        return (0, level.concurrency, "")
    label = level.label or ""
    return (2 if label == SATURATION else 1, 0, label)


def fmt_figure(value: float | None, approximate: bool = False) -> str:
    if value is None:
        return "not stated"
    a = abs(value)
    text = f"{value:,.0f}" if a >= 100 else f"{value:.1f}" if a >= 10 else f"{value:.2f}"
    return ("≈" if approximate else "") + text


def fmt_gap(factor: float) -> str:
    """How much better the leader is: ``15%`` below 1.5×, ``2.2×`` from there on."""
    return f"{factor:.1f}×" if factor >= 1.5 else f"{(factor - 1.0) * 100:.0f}%"


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


def _gap_clause(row: LevelComparison, m: MetricComparison, label_a: str, label_b: str, confidence: float) -> str:
    where = f"at {row.name}"
    if m.unresolved:
        return (
            f"{where} the difference in {m.label} is not resolved "
            f"(ratio {m.ratio.value:.2f}, {confidence:.0%} interval {m.ratio.lo:.2f}–{m.ratio.hi:.2f})"
        )
    leader = m.leader
    if leader is None:
        return f"{where} both have the same {m.label} ({fmt_figure(m.a, m.approximate)} {m.unit})"
    assert m.a is not None and m.b is not None
    best, worst = (m.a, m.b) if leader == "a" else (m.b, m.a)
    factor = best / worst if m.higher_is_better else worst / best
    name = label_a if leader == "a" else label_b
    figures = f"{fmt_figure(best, m.approximate)} vs {fmt_figure(worst, m.approximate)} {m.unit}"
    return f"{where} {name} leads by {fmt_gap(factor)} in {m.label} ({figures})"


def _groups(rows: Sequence[LevelComparison]) -> list[tuple[str, list[LevelComparison]]]:
    out: list[tuple[str, list[LevelComparison]]] = []
    for row in rows:
        if out and out[-1][0] == row.winner:
            out[-1][1].append(row)
        else:
            out.append((row.winner, [row]))
    return out


def _summary(rows: Sequence[LevelComparison], label_a: str, label_b: str) -> tuple[str, bool]:
    """The who-is-faster clause, and whether a decided side leads everywhere."""
    names = {"a": label_a, "b": label_b}
    winners = {r.winner for r in rows}
    if len(winners) == 1 and rows[0].winner in names:
        w = rows[0].winner
        loser = label_b if w == "a" else label_a
        every = "the one level both state" if len(rows) == 1 else "every level both state"
        return f"{names[w]} is faster than {loser} at {every} ({_join([r.name for r in rows])})", True
    by_kind: dict[str, list[str]] = {}
    for r in rows:
        by_kind.setdefault(r.winner, []).append(r.name)
    phrases = {
        "a": f"{label_a} is faster at",
        "b": f"{label_b} is faster at",
        "mixed": "the speed metrics disagree at",
        "unresolved": "the difference is not resolved at",
        "none": "no speed figure is stated by both at",
    }
    return "; ".join(f"{phrases[kind]} {_join(levels)}" for kind, levels in by_kind.items()), False


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


def verdict_sentence(
    rows: Sequence[LevelComparison],
    label_a: str,
    label_b: str,
    *,
    estimate: Literal["bootstrap", "point", "mixed"] = "point",
    confidence: float = 0.95,
) -> str:
    """The verdict for compared level rows (``a`` = baseline, ``b`` = candidate), derived from their figures."""
    usable = sorted((r for r in rows if r.excluded is None), key=level_sort_key)
    left_out = [r.name for r in rows if r.excluded is not None]
    tail = f" Left out: {_join(left_out)} (too few requests or a flagged error rate)." if left_out else ""
    if not usable:
        return f"No verdict: no level with usable figures is present in both {label_a} and {label_b}.{tail}"
    summary, _ = _summary(usable, label_a, label_b)
    starts_with_label = summary.startswith((label_a, label_b))
    sentences = [(summary if starts_with_label else _capital(summary)) + "."]
    cross = _crossover(usable, label_a, label_b)
    if cross:
        sentences.append(_capital(cross) + ".")
    low = usable[0]
    saturating = next((r for r in usable if r.label == SATURATION), usable[-1])
    clauses = []
    m_low = _pick(low, LOW_PREFERENCE)
    if m_low is not None:
        clauses.append(_gap_clause(low, m_low, label_a, label_b, confidence))
    if saturating is not low:
        m_high = _pick(saturating, HIGH_PREFERENCE)
        if m_high is not None:
            clauses.append(_gap_clause(saturating, m_high, label_a, label_b, confidence))
    if clauses:
        sentences.append(_capital("; ".join(clauses)) + ".")
    if estimate == "point":
        sentences.append("Point estimates only: the records hold no per-request samples, so no confidence interval.")
    elif estimate == "mixed":
        sentences.append("Some figures are point estimates without an interval (no per-request samples).")
    else:
        sentences.append(f"Resolved means the {confidence:.0%} bootstrap interval of the ratio excludes 1.")
    return " ".join(sentences) + tail
