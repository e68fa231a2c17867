"""Links between generated pages (bench/site/_paths.py ``link``): exactly what ``posixpath.relpath`` gives from the
linking page's folder, for the plain docs-relative paths the site writes and for odd ones."""

from __future__ import annotations

import posixpath
from collections.abc import Callable

from hypothesis import given, settings
from hypothesis import strategies as st

from bench.site._paths import link

_PART = st.sampled_from(["records", "history", "a", "b", "x.md", "y.json", "a.b", "..", ".", "", "records-2"])
_PATH = st.lists(_PART, min_size=1, max_size=5).map("/".join)


@settings(max_examples=2000, deadline=None)
@given(_PATH, _PATH)
def test_link_is_relpath_from_the_pages_folder(from_page: str, to: str) -> None:
    assert _outcome(link, from_page, to) == _outcome(
        lambda f, t: posixpath.relpath(t, posixpath.dirname(f) or "."), from_page, to
    )


def _outcome(f: Callable[[str, str], str], *args: str) -> object:
    """What ``f(*args)`` gives, or the type of the error it raises (``relpath`` of an empty path)."""
    try:
        return f(*args)
    except ValueError as exc:
        return type(exc)


def test_links_the_site_writes() -> None:
    assert link("records/exp/r1.md", "experiments/exp.md") == "../../experiments/exp.md"
    assert link("records/exp/r1.md", "records/exp/r2.md") == "r2.md"
    assert link("records/index.md", "records/exp/r1.csv") == "exp/r1.csv"
    assert link("index.md", "history/v-abc.md") == "history/v-abc.md"
    assert link("history/v-abc-2.md", "history") == "."
