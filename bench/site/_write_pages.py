"""Writing the generated pages to a folder (``bench render``): the generator-neutral output."""

from __future__ import annotations

from pathlib import Path

from ._dead_ends import dead_end_page
from ._front_matter import split_front_matter
from ._pages import site_pages
from ._shortcodes import expand_shortcodes
from ._site_data import SiteData
from ._text_parts import TextParts

__all__ = ["hand_written_pages", "write_pages"]


def hand_written_pages(site: SiteData, docs_dir: Path) -> list[tuple[str, str]]:
    """The docs folder's Markdown pages with shortcodes expanded (front matter kept)."""
    out = []
    by_path = {d.path: d for d in site.dead_ends}
    for path in sorted(docs_dir.rglob("*.md")):
        rel = path.relative_to(docs_dir).as_posix()
        text = path.read_text(encoding="utf-8")
        _, front, body = split_front_matter(text)
        body = expand_shortcodes(body, site, rel)
        if rel in by_path:
            body = dead_end_page(body, by_path[rel], site.by_id)
        out.append((rel, front + body))
    return out


def write_pages(site: SiteData, out_dir: Path, *, docs_dir: Path | None = None) -> int:
    pages = list(site_pages(site))
    if docs_dir is not None:
        pages += hand_written_pages(site, docs_dir)
    for rel, content in pages:
        target = out_dir / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "w", encoding="utf-8") as fh:
            fh.writelines(content if isinstance(content, TextParts) else (content,))
    return len(pages)
