"""``bench.testing.testserver``: the local synthetic server with exactly known timing. Records are marked test_server.

The server announces itself (header ``x-benchbook-test-server`` on every response, ``owned_by:
benchbook-testserver`` in ``/v1/models``); ``bench.runner.engines.introspect`` tells it apart whatever engine a
config names, so a record measured against it always says ``provenance.test_server: true``.
"""

from __future__ import annotations

import sys

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
            "bench.testing.testserver",
            "--host",
            host,
            "--port",
            str(port),
            *render_args(cfg.server_args),
            *cfg.extra_args,
        ]

    def launched_version(self, cfg: RunConfig) -> str | None:
        return f"benchbook {__version__}"  # the harness launches its own package's server

    def notes(self, cfg: RunConfig) -> list[str]:
        return ["synthetic test server (bench.testing.testserver): timings are configured, not measured from a model"]
