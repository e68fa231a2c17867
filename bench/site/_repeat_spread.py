"""The evidence behind the noise floor, rendered from the records: how far repeated runs of one configuration
land apart (``bench.compare.noise``), per configuration, level and speed figure, with a summary sentence."""

from __future__ import annotations

from collections.abc import Sequence

from bench.compare import RepeatSpread, floor_text, spread_summary
from bench.figures import figure, format_figure
from bench.md_table import md_table

from ._escape import md_code, md_text
from ._markup import admonition

__all__ = ["SPREAD_ROWS", "repeat_spread_markdown"]

# The table lists at most this many spreads (the summary sentence covers them all): with a year of nightly repeats
# it would otherwise grow with every record (3.4 MB of the methodology page at 1,000 synthetic records).
SPREAD_ROWS = 200


def repeat_spread_markdown(spreads: Sequence[RepeatSpread], noise_floor: float) -> str:
    """The spreads (``bench.compare.repeat_spreads``: the site's, ``SiteData.repeat_spreads``) as a summary sentence
    and a table of the first :data:`SPREAD_ROWS`."""
    summary = spread_summary(spreads)
    if summary is None:
        return (
            "*No configuration here has repeated runs (records sharing a `run_group`, variant and fingerprint), "
            "so there is no measured run-to-run spread to set against the noise floor.*\n"
        )
    lead = (
        f"Across {summary.n} level × figure pairs of {summary.configurations} configuration(s) measured more than "
        f"once, repeated runs of the same configuration differ by a median of {summary.median:.1%} "
        f"(quartiles {summary.q25:.1%} and {summary.q75:.1%}; smallest {summary.smallest:.1%}, largest "
        f"{summary.largest:.1%}). The noise floor in effect is {floor_text(noise_floor)}."
    )
    rows = [
        [
            md_text(s.experiment),
            md_text(s.variant),
            md_code(s.run_group),
            md_text(s.level),
            md_text(figure(s.metric).label),
            " / ".join(format_figure(v) for v in s.figures),
            f"{s.spread:.1%}",
        ]
        for s in spreads[:SPREAD_ROWS]
    ]
    more = len(spreads) - SPREAD_ROWS
    note = ""
    if more > 0:
        note = f"\n\nThe first {SPREAD_ROWS} of {len(spreads)} spreads are listed; the sentence above covers all."
    table = md_table(
        ["Experiment", "Variant", "Run group", "Level", "Figure", "Runs' figures", "Spread (max / min − 1)"],
        rows,
        align="lllllrr",
    )
    return lead + "\n\n" + admonition("info", f"The {summary.n} spreads", table + note, collapsible=True)
