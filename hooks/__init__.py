"""MkDocs adapters (loaded by path from mkdocs.yml); all rendering lives in ``bench.site``."""
