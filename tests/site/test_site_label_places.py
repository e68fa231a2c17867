"""place_labels (inline box arithmetic) places every label where the plain LabelSpot.box search places it."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from bench.site._chart_model import LabelSpot, place_labels

Box = tuple[float, float, float, float]


def _reference(points: Sequence[tuple[float, float, str]], bounds: Box) -> list[LabelSpot | None]:
    """The search written plainly: each spot's LabelSpot.box against the bounds, the placed labels and markers."""

    def overlaps(a: Box, b: Box) -> bool:
        return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]

    markers = [(px - 5, py - 5, px + 5, py + 5) for px, py, _ in points]
    placed: list[Box] = []
    out: list[LabelSpot | None] = []
    for px, py, text in points:
        found = None
        for spot in (
            LabelSpot(px, py - 9, "middle"),
            LabelSpot(px, py + 18, "middle"),
            LabelSpot(px + 8, py + 4, "start"),
            LabelSpot(px - 8, py + 4, "end"),
        ):
            box = spot.box(text)
            inside = box[0] >= bounds[0] and box[1] >= bounds[1] and box[2] <= bounds[2] and box[3] <= bounds[3]
            if inside and not any(overlaps(box, other) for other in (*placed, *markers)):
                found = spot
                placed.append(box)
                break
        out.append(found)
    return out


_coord = st.one_of(st.integers(0, 720), st.floats(0, 720, allow_nan=False))
_point = st.tuples(_coord, _coord, st.text(alphabet="0123456789.k,", max_size=12))


@settings(max_examples=500, deadline=None)
@given(st.lists(_point, max_size=40), st.integers(0, 300), st.integers(0, 100))
def test_same_spots_as_the_plain_search(points: list[tuple[float, float, str]], left: int, top: int) -> None:
    bounds = (float(left), float(top), 720.0, 400.0)
    got = place_labels(points, bounds)
    want = _reference(points, bounds)
    assert got == want
    assert [None if s is None else (type(s.x), type(s.y)) for s in got] == [
        None if s is None else (type(s.x), type(s.y)) for s in want
    ]  # the same numbers, formatted alike


def test_a_crowded_row_of_points() -> None:
    points = [(100.0 + 6 * i, 200.0 + (i % 3) * 5, f"{i * 1.5:g}") for i in range(40)]
    assert place_labels(points, (72, 42, 720, 344)) == _reference(points, (72, 42, 720, 344))
