"""The versions the engine's own Python sees: a short probe run with its interpreter, parsed here.

The probe reads package versions (and, with torch, its CUDA runtime and NCCL version); it never starts CUDA work.
A fact the probe cannot read is left None: nothing is inferred from names or defaults.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["ENGINE_DISTRIBUTIONS", "ENGINE_PROBE", "parse_engine_probe"]

ENGINE_DISTRIBUTIONS: tuple[str, ...] = (
    "sglang",
    "sgl-kernel",
    "sglang-kernel",  # the kernel's distribution name from sglang 0.5.x (sglang 0.5.17 pins sglang-kernel 0.4.5)
    "sgl-deep-gemm",
    "vllm",
    "flashinfer-python",
    "flashinfer",
    "flashinfer-cubin",
    "flashinfer-jit-cache",
    "torch",
    "triton",
    "transformers",
    "tokenizers",
    "xgrammar",
    "nvidia-nccl-cu12",
    "nvidia-nccl-cu13",
)

ENGINE_PROBE = """
import json, sys
from importlib import metadata
out = {"python": sys.version.split()[0], "versions": {}}
for dist in DISTS:
    try:
        out["versions"][dist] = metadata.version(dist)
    except Exception:
        pass
if "torch" in out["versions"]:
    try:
        import torch
        out["torch_cuda"] = torch.version.cuda
        try:
            v = torch.cuda.nccl.version()
            out["torch_nccl"] = ".".join(str(x) for x in v) if isinstance(v, tuple) else v
        except Exception:
            pass
    except Exception:
        pass
print(json.dumps(out))
""".replace("DISTS", repr(ENGINE_DISTRIBUTIONS))
"""Run with the engine's interpreter; prints one JSON object. Reads versions, never starts CUDA work."""

_VERSION_TEXT = re.compile(r"^[0-9A-Za-z.+\-_]{1,64}$")


def _nccl_from_int(v: int) -> str | None:
    """torch < 1.13 returned NCCL's version as an int: major*1000+minor*100+patch (or *10000 from 2.9)."""
    if v >= 10000:
        return f"{v // 10000}.{v // 100 % 100}.{v % 100}"
    if v >= 1000:
        return f"{v // 1000}.{v // 100 % 10}.{v % 100}"
    return None


def parse_engine_probe(text: str | None) -> tuple[dict[str, str], str | None, str | None, str | None]:
    """``(versions, cuda_runtime, nccl_version, python_version)`` from the probe's JSON; unknowns are None."""
    if not text:
        return {}, None, None, None
    try:
        data = json.loads(text.strip().splitlines()[-1])
    except (json.JSONDecodeError, IndexError):
        return {}, None, None, None
    if not isinstance(data, dict):
        return {}, None, None, None

    def clean(v: Any) -> str | None:
        return v if isinstance(v, str) and _VERSION_TEXT.match(v) else None

    raw_versions = data.get("versions")
    versions: dict[str, str] = {}
    if isinstance(raw_versions, dict):
        for name in ENGINE_DISTRIBUTIONS:
            v = clean(raw_versions.get(name))
            if v is not None:
                versions[name] = v
    cuda = clean(data.get("torch_cuda"))
    nccl_raw = data.get("torch_nccl")
    nccl = _nccl_from_int(nccl_raw) if isinstance(nccl_raw, int) else clean(nccl_raw)
    if nccl is None:  # no torch (or no NCCL in it): the NCCL wheel's own version
        nccl = versions.get("nvidia-nccl-cu13") or versions.get("nvidia-nccl-cu12")
    return versions, cuda, nccl, clean(data.get("python"))
