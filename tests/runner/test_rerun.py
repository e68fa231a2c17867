"""A record is a recipe: ``bench run`` stores the resolved config and the overrides, ``bench rerun RECORD_ID``
measures the same configuration again (end to end against the launched test server)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench.record.load import load_record
from bench.record.model import Record

ROOT = Path(__file__).resolve().parents[2]
PROMPTS = """{"name": "tiny", "description": "test prompts", "license": "CC0-1.0", "source": "tests"}
{"id": "a", "messages": [{"role": "user", "content": "Write a function that adds two numbers."}]}
{"id": "b", "messages": [{"role": "user", "content": "Name a sort."}]}
"""


def _bench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bench", *args], capture_output=True, text=True, cwd=ROOT, timeout=120, check=False
    )


def _config(tmp_path: Path, **extra: Any) -> Path:
    (tmp_path / "prompts.jsonl").write_text(PROMPTS, encoding="utf-8")
    data: dict[str, Any] = {
        "experiment": "rerun-test",
        "variant": "synthetic",
        "engine": "testserver",
        "server_args": {"ttft-ms": 3, "itl-ms": 1, "tokens-per-chunk": 2, "output-tokens": 10},
        "prompt_set": str(tmp_path / "prompts.jsonl"),
        "levels": [1, 2],
        "requests_per_level": "2x",
        "min_requests": 3,
        "warmup": 1,
        "max_tokens": 16,
        "seed": 3,
        **extra,
    }
    path = tmp_path / "run.yaml"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _records(root: Path) -> dict[str, Record]:
    return {r.id: r for r in (load_record(p).record for p in root.rglob("*.json"))}


def test_record_keeps_its_recipe_and_rerun_measures_it_again(tmp_path: Path) -> None:
    records = tmp_path / "records"
    cfg = _config(tmp_path, server_env={"HF_TOKEN": "hf_PlantedRerunToken0123456789"})
    first = _bench("run", str(cfg), "--records-dir", str(records), "--set", "max_tokens=12", "--log-dir",
                   str(tmp_path / "logs"), "--set", "server_env.HF_TOKEN=hf_PlantedRerunToken0123456789")  # fmt: skip
    assert first.returncode == 0, first.stdout + first.stderr
    (original,) = _records(records).values()
    recipe = original.recipe
    assert recipe is not None and recipe.rerun_of is None
    assert recipe.config["max_tokens"] == 12 and recipe.config["levels"] == [1, 2]
    assert "max_tokens=12" in recipe.overrides and f"records_dir={records}" in recipe.overrides
    assert recipe.command is not None and recipe.command.startswith(f"bench run {cfg} --set max_tokens=12")
    text = next(records.rglob("*.json")).read_text(encoding="utf-8")
    assert "hf_PlantedRerunToken0123456789" not in text  # the recipe is redacted too
    assert recipe.config["server_env"]["HF_TOKEN"] == "<redacted>"

    # a redacted secret must be given again
    refused = _bench("rerun", original.id, "--records-dir", str(records))
    assert refused.returncode == 2
    assert (
        "field 'recipe.config.server_env.HF_TOKEN'" in refused.stderr and "--set server_env.HF_TOKEN=" in refused.stderr
    )

    again = _bench("rerun", original.id[:20], "--records-dir", str(records), "--log-dir", str(tmp_path / "logs"),
                   "--set", "server_env.HF_TOKEN=hf_PlantedRerunToken0123456789")  # fmt: skip
    assert again.returncode == 0, again.stdout + again.stderr
    rerun = next(r for i, r in _records(records).items() if i != original.id)
    assert rerun.recipe is not None and rerun.recipe.rerun_of == original.id
    assert rerun.recipe.command == f"bench rerun {original.id} --set 'server_env.HF_TOKEN=<redacted>'"
    assert rerun.workload.prompt_set_hash == original.workload.prompt_set_hash
    assert rerun.workload.planned_levels == [1, 2] and rerun.workload.max_tokens == 12
    for a, b in zip(original.levels, rerun.levels, strict=True):
        assert (a.concurrency, a.requests_sent, a.warmup_requests) == (
            b.concurrency,
            b.requests_sent,
            b.warmup_requests,
        )
    assert rerun.run_group != original.run_group  # a new measurement, not pooled as a repeat of the old one


def test_rerun_refuses_changed_prompts_and_another_plan(tmp_path: Path) -> None:
    records = tmp_path / "records"
    first = _bench("run", str(_config(tmp_path)), "--records-dir", str(records), "--levels", "1")
    assert first.returncode == 0, first.stdout + first.stderr
    (original,) = _records(records).values()
    plan = _bench("rerun", original.id, "--records-dir", str(records), "--set", "levels=[1,2,4]")
    assert plan.returncode == 2 and "--set: field 'levels'" in plan.stderr
    (tmp_path / "prompts.jsonl").write_text(PROMPTS.replace("Name a sort.", "Name a search."), encoding="utf-8")
    changed = _bench("rerun", original.id, "--records-dir", str(records))
    assert changed.returncode == 2
    assert f"prompt set '{tmp_path / 'prompts.jsonl'}': field 'content hash'" in changed.stderr
    assert original.workload.prompt_set_hash is not None and original.workload.prompt_set_hash in changed.stderr
    missing = _bench("rerun", "20990101T000000Z-nope-0000000", "--records-dir", str(records))
    assert missing.returncode == 2 and "no such id" in missing.stderr
    assert len(_records(records)) == 1  # nothing was written by the refused reruns
