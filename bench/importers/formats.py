"""The importable formats, by name."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from . import guidellm, sglang, vllm
from .base import Run

__all__ = ["FORMATS", "parse_file"]

FORMATS: dict[str, Callable[[Path], list[Run]]] = {
    "sglang": sglang.parse,
    "vllm": vllm.parse,
    "guidellm": guidellm.parse,
}


def parse_file(fmt: str, path: Path) -> list[Run]:
    return FORMATS[fmt](path)
