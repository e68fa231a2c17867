"""Any OpenAI-compatible server the harness attaches to with ``--url`` (vLLM, TGI, a proxy…).

It cannot be launched (there is no one command line); readiness is ``/health`` or ``/v1/models``,
server info is the ``/v1/models`` payload.
"""

from __future__ import annotations

from .base import EngineBase

__all__ = ["OpenAIEngine"]


class OpenAIEngine(EngineBase):
    name = "openai"
