"""Weights on this host: a converted model folder and a trained draft head carry their sha256 and provenance
into the record, for launched runs and for attached servers on this host only."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from bench.record.model import ModelRef
from bench.runner._attach import _fingerprinted
from bench.runner.engines.modelfile import local_weights


def _folder(tmp_path: Path, name: str, meta_name: str, meta: dict[str, object]) -> tuple[Path, str]:
    folder = tmp_path / name
    folder.mkdir()
    weights = b"not really safetensors, but bytes with a digest"
    (folder / "model.safetensors").write_bytes(weights)
    (folder / meta_name).write_text(json.dumps(meta), encoding="utf-8")
    return folder, hashlib.sha256(weights).hexdigest()


def test_a_converted_model_folder_gives_its_weights_digest_and_conversion(tmp_path: Path) -> None:
    folder, digest = _folder(tmp_path, "smol", "conversion.json", {"source_sha256": "b179", "transformers": "5.12.1"})
    assert local_weights(folder) == {
        "sha256": digest,
        "conversion": {"source_sha256": "b179", "transformers": "5.12.1"},
    }


def test_a_trained_head_gives_its_training_facts_flattened(tmp_path: Path) -> None:
    meta = {"head_sha256": "2db7", "prompt_sets": {"coding-agentic": "sha256:78c0"}, "steps": 886}
    folder, digest = _folder(tmp_path, "head", "train.json", meta)
    found = local_weights(folder)
    assert found["sha256"] == digest
    assert found["conversion"] == {"head_sha256": "2db7", "prompt_sets.coding-agentic": "sha256:78c0", "steps": "886"}


def test_sharded_or_missing_weights_give_no_digest(tmp_path: Path) -> None:
    sharded = tmp_path / "big"
    sharded.mkdir()
    for i in (1, 2):
        (sharded / f"model-0000{i}-of-00002.safetensors").write_bytes(b"x")
    assert local_weights(sharded) == {}
    assert local_weights(tmp_path / "nowhere") == {}


def test_only_this_hosts_servers_are_fingerprinted(tmp_path: Path) -> None:
    folder, digest = _folder(tmp_path, "smol", "conversion.json", {"transformers": "5.12.1"})
    ref = ModelRef(name="SmolLM2", path=str(folder))
    assert _fingerprinted(ref, launched=False, url="http://127.0.0.1:30000").sha256 == digest
    assert _fingerprinted(ref, launched=True, url="http://10.0.0.7:30000").sha256 == digest
    assert _fingerprinted(ref, launched=False, url="http://10.0.0.7:30000").sha256 is None  # another host's file
    stated = ref.model_copy(update={"sha256": "f" * 64})
    assert _fingerprinted(stated, launched=True, url="http://127.0.0.1:1").sha256 == "f" * 64
