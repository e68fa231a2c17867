"""The importable formats, by name."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from . import _guidellm, _sglang, _vllm
from ._runs import Run

__all__ = ["FORMATS", "parse_file"]

FORMATS: dict[str, Callable[[Path], list[Run]]] = {
    "sglang": _sglang.parse,
    "vllm": _vllm.parse,
    "guidellm": _guidellm.parse,
}


def parse_file(fmt: str, path: Path) -> list[Run]:
    return FORMATS[fmt](path)
