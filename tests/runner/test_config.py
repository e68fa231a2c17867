"""Config parsing, overrides, validation errors and the --dry-run output."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bench.cli import build_parser
from bench.runner.commands import cli_overrides
from bench.runner.config import DEFAULT_LEVELS, ConfigError, apply_overrides, load_config, parse_set

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "bench" / "configs"

MINIMAL = """
experiment: demo
variant: base
engine: testserver
prompt_set: coding-agentic
"""


def _write(tmp_path: Path, text: str, name: str = "c.yaml") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_defaults(tmp_path: Path) -> None:
    cfg = load_config(_write(tmp_path, MINIMAL))
    assert tuple(cfg.levels) == DEFAULT_LEVELS
    assert cfg.api == "chat"
    assert cfg.temperature == 0.0
    assert cfg.records_dir == "records"
    # 10x with a floor of 10; warm-up 2x capped at max_warmup
    assert cfg.requests_for(1) == 10
    assert cfg.requests_for(250) == 2500
    assert cfg.warmup_for(4) == 8
    assert cfg.warmup_for(250) == 500


def test_multiple_with_minimum_and_cap(tmp_path: Path) -> None:
    cfg = load_config(
        _write(tmp_path, MINIMAL + "requests_per_level: 3x\nmin_requests: 30\nwarmup: 2x\nmax_warmup: 5\n")
    )
    assert cfg.requests_for(1) == 30
    assert cfg.requests_for(64) == 192
    assert cfg.warmup_for(1) == 2
    assert cfg.warmup_for(64) == 5
    fixed = load_config(_write(tmp_path, MINIMAL + "requests_per_level: 7\nwarmup: 0\n"))
    assert fixed.requests_for(128) == 7 and fixed.warmup_for(128) == 0


@pytest.mark.parametrize(
    ("extra", "field", "expected"),
    [
        ("levels: [1, 0]\n", "levels", "concurrency >= 1"),
        ("levels: [2, 2]\n", "levels", "must not repeat"),
        ("requests_per_level: lots\n", "requests_per_level", "'Nx'"),
        ("api: grpc\n", "api", "chat"),
        ("temperatur: 0.5\n", "temperatur", "Extra inputs"),
        ("error_threshold: 2\n", "error_threshold", "less than or equal to 1"),
        ("model: {name: x, size: 3}\n", "model.size", "Extra inputs"),
    ],
)
def test_bad_field_names_file_and_field(tmp_path: Path, extra: str, field: str, expected: str) -> None:
    path = _write(tmp_path, MINIMAL + extra)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert info.value.path == str(path)
    assert info.value.field == field
    assert expected in info.value.expected
    assert str(path) in str(info.value) and field in str(info.value)


def test_missing_field_and_bad_yaml(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(_write(tmp_path, "experiment: demo\nvariant: base\nengine: testserver\n"))
    assert info.value.field == "prompt_set" and "nothing" in info.value.expected
    with pytest.raises(ConfigError) as info:
        load_config(_write(tmp_path, "experiment: [unclosed\n"))
    assert "line" in info.value.field and "valid YAML" in info.value.expected
    with pytest.raises(ConfigError) as info:
        load_config(_write(tmp_path, "- a list\n"))
    assert "mapping" in info.value.expected
    with pytest.raises(ConfigError):
        load_config(tmp_path / "missing.yaml")


def test_set_overrides_nested_and_typed(tmp_path: Path) -> None:
    path = _write(tmp_path, MINIMAL + "server_args: {ttft-ms: 50}\n")
    cfg = load_config(
        path,
        [
            parse_set("server_args.ttft-ms=5"),
            parse_set("model.name=tiny"),
            parse_set("levels=[1, 3]"),
            parse_set("ignore_eos=true"),
            parse_set("server_env.NCCL_DEBUG=INFO"),
        ],
    )
    assert cfg.server_args["ttft-ms"] == 5
    assert cfg.model.name == "tiny"
    assert cfg.levels == [1, 3]
    assert cfg.ignore_eos is True
    assert cfg.server_env == {"NCCL_DEBUG": "INFO"}


def test_bad_set_items() -> None:
    with pytest.raises(ConfigError):
        parse_set("no-equals-sign")
    with pytest.raises(ConfigError):
        parse_set("a..b=1")
    with pytest.raises(ConfigError):
        apply_overrides({"model": "flat"}, [("model.name", "x")])


def test_cli_flags_override_config(tmp_path: Path) -> None:
    path = _write(tmp_path, MINIMAL + "max_tokens: 100\n")
    args = build_parser().parse_args(
        [
            "run",
            str(path),
            "--levels",
            "1,2,4",
            "--requests",
            "3x",
            "--max-tokens",
            "16",
            "--records-dir",
            str(tmp_path / "recs"),
            "--variant",
            "other",
            "--set",
            "max_tokens=7",
            "--url",
            "http://127.0.0.1:1",
        ]
    )
    cfg = load_config(path, cli_overrides(args))
    assert cfg.levels == [1, 2, 4]
    assert cfg.requests_per_level == "3x"
    assert cfg.max_tokens == 16  # the named flag wins over --set
    assert cfg.records_dir == str(tmp_path / "recs")
    assert cfg.variant == "other"
    assert cfg.url == "http://127.0.0.1:1"
    args = build_parser().parse_args(["run", str(path), "--requests", "12"])
    assert load_config(path, cli_overrides(args)).requests_per_level == 12


def test_shipped_configs_validate() -> None:
    paths = sorted(CONFIGS.rglob("*.yaml"))
    names = {p.relative_to(CONFIGS).as_posix() for p in paths}
    assert {
        "eagle-fast-verify/baseline.yaml",
        "eagle-fast-verify/eagle3.yaml",
        "llamacpp-smoke/baseline.yaml",
        "llamacpp-smoke/ngram.yaml",
        "llamacpp-crash/ngram-small-batch.yaml",
    } <= names
    for p in paths:
        cfg = load_config(p)
        assert cfg.experiment == p.parent.name


def _bench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bench", *args], capture_output=True, text=True, cwd=ROOT, timeout=60, check=False
    )


def test_dry_run_eagle3_prints_every_flag() -> None:
    proc = _bench("run", str(CONFIGS / "eagle-fast-verify" / "eagle3.yaml"), "--dry-run")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    command = next(line for line in out.splitlines() if "sglang.launch_server" in line)
    for flag in (
        "-m sglang.launch_server",
        "--model-path meta-llama/Llama-3.1-8B-Instruct",
        "--host 127.0.0.1",
        "--port <free port>",
        "--tp 8",
        "--speculative-algorithm EAGLE3",
        "--speculative-draft-model-path lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B",
        "--speculative-num-steps 5",
        "--speculative-eagle-topk 4",
        "--speculative-num-draft-tokens 16",
        "--enable-flashinfer-allreduce-fusion",
        "--cuda-graph-max-bs 256",
        "--mem-fraction-static 0.85",
    ):
        assert flag in command, flag
    assert "coding-agentic" in out and "hash sha256:" in out
    assert "C=1: 30 requests + 2 warm-up" in out
    assert "C=250: 2500 requests + 500 warm-up" in out
    assert "speculative: EAGLE3 steps=5 topk=4 draft_tokens=16" in out


def test_dry_run_baseline_has_no_speculation_and_overrides_apply() -> None:
    proc = _bench(
        "run", str(CONFIGS / "eagle-fast-verify" / "baseline.yaml"), "--dry-run", "--levels", "1,8", "--requests", "5"
    )
    assert proc.returncode == 0, proc.stderr
    assert "--speculative" not in proc.stdout
    assert "C=1: 5 requests + 2 warm-up" in proc.stdout
    assert "C=8: 5 requests + 16 warm-up" in proc.stdout
    assert "C=2:" not in proc.stdout


def test_bad_config_exits_2_naming_file_and_field(tmp_path: Path) -> None:
    path = _write(tmp_path, MINIMAL + "levels: [1, -4]\n")
    proc = _bench("run", str(path), "--dry-run")
    assert proc.returncode == 2
    assert str(path) in proc.stderr and "levels" in proc.stderr
    proc = _bench("run", str(_write(tmp_path, MINIMAL, "ok.yaml")), "--set", "max_tokens=zero", "--dry-run")
    assert proc.returncode == 2 and "max_tokens" in proc.stderr
    assert not (tmp_path / "records").exists()
