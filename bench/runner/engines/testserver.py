"""``bench.testserver``: the local synthetic server with exactly known timing. Records are marked test_server."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

import httpx

from bench import __version__

from ..config import RunConfig
from .base import EngineBase, render_args

__all__ = ["TestServerEngine"]


class TestServerEngine(EngineBase):
    name = "benchbook-testserver"
    ready_paths = ("/health",)

    @property
    def test_server(self) -> bool:
        return True

    def command(self, cfg: RunConfig, host: str, port: int) -> list[str]:
        python = cfg.binary or sys.executable
        return [
            python,
            "-m",
            "bench.testserver",
            "--host",
            host,
            "--port",
            str(port),
            *render_args(cfg.server_args),
            *cfg.extra_args,
        ]

    def version(self, client: httpx.Client, info: Mapping[str, Any] | None, cfg: RunConfig) -> str | None:
        return f"benchbook {__version__}"

    def notes(self, cfg: RunConfig) -> list[str]:
        return ["synthetic test server (bench.testserver): timings are configured, not measured from a model"]
