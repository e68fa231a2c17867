"""Instruments for testing the harness: :mod:`bench.testing.testserver`, a streaming server whose timing is known
exactly (``engine: testserver`` in a config; records measured against it say ``provenance.test_server``)."""

__all__: list[str] = []
