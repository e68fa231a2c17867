"""The site, as pure functions: records → Markdown pages, tables and inline SVG charts.

Nothing here imports MkDocs: ``hooks/`` adapts these functions to MkDocs, and ``bench render``
writes the same pages to a folder for any other generator.
"""

from .data import SiteData, load_site, records_dir
from .offline import check_site
from .pages import site_pages
from .shortcodes import ShortcodeError, expand_shortcodes

__all__ = ["ShortcodeError", "SiteData", "check_site", "expand_shortcodes", "load_site", "records_dir", "site_pages"]
