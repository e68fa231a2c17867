"""benchbook: versioned LLM-serving benchmark records, the harness that measures them, and pure
renderers that turn them into pages. No MkDocs import anywhere in this package."""

__version__ = "0.1.0"
