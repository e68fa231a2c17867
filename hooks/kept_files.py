"""Downloads linked from the site cache instead of written by gen-files and copied (MkDocs-specific; the pure part
is ``bench.site.Outputs``).

``hooks/gen_pages.py`` hands every download (a record's raw JSON and CSV, an experiment's or a configuration's rows,
a comparison's) to ``Outputs.keep`` when the site cache is on, and lists them under ``KEPT_FILES_KEY`` in the MkDocs
config; ``on_files`` registers each as a :class:`KeptFile`: MkDocs resolves and checks links to it as to any file,
and "copies" it by linking the kept file into the site.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

from bench.site import KEPT_FILES_KEY, Outputs

if TYPE_CHECKING:
    from hooks.page_parts import found_file
else:  # MkDocs puts this folder on sys.path while it loads a hook
    from page_parts import found_file

__all__ = ["KeptFile", "add_kept_files"]


class KeptFile(File):
    """A generated download whose bytes lie in a kept file (``bench.site.Outputs``), linked into the site."""

    def __init__(self, src_uri: str, kept: str, config: MkDocsConfig, outputs: Outputs) -> None:
        super().__init__(src_uri, None, config.site_dir, config.use_directory_urls)
        self.kept = kept
        self.outputs = outputs
        self.__dict__["abs_src_path"] = kept  # File.abs_src_path is a cached property

    def copy_file(self, dirty: bool = False) -> None:
        self.outputs.link(self.kept, self.abs_dest_path)

    def is_modified(self) -> bool:
        return True


def add_kept_files(files: Files, config: MkDocsConfig, outputs: Outputs | None) -> int:
    """Register the downloads gen_pages.py kept (none without a site cache); how many."""
    kept: dict[str, str] = config.get(KEPT_FILES_KEY) or {}
    if outputs is None or not kept:
        return 0
    for src, path in kept.items():
        existing = found_file(files, src)
        if existing is not None:
            files.remove(existing)
        files.append(KeptFile(src, path, config, outputs))
    return len(kept)
