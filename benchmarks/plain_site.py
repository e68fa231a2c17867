"""The yardstick for the site benchmark: a plain MkDocs site with as many trivial pages as benchbook's build has.

Same theme (Material, no fonts), the same search plugin and the same Markdown extensions as ``mkdocs.yml``, but no
benchbook hooks, no gen-files and no records: a short hand-written nav, and every other page a title, a sentence
and a link back to the index, kept out of the nav as benchbook's generated pages are. What benchbook's build
costs beyond this is benchbook's own share.
"""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent

__all__ = ["write_plain_site"]

PER_FOLDER = 200  # pages per folder, as records spread over experiment folders


def write_plain_site(project: Path, pages: int) -> Path:
    """Write a MkDocs project with ``pages`` pages under ``project``; return its ``mkdocs.yml``."""
    ours = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    docs = project / "docs"
    docs.mkdir(parents=True)
    extra = max(0, pages - 1)
    (docs / "index.md").write_text(
        "# Plain site\n\nA plain MkDocs site with the same number of pages as benchbook's build.\n"
        "\n[First page](p/0000/00000.md)\n",
        encoding="utf-8",
    )
    for i in range(extra):
        folder = docs / "p" / f"{i // PER_FOLDER:04d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{i:05d}.md").write_text(
            f"# Page {i}\n\nA trivial page, number {i}, with one link [back to the index](../../index.md).\n",
            encoding="utf-8",
        )
    config = {
        "site_name": "plain",
        "docs_dir": "docs",
        "use_directory_urls": ours.get("use_directory_urls", False),
        "not_in_nav": "/p/\n",
        "theme": ours["theme"],
        "nav": [{"Home": "index.md"}],
        "plugins": ["search"],
        "markdown_extensions": ours.get("markdown_extensions", []),
    }
    path = project / "mkdocs.yml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path
