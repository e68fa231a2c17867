"""The workload's prefix option (unique markers vs prompts as written) and the cache policy it records."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bench.record.load import load_record
from bench.runner._workload import cache_policy, prefix_marker, with_marker
from bench.runner.config import load_config
from bench.runner.prompts import load_prompt_set
from bench.runner.sweep import make_specs

ROOT = Path(__file__).resolve().parents[2]
PROMPTS = """{"name": "tiny", "description": "test prompts", "license": "CC0-1.0", "source": "tests"}
{"id": "a", "messages": [{"role": "user", "content": "Write a function that adds two numbers."}]}
{"id": "b", "messages": [{"role": "system", "content": "Be terse."}, {"role": "user", "content": "Name a sort."}]}
"""
MARKER = re.compile(r"^[0-9a-f]{8}: ")


def _config(tmp_path: Path, **extra: Any) -> Path:
    (tmp_path / "prompts.jsonl").write_text(PROMPTS, encoding="utf-8")
    data: dict[str, Any] = {
        "experiment": "prefix-test",
        "variant": "synthetic",
        "engine": "testserver",
        "server_args": {"ttft-ms": 2, "itl-ms": 1, "output-tokens": 3, "prefix-cache": True},
        "prompt_set": str(tmp_path / "prompts.jsonl"),
        "api": "generate",
        "levels": [1, 2],
        "requests_per_level": 4,
        "warmup": "1x",
        "max_tokens": 8,
        "records_dir": str(tmp_path / "records"),
    }
    data.update(extra)
    path = tmp_path / "run.yaml"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_markers_differ_per_request_and_per_run() -> None:
    markers = {prefix_marker("run-a", i) for i in range(5000)} | {prefix_marker("run-b", i) for i in range(5000)}
    assert len(markers) == 10_000 and all(MARKER.match(m) and len(m) == 10 for m in markers)
    assert prefix_marker("run-a", 7) == prefix_marker("run-a", 7)  # reproducible from the record id


def test_marker_opens_the_text_or_the_first_message() -> None:
    assert with_marker("Be terse.", "m: ") == "m: Be terse."
    chat = [{"role": "system", "content": "Be terse."}, {"role": "user", "content": "Name a sort."}]
    marked = with_marker(chat, "m: ")
    assert marked == [{"role": "system", "content": "m: Be terse."}, {"role": "user", "content": "Name a sort."}]
    assert chat[0]["content"] == "Be terse."  # the prompt set's messages are not modified


@pytest.mark.parametrize("api", ["chat", "completions"])
def test_unique_is_the_default_and_changes_only_the_start(tmp_path: Path, api: str) -> None:
    cfg = load_config(_config(tmp_path, api=api))
    assert cfg.prefix == "unique"
    ps = load_prompt_set(cfg.prompt_set)
    specs = make_specs(ps, 6, cfg, offset=3, nonce="rec-1")
    plain = make_specs(ps, 6, cfg.model_copy(update={"prefix": "repeated"}), offset=3, nonce="rec-1")
    for i, (s, p) in enumerate(zip(specs, plain, strict=True)):
        marker = prefix_marker("rec-1", 3 + i)
        if api == "chat":
            assert isinstance(s.prompt, list) and isinstance(p.prompt, list)
            assert s.prompt[0]["content"] == marker + p.prompt[0]["content"] and s.prompt[1:] == p.prompt[1:]
        else:
            assert s.prompt == marker + str(p.prompt)
    assert len({json.dumps(s.prompt) for s in specs}) == 6 and len({json.dumps(p.prompt) for p in plain}) == 2


def test_cache_policy_in_words() -> None:
    assert cache_policy("sglang", {}, {"disable_radix_cache": False}) == (
        "SGLang radix cache on (reported: server_info disable_radix_cache=False)"
    )
    assert "off (reported" in cache_policy("sglang", {}, {"disable_radix_cache": True})
    assert "off (--disable-radix-cache; not confirmed" in cache_policy("sglang", {"disable-radix-cache": True}, None)
    assert "on: the default" in cache_policy("sglang", {}, None)
    assert "--cache-reuse 256" in cache_policy("llama.cpp", {"cache-reuse": 256}, None)
    assert cache_policy("benchbook-testserver", {}, None) == "test server: no prefix cache"
    assert "not known" in cache_policy("openai", {}, None)


def _run(tmp_path: Path, prefix: str) -> Any:
    tmp_path.mkdir()
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "run", str(_config(tmp_path, prefix=prefix)), "--log-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (path,) = sorted((tmp_path / "records").rglob("*.json"))
    return load_record(path).record


def test_repeated_prompts_hit_the_cache_unique_ones_do_not(tmp_path: Path) -> None:
    """Through `bench run` against the test server's simulated prefix cache (a prompt's cached tokens are the
    words it shares with the start of an earlier prompt, all but its last). /generate text of prompt a: 9 words
    ("User: Write a function that adds two numbers. Assistant:"), of b: 7. The plan sends a (warm-up), then
    b a b a at C=1; b a (warm-up), then b a b a at C=2."""
    repeated = _run(tmp_path / "repeated", "repeated")
    assert repeated.workload.prefix == "repeated"
    assert repeated.workload.cache_policy == "test server: simulated prefix cache (--prefix-cache)"
    first, second = (lv.prefix_cache for lv in repeated.levels)
    assert first is not None and second is not None
    assert (first.cached_tokens, first.input_tokens, first.requests) == (0 + 8 + 6 + 8, 7 + 9 + 7 + 9, 4)
    assert first.hit_share == 22 / 32 and first.source.startswith("meta_info.cached_tokens")
    assert (second.cached_tokens, second.input_tokens, second.hit_share) == (6 + 8 + 6 + 8, 32, 28 / 32)
    assert repeated.levels[0].samples is not None and repeated.levels[0].samples.cached_tokens == [0, 8, 6, 8]

    unique = _run(tmp_path / "unique", "unique")
    assert unique.workload.prefix == "unique"
    for lv in unique.levels:  # the marker adds one word; no request shares another's first word
        assert lv.prefix_cache is not None
        assert (lv.prefix_cache.cached_tokens, lv.prefix_cache.input_tokens, lv.prefix_cache.hit_share) == (0, 36, 0)
