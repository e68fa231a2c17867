"""Writing the generated pages to a folder (``bench render``): the generator-neutral output."""

from __future__ import annotations

from pathlib import Path

from .data import SiteData
from .pages import dead_end_page, site_pages
from .shortcodes import expand_shortcodes

__all__ = ["hand_written_pages", "write_pages"]


def hand_written_pages(site: SiteData, docs_dir: Path) -> list[tuple[str, str]]:
    """The docs folder's Markdown pages with shortcodes expanded (front matter kept)."""
    out = []
    by_path = {d.path: d for d in site.dead_ends}
    for path in sorted(docs_dir.rglob("*.md")):
        rel = path.relative_to(docs_dir).as_posix()
        text = path.read_text(encoding="utf-8")
        front, body = _split_front_matter(text)
        body = expand_shortcodes(body, site, rel)
        if rel in by_path:
            body = dead_end_page(body, by_path[rel], site)
        out.append((rel, front + body))
    return out


def _split_front_matter(text: str) -> tuple[str, str]:
    if text.startswith("---\n"):
        end = text.find("\n---\n", 4)
        if end != -1:
            return text[: end + 5], text[end + 5 :]
    return "", text


def write_pages(site: SiteData, out_dir: Path, *, docs_dir: Path | None = None) -> int:
    pages = list(site_pages(site))
    if docs_dir is not None:
        pages += hand_written_pages(site, docs_dir)
    for rel, content in pages:
        target = out_dir / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
    return len(pages)
