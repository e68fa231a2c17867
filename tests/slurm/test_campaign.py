"""Campaign files: variants and tasks from configs or a matrix, and bad input in the project's error shape."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from bench.slurm.campaign import CampaignError, expand, load_campaign

PROJECT = Path(__file__).resolve().parents[2]
CONFIG = """\
experiment: camp
variant: base
engine: testserver
server_args: {itl-ms: 2}
prompt_set: coding-agentic
levels: [1, 2]
"""


def _write(folder: Path, campaign: str, **configs: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in {"base.yaml": CONFIG, **configs}.items():
        (folder / name).write_text(text, encoding="utf-8")
    path = folder / "campaign.yaml"
    path.write_text(textwrap.dedent(campaign), encoding="utf-8")
    return path


def _error(path: Path) -> CampaignError:
    with pytest.raises(CampaignError) as info:
        expand(load_campaign(path), path)
    return info.value


def test_configs_times_repeats_are_numbered_variant_major(tmp_path: Path) -> None:
    other = CONFIG.replace("variant: base", "variant: other").replace("itl-ms: 2", "itl-ms: 7")
    path = _write(
        tmp_path,
        "name: c\nconfigs: [base.yaml, other.yaml]\nrepeats: 3\nset: {max_tokens: 9}\n",
        **{"other.yaml": other},
    )
    variants, tasks = expand(load_campaign(path), path)
    assert [v.config.variant for v in variants] == ["base", "other"]
    assert [(t.index, t.variant.config.variant, t.repeat) for t in tasks] == [
        (0, "base", 0), (1, "base", 1), (2, "base", 2), (3, "other", 0), (4, "other", 1), (5, "other", 2),
    ]  # fmt: skip
    assert all(v.config.max_tokens == 9 for v in variants)  # `set` reaches every config
    assert variants[1].config.server_args["itl-ms"] == 7


def test_matrix_is_the_product_of_its_lists_with_derived_variant_names(tmp_path: Path) -> None:
    path = _write(
        tmp_path, "name: c\nconfig: base.yaml\nmatrix:\n  server_args.itl-ms: [2, 5]\n  max_tokens: [8, 16]\n"
    )
    variants, tasks = expand(load_campaign(path), path)
    got = [(v.config.variant, v.config.server_args["itl-ms"], v.config.max_tokens) for v in variants]
    assert got == [
        ("base-itl-ms-2-max_tokens-8", 2, 8),
        ("base-itl-ms-2-max_tokens-16", 2, 16),
        ("base-itl-ms-5-max_tokens-8", 5, 8),
        ("base-itl-ms-5-max_tokens-16", 5, 16),
    ]
    assert len(tasks) == 4


def test_matrix_rows_name_their_variants(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        """\
        name: c
        config: base.yaml
        repeats: 2
        matrix:
          - {variant: fast, server_args.itl-ms: 1}
          - {variant: slow, server_args.itl-ms: 50}
        """,
    )
    variants, tasks = expand(load_campaign(path), path)
    assert [(v.config.variant, v.config.server_args["itl-ms"]) for v in variants] == [("fast", 1), ("slow", 50)]
    assert [t.variant.config.variant for t in tasks] == ["fast", "fast", "slow", "slow"]


@pytest.mark.parametrize(
    ("campaign", "field", "expected"),
    [
        (
            "name: c\nconfigs: [base.yaml]\nslurm: {partitoin: gpu}\n",
            "slurm.partitoin",
            "Extra inputs are not permitted",
        ),
        ("name: c\nconfigs: [base.yaml]\nconfig: base.yaml\n", "(whole file)", "either 'configs'"),
        ("name: c\nconfigs: [base.yaml]\nmatrix: {max_tokens: [1]}\n", "(whole file)", "'matrix' needs 'config'"),
        ("name: c\nconfigs: [base.yaml]\nslurm: {time: 'two hours'}\n", "slurm.time", "should match pattern"),
        ("name: c\nconfigs: [base.yaml]\nrepeats: 0\n", "repeats", "greater than or equal to 1"),
        ("name: Bad Name\nconfigs: [base.yaml]\n", "name", "should match pattern"),
        ("name: c\nconfigs: [base.yaml]\nslurm: {extra: ['qos=high']}\n", "slurm.extra", "starting with '-'"),
        ("name: c\nconfigs: [base.yaml]\nserver: {command: [srv]}\n", "server.command", "must contain {port}"),
        ("name: c\nconfigs: [base.yaml, nowhere.yaml]\n", "configs[1]", "an existing config file"),
        ("name: c\nconfigs: [base.yaml]\nset: {levels: [0]}\n", "set", "overrides that keep the config valid"),
        (
            "name: c\nconfig: base.yaml\nmatrix: [{max_tokens: 0}]\n",
            "matrix[0]",
            "overrides that keep the config valid",
        ),
        ("name: c\nconfigs: [bad.yaml]\n", "configs[0]", "a valid run config"),
        (
            "name: c\nconfig: base.yaml\nmatrix: [{variant: x, max_tokens: 1}, {variant: x, max_tokens: 2}]\n",
            "matrix[1]",
            "a variant distinct from matrix[0]",
        ),
        ("name: c\nconfigs: [base.yaml\n", "line 3 column 1", "valid YAML"),
    ],
)
def test_bad_campaigns_name_file_field_and_expectation(
    tmp_path: Path, campaign: str, field: str, expected: str
) -> None:
    path = _write(tmp_path, campaign, **{"bad.yaml": CONFIG + "levels: [1, 1]\n"})
    err = _error(path)
    assert err.path == str(path)
    assert err.field == field
    assert expected in err.expected
    assert str(err).startswith(f"{path}: field '{field}': ")


def test_bench_submit_refuses_a_bad_campaign_and_writes_nothing(tmp_path: Path) -> None:
    path = _write(tmp_path, "name: c\nconfigs: [base.yaml]\nrepeats: -1\nresults: out\n")
    env = {**os.environ, "PYTHONPATH": str(PROJECT)}
    done = subprocess.run(
        [sys.executable, "-m", "bench", "submit", str(path)], capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 2
    assert f"error: {path}: field 'repeats': " in done.stderr
    assert not (tmp_path / "out").exists()


def test_dry_run_prints_the_plan_and_scripts_without_a_secret_and_writes_nothing(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        """\
        name: c
        configs: [base.yaml]
        repeats: 2
        results: out
        server:
          command: [srv, --port, "{port}", --api-key, sk-live0123456789abcdefXYZ]
        """,
    )
    env = {**os.environ, "PYTHONPATH": str(PROJECT)}
    done = subprocess.run(
        [sys.executable, "-m", "bench", "submit", str(path), "--dry-run"],
        capture_output=True, text=True, env=env, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "task 1: camp/base repeat 2" in done.stdout and "#SBATCH --array=0-1" in done.stdout
    assert "bench.slurm.attach" in done.stdout and "<redacted>" in done.stdout
    assert "sk-live0123456789abcdefXYZ" not in done.stdout + done.stderr
    assert not (tmp_path / "out").exists()
