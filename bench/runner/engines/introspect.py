"""Asking a running server what it is: the *observed* side of a record (``server.observed``).

Every server is first asked ``GET /v1/models`` (any OpenAI-compatible server answers it; ``owned_by`` names
SGLang, vLLM and llama.cpp) and every response is checked for the test server's own header
(``x-benchbook-test-server``). Then the info endpoints of the engine the config names *and* of the engine the
server turned out to be are read (each adapter's ``probe``): SGLang ``/server_info`` (older: ``/get_server_info``),
``/model_info`` (``/get_model_info``), ``/version``; llama.cpp ``/props`` and ``/slots``; vLLM ``/version``.

A field is *reported* when it is in ``Observed.sources`` (with the endpoint it came from), even when its value is
None: SGLang's ``speculative_algorithm: null`` says the server does not speculate. Every endpoint asked is listed
in ``Observed.endpoints`` with its HTTP status (None: no answer). Everything kept passes
``bench.redact.redact_value`` (SGLang's server info carries ``api_key`` and ``admin_api_key``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import httpx

from bench.record.model import TEST_SERVER_ENGINE, Observed
from bench.redact import redact_value

__all__ = [
    "OWNED_BY",
    "TEST_SERVER_HEADER",
    "Introspection",
    "Probe",
    "introspect",
]

TEST_SERVER_HEADER = "x-benchbook-test-server"
"""The header bench.testing.testserver puts on every response (``bench.testing.testserver.HEADER``)."""

OWNED_BY: dict[str, str] = {
    "sglang": "sglang",
    "vllm": "vllm",
    "llamacpp": "llama.cpp",
    "llama.cpp": "llama.cpp",
    TEST_SERVER_ENGINE: TEST_SERVER_ENGINE,
}
"""``/v1/models`` ``data[].owned_by`` -> engine (SGLang's ModelCard default, vLLM's, llama-server's)."""

_OBSERVED_FIELDS = frozenset(Observed.model_fields) - {"extra", "sources", "endpoints"}


@dataclass(frozen=True)
class Introspection:
    """What one round of questions found out."""

    observed: Observed
    info: dict[str, Any] | None = None
    """The engine's own info payload, kept whole in ``server.server_info`` (redacted)."""
    args: dict[str, Any] = field(default_factory=dict)
    """Server arguments the server reports, by normalised name (``tp-size``); used to confirm the config's."""
    versions: dict[str, str] = field(default_factory=dict)
    """``environment.versions`` entries the server reports (its own version, build number, commit)."""

    @property
    def test_server(self) -> bool:
        return self.observed.engine == TEST_SERVER_ENGINE


class Probe:
    """Asks one server; remembers every endpoint's status, each field's value and the endpoint it came from."""

    def __init__(self, client: httpx.Client) -> None:
        self.client = client
        self.endpoints: dict[str, int | None] = {}
        self.values: dict[str, Any] = {}
        self.sources: dict[str, str] = {}
        self.extra: dict[str, Any] = {}
        self.info: dict[str, Any] | None = None
        self.args: dict[str, Any] = {}
        self.versions: dict[str, str] = {}
        self.test_server = False
        self.server_header: str | None = None
        self.models: Any = None

    def get(self, path: str) -> Any:
        """GET ``path``: its JSON body on 200, else None (the status is recorded either way)."""
        try:
            resp = self.client.get(path)
        except httpx.HTTPError:
            self.endpoints[path] = None
            return None
        self.endpoints[path] = resp.status_code
        if resp.headers.get(TEST_SERVER_HEADER) is not None:
            self.test_server = True
        self.server_header = self.server_header or resp.headers.get("server")
        if resp.status_code != 200:
            return None
        try:
            return resp.json()
        except ValueError:
            return None

    def first(self, *paths: str) -> tuple[str | None, Any]:
        """The first of ``paths`` that answers a JSON object, with its path."""
        for path in paths:
            body = self.get(path)
            if isinstance(body, dict):
                return path, body
        return None, None

    def set(self, name: str, value: Any, source: str) -> None:
        """Record ``name`` as reported by ``source``; the first report of a field wins."""
        if name in self.sources:
            return
        if name in _OBSERVED_FIELDS:
            self.values[name] = value
        else:
            self.extra[name] = value
        self.sources[name] = source

    def set_present(self, body: dict[str, Any], pairs: dict[str, str], source: str) -> None:
        """``set`` each field whose key ``body`` has (a null value is a report too)."""
        for name, key in pairs.items():
            if key in body:
                self.set(name, body[key], source)

    @property
    def engine(self) -> str | None:
        value = self.values.get("engine")
        return value if isinstance(value, str) else None

    def result(self) -> Introspection:
        data = {**self.values, "extra": self.extra, "sources": self.sources, "endpoints": self.endpoints}
        observed = Observed.model_validate(redact_value("observed", _clean(data)))
        info = redact_value("server_info", self.info) if self.info is not None else None
        return Introspection(observed=observed, info=info, args=self.args, versions=self.versions)


def _clean(data: dict[str, Any]) -> dict[str, Any]:
    """Integers where the schema wants them (a server may send ``8.0``); a bad value is dropped, not guessed."""
    out = dict(data)
    for name in ("tp_size", "dp_size", "parallel_slots", "speculative_num_steps", "speculative_topk",
                 "speculative_num_draft_tokens"):  # fmt: skip
        v = out.get(name)
        if v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, int | float) or float(v) != int(v):
            out.pop(name)
            out["sources"] = {k: s for k, s in out["sources"].items() if k != name}
        else:
            out[name] = int(v)
    for name in ("engine", "version", "model", "speculative_algorithm", "draft_model", "attention_backend"):
        if out.get(name) is not None and not isinstance(out[name], str):
            out[name] = str(out[name])
    if out.get("allreduce_fusion") is not None and not isinstance(out["allreduce_fusion"], bool):
        out.pop("allreduce_fusion")
    return out


def _from_models(p: Probe, models: Any) -> None:
    """``/v1/models``: the engine from ``owned_by``, the model from the first entry's id."""
    if not isinstance(models, dict):
        return
    data = models.get("data")
    if not isinstance(data, list) or not data or not isinstance(data[0], dict):
        return
    first = data[0]
    owner = first.get("owned_by")
    if isinstance(owner, str) and owner.lower() in OWNED_BY:
        p.set("engine", OWNED_BY[owner.lower()], "/v1/models owned_by")
    if isinstance(first.get("id"), str):
        p.set("served_model", first["id"], "/v1/models")
    if isinstance(first.get("max_model_len"), int):
        p.set("max_model_len", first["max_model_len"], "/v1/models")


def _test_server(p: Probe) -> None:
    """The test server runs no model and no speculation: it replays configured timings."""
    source = f"{TEST_SERVER_HEADER} header"
    p.values["engine"] = TEST_SERVER_ENGINE
    p.sources["engine"] = source
    p.set("model", p.extra.get("served_model"), "/v1/models")
    p.set("speculative_algorithm", None, source)
    p.set("draft_model", None, source)


def introspect(client: httpx.Client, configured: str) -> Introspection:
    """Ask the server at ``client``'s base URL what it is; ``configured`` is the engine the config names."""
    from . import ENGINES

    p = Probe(client)
    models = p.models = p.get("/v1/models")
    _from_models(p, models)
    if p.test_server:
        _test_server(p)
        p.info = {"models": models} if models is not None else None
        return p.result()
    by_name = {cls.name: cls for cls in ENGINES.values()}
    header = (p.server_header or "").lower()
    if p.engine is None and "llama.cpp" in header:
        p.set("engine", "llama.cpp", "Server header")
    for name in dict.fromkeys([configured, p.engine]):
        if name == "vllm":
            _probe_vllm(p)
        elif name is not None and name in by_name:
            by_name[name].probe(p)
    if p.info is None and models is not None:
        p.info = {"models": models}
    if "model" not in p.sources and p.extra.get("served_model") is not None:
        p.set("model", p.extra["served_model"], "/v1/models")
    return p.result()


def _probe_vllm(p: Probe) -> None:
    """vLLM: ``/version`` (``{"version": ...}``); the model and ``max_model_len`` come from ``/v1/models``."""
    body = p.get("/version")
    if isinstance(body, dict) and isinstance(body.get("version"), str):
        p.set("version", body["version"], "/version")
        if p.engine == "vllm":
            p.versions["vllm"] = body["version"]
