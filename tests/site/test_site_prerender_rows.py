"""Pre-rendered table rows without links are remembered: a table renders exactly as cell by cell afresh."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_site_prerender_reference import _ref_table

from bench.site._prerender_cells import _table, _Unsupported


def _resolve(url: str) -> str:
    return f"../{url}"


def _reference(lines: Sequence[str]) -> str:
    """The table converted cell by cell, nothing remembered (the reference renderer of the prerender tests)."""
    return _ref_table(lines, _resolve)


_cell = st.one_of(
    st.sampled_from(["1,234.5", "—", "`--tp`", "**regression**", "*x*", "a\\_b", "&lt;b&gt;", "max_tokens", "\\|", ""]),
    st.text(alphabet="abc 019.,:%×", max_size=8),
    st.sampled_from(["[link](page.md)", "see [x](a/b.md#c)"]),
)
_aligns = st.sampled_from(["---", ":--", "--:", ":-:"])


@settings(max_examples=300, deadline=None)
@given(
    st.integers(1, 4).flatmap(
        lambda n: st.tuples(
            st.lists(_aligns, min_size=n, max_size=n),
            st.lists(st.lists(_cell, min_size=n, max_size=n), min_size=1, max_size=8),
        )
    )
)
def test_table_equals_cell_by_cell(spec: tuple[list[str], list[list[str]]]) -> None:
    aligns, rows = spec
    n = len(aligns)
    lines = ["| " + " | ".join(f"h{i}" for i in range(n)) + " |", "|" + "|".join(aligns) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows + rows[:2]]  # repeated rows come from the memo
    for _ in range(2):
        assert _table(lines, _resolve) == _reference(lines)


def test_a_row_with_too_many_cells_is_refused_every_time() -> None:
    lines = ["| a | b |", "|---|--:|", "| 1 | 2 |", "| 1 | 2 | 3 |"]
    for _ in range(2):
        with pytest.raises(_Unsupported):
            _table(lines, _resolve)
    assert _table(lines[:3], _resolve) == _reference(lines[:3])
    assert _table(["| a | b |", "|:-:|---|", "| 1 | 2 |"], _resolve) != _table(lines[:3], _resolve)  # aligns key
