"""Any OpenAI-compatible server the harness attaches to with ``--url`` (vLLM, TGI, a proxy…).

It cannot be launched (there is no one command line); readiness is ``/health`` or ``/v1/models``. What the
server is comes from ``/v1/models`` (``owned_by`` names SGLang, vLLM or llama.cpp, whose own info endpoints are
then read too: ``bench.runner.engines.introspect``); the payload kept is ``/v1/models``'s.
"""

from __future__ import annotations

from .base import EngineBase

__all__ = ["OpenAIEngine"]


class OpenAIEngine(EngineBase):
    name = "openai"
