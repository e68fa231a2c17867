"""mkdocs-gen-files script: write every generated page (``bench.site.site_pages``) into the build.

Nothing is written into docs/: gen-files keeps these files in a temporary folder for the build.
"""

from __future__ import annotations

import mkdocs_gen_files

from bench.site import CONFIG_KEY, SiteData, site_pages

site = mkdocs_gen_files.config.get(CONFIG_KEY)  # set by hooks/site_hooks.py (on_pre_build)
if not isinstance(site, SiteData):
    raise SystemExit("benchbook: records were not loaded (is hooks/site_hooks.py listed under hooks: in mkdocs.yml?)")
for path, content in site_pages(site):
    with mkdocs_gen_files.open(path, "w", encoding="utf-8") as fh:
        fh.write(content)
