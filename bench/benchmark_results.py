"""The result files of benchbook's own benchmark scripts (``benchmarks/``), defined once: which file holds which
kind of result, its format version, the containers its readers rely on, how a script writes one and how a reader
checks one (pure but for :func:`save_result`).

A script writes its result with :func:`save_result`, which checks it first (a script that drifts from its format
fails there, not on the site), and the Performance page (``bench.site._performance``) reads each file with
:func:`result_error`: a file of another kind, of a format version this benchbook does not read, or not in its
format's shape is named with the field and what was expected, in its place on the page. ``benchmarks/README.md``
describes the fields; a field may be added to a format, none renamed or removed without raising its version.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.atomic_write import write_atomic
from bench.redact import redact_text

__all__ = [
    "CLIENTS",
    "CLIENT_SCALING",
    "COLD_FLOOR",
    "RESULT_FILES",
    "SITE_BUILD",
    "ResultFormat",
    "result_error",
    "result_head",
    "save_result",
]


@dataclass(frozen=True)
class ResultFormat:
    """One kind of result file: its ``kind`` and ``version`` (the first two fields of every file), the script that
    writes it, and its shape: the containers its readers read, as nested Python values (a dict names its keys, each
    of which may be absent or null, ``"*"`` standing for every key; a one-item list is a list of such items;
    ``dict`` is any object). Values that are not containers are not constrained: a reader shows a number or text,
    and anything else as missing."""

    kind: str
    version: int
    script: str
    shape: Mapping[str, Any]


_ROW = {"phases": dict, "phases_cpu": dict, "lag_ms": dict}
SITE_BUILD = ResultFormat(
    "benchbook-site-build", 1, "benchmarks/site_build.py", {"machine": dict, "settings": dict, "rows": [_ROW]}
)
COLD_FLOOR = ResultFormat(
    "benchbook-cold-floor", 1, "benchmarks/cold_floor.py", {"machine": dict, "goals": dict, "rows": [dict]}
)
CLIENTS = ResultFormat(
    "benchbook-clients-side-by-side",
    1,
    "benchmarks/clients.py",
    {"machine": dict, "settings": dict, "clients": dict, "skipped": dict, "summary": [dict], "runs": [dict]},
)
CLIENT_SCALING = ResultFormat(
    "benchbook-client-scaling",
    1,
    "benchmarks/client_scaling.py",
    {"machine": dict, "settings": dict, "rows": [_ROW], "half_ceiling": _ROW, "goals": {"*": dict}},
)

RESULT_FILES: dict[str, ResultFormat] = {
    "site-build-before.json": SITE_BUILD,  # the same script's run before the site was optimized
    "site-build.json": SITE_BUILD,
    "cold-floor.json": COLD_FLOOR,
    "clients.json": CLIENTS,
    "client-scaling.json": CLIENT_SCALING,
    "client-scaling-h200.json": CLIENT_SCALING,  # benchmarks/h200_client_scaling.sh on the H200 host
}
"""The files under ``benchmarks/results/`` that the Performance page reads, in its order, each with its format."""

_JSON_NAMES = {dict: "an object", list: "a list", str: "text", bool: "true or false", type(None): "null"}


def _json_name(value: Any) -> str:
    return _JSON_NAMES.get(type(value), "a number")


def result_head(fmt: ResultFormat) -> dict[str, Any]:
    """The fields every result file of ``fmt`` begins with: its ``kind`` and ``version``."""
    return {"kind": fmt.kind, "version": fmt.version}


def _shape_error(value: Any, shape: Any, where: str) -> str | None:
    """The first place where ``value`` is not of ``shape`` (``field 'rows[2]': a JSON object (got a list)``)."""
    field = f"field '{where}'" if where else "the whole file"
    want = list if isinstance(shape, list) else dict
    if not isinstance(value, want):
        return f"{field}: a JSON {'list' if want is list else 'object'} (got {_json_name(value)})"
    if isinstance(shape, list):
        for i, item in enumerate(value):
            if (error := _shape_error(item, shape[0], f"{where}[{i}]")) is not None:
                return error
    elif isinstance(shape, Mapping) and isinstance(value, dict):
        for key, inner in value.items():
            sub = shape.get("*", shape.get(key))
            if sub is None or inner is None:
                continue
            if (error := _shape_error(inner, sub, f"{where}.{key}" if where else str(key))) is not None:
                return error
    return None


def result_error(value: Any, fmt: ResultFormat) -> str | None:
    """Why ``value`` (a parsed result file) is not a result of ``fmt`` that this benchbook reads: the field and what
    was expected (``field 'version': 1, the format version this benchbook reads (got 2)``); None when it is one."""
    if not isinstance(value, dict):
        return f"the whole file: a JSON object (got {_json_name(value)})"
    kind = value.get("kind")
    if kind != fmt.kind:
        got = json.dumps(kind, ensure_ascii=False) if isinstance(kind, str) else _json_name(kind)
        got = "missing" if "kind" not in value else got
        return f"field 'kind': \"{fmt.kind}\", what {fmt.script} writes (got {got})"
    version = value.get("version")
    if type(version) is not int or version != fmt.version:
        got = str(version) if type(version) is int else "missing" if "version" not in value else _json_name(version)
        newer = " (a newer format: update benchbook)" if type(version) is int and version > fmt.version else ""
        return f"field 'version': {fmt.version}, the format version this benchbook reads (got {got}){newer}"
    return _shape_error(value, fmt.shape, "")


def save_result(path: Path, fmt: ResultFormat, result: Mapping[str, Any]) -> None:
    """Write ``result`` (a result of ``fmt``, which :func:`result_head` begins) to ``path`` as JSON, atomically: the
    whole new file or the old one. A result that is not of its format is a bug of the script: ``ValueError``, and
    nothing written."""
    error = result_error(dict(result), fmt)
    if error is not None:
        raise ValueError(redact_text(f"{path}: not a {fmt.kind} result, as {fmt.script} should write it: {error}"))
    write_atomic(path, json.dumps(result, indent=2) + "\n")
