"""Engine adapters: one small module per serving engine, chosen by the config's ``engine``."""

from __future__ import annotations

from .base import Engine, EngineBase
from .llamacpp import LlamaCppEngine
from .openai import OpenAIEngine
from .sglang import SGLangEngine
from .testserver import TestServerEngine

__all__ = ["ENGINES", "Engine", "EngineBase", "get_engine"]

ENGINES: dict[str, type[EngineBase]] = {
    "sglang": SGLangEngine,
    "llamacpp": LlamaCppEngine,
    "openai": OpenAIEngine,
    "testserver": TestServerEngine,
}


def get_engine(name: str) -> EngineBase:
    try:
        return ENGINES[name]()
    except KeyError:
        raise ValueError(f"unknown engine {name!r}; expected one of {sorted(ENGINES)}") from None
