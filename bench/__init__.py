"""benchbook: versioned LLM-serving benchmark records, the harness that measures them, and pure
renderers that turn them into pages. No MkDocs import anywhere in this package.

``bench.frame(records_dir)`` is the records as one pandas DataFrame (``bench.dataframe``); docs/architecture.md says
where each concept of the project lives.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .dataframe import frame as frame

__all__ = ["__version__", "frame"]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    # imported on first use, so that ``import bench.runner`` does not load the analysis stack
    if name == "frame":
        from .dataframe import frame

        return frame
    raise AttributeError(f"module 'bench' has no attribute {name!r}")
