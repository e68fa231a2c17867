"""The one reader of a page's YAML front matter (the block between ``---`` lines at the top of a Markdown file): for
dead-end pages, which validate it, and for ``bench render``, which keeps it above the expanded page."""

from __future__ import annotations

import re

__all__ = ["split_front_matter"]

_FRONT = re.compile(r"\A---[ \t]*\n(.*?\n)?---[ \t]*\n", re.DOTALL)


def split_front_matter(text: str) -> tuple[str | None, str, str]:
    """(the front matter's YAML, or None when the page has none; the whole front-matter block; the rest)."""
    m = _FRONT.match(text)
    if m is None:
        return None, "", text
    return m.group(1) or "", text[: m.end()], text[m.end() :]
