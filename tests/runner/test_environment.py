"""Environment capture: allow-list, redaction, nvidia-smi parsing, engine probe, git state."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bench.record.model import Environment, Level, Metric, ModelRef, Provenance, Record, Server, Status, Workload
from bench.record.store import dump_record
from bench.redact import REDACTED, looks_like_secret, redact_value
from bench.runner.environment import (
    ALLOWED_NAMES,
    ALLOWED_PREFIXES,
    allowed_variables,
    capture_benchbook,
    capture_environment,
    default_run,
    parse_engine_probe,
    parse_nvidia_smi,
    parse_smi_cuda_version,
    parse_topology,
)

# Real output of the capture's query on an H200 node (driver 580), duplicated for a 2-GPU host.
SMI_QUERY_2XH200 = (
    "NVIDIA H200, 580.159.04, 143771, 700.00, 1980, 3201, 1980, 3201, 9.0, 0, 00000000:18:00.0\n"
    "NVIDIA H200, 580.159.04, 143771, 700.00, 1980, 3201, 1980, 3201, 9.0, 1, 00000000:2A:00.0\n"
)
# `nvidia-smi topo -m` on a 2-GPU NVLink node (legend shortened), with the colour codes newer drivers emit.
TOPO_2XH200 = (
    "\t\x1b[4mGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\x1b[0m\n"
    "GPU0\t X \tNV18\t0-47\t0\t\tN/A\n"
    "GPU1\tNV18\t X \t0-47\t0\t\tN/A\n"
    "\n"
    "Legend:\n"
    "\n"
    "  X    = Self\n"
    "  NV#  = Connection traversing a bonded set of # NVLinks\n"
)
SMI_PLAIN = (
    "+-----------------------------------------------------------------------------------------+\n"
    "| NVIDIA-SMI 580.159.04             Driver Version: 580.159.04     CUDA Version: 13.0     |\n"
    "+-----------------------------------------+------------------------+----------------------+\n"
)
PROBE_WITH_TORCH = json.dumps(
    {
        "python": "3.12.3",
        "versions": {"sglang": "0.5.9", "flashinfer-python": "0.5.3", "torch": "2.11.0", "nvidia-nccl-cu13": "2.28.9"},
        "torch_cuda": "13.0",
        "torch_nccl": "2.28.9",
    }
)

PLANTED = {
    "HF_TOKEN": "hf_PlantedHuggingFaceToken0123456789",
    "OPENAI_API_KEY": "sk-planted-openai-key-abcdefghijklmnop0123",
    "AWS_SECRET_ACCESS_KEY": "wJalrPlantedXUtnFEMI/K7MDENG/bPxRfiCYSECRET9",
    "AWS_ACCESS_KEY_ID": "AKIAPLANTEDKEY012345",
    "SGLANG_API_KEY": "plain-looking-admin-value",
    "NCCL_FOO": "hf_AnotherPlantedTokenInsideNccl42",
    "CUDA_MIRROR": "https://builder:hunter2pass@mirror.example.internal/cuda",
    # 48 hex digits: not a sha1/sha256 digest (those are kept: records hold commits and content hashes)
    "FLASHINFER_CACHE_TAG": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822c",
    "SGLANG_DB_PASS": "planted-db-pass",
    "SGLANG_PASSPHRASE": "planted phrase words",
    "SGLANG_COOKIE": "planted=cookie",
    "SGLANG_SESSION": "planted-session-value",
    "SGLANG_BEARER": "planted-bearer-value",
    "GITHUB_TOKEN": "ghp_PlantedGitHubToken0123456789abcd",
    "HOME_SECRET_NOT_ALLOWED": "totally-private-value",
}
# secrets inside ordinary values: the secret goes, the rest of the value stays
PLANTED_INSIDE = {
    "NCCL_NET_PLUGIN": ("/opt/nccl/libnccl-net.so?sv=2024&sig=PlantedSignature0123abcd", "PlantedSignature0123abcd"),
    "NCCL_REDIS": ("redis://:plantedRedisPw@cache.internal:6379/0", "plantedRedisPw"),
}
HARMLESS = {
    "NCCL_DEBUG": "INFO",
    "NCCL_SOCKET_IFNAME": "^docker0,lo",
    "NCCL_IB_HCA": "mlx5_0,mlx5_1",
    "CUDA_VISIBLE_DEVICES": "0,1",
    "CUDA_HOME": "/usr/local/cuda-13.0",
    "SGLANG_ENABLE_JIT_DEEPGEMM": "1",
    "FLASHINFER_WORKSPACE_BASE": "/home/bench/.cache/flashinfer",
    "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True",
    "OMP_NUM_THREADS": "8",
    "TOKENIZERS_PARALLELISM": "false",
    "PATH": "/usr/bin:/bin",
    "USER": "benchuser",
}


def fake_run(smi: str | None = SMI_QUERY_2XH200, probe: str | None = PROBE_WITH_TORCH):
    calls: list[list[str]] = []

    def run(cmd: list[str]) -> str | None:
        calls.append(cmd)
        if cmd[0] == "nvidia-smi":
            if smi is None:
                return None
            if cmd[1:] == ["topo", "-m"]:
                return TOPO_2XH200 if smi is not None else None
            return smi if len(cmd) > 1 else SMI_PLAIN
        if cmd[1:2] == ["-c"]:
            return probe
        raise AssertionError(f"unexpected command {cmd}")

    run.calls = calls  # type: ignore[attr-defined]
    return run


def minimal_record(environment: Environment) -> Record:
    return Record(
        id="20261130T120000Z-test-abcdef1",
        experiment="env-capture",
        variant="test",
        created_at=datetime(2026, 11, 30, 12, 0, tzinfo=UTC),
        provenance=Provenance(kind="measured", tool="benchbook", test_server=True),
        server=Server(engine="test-server"),
        model=ModelRef(),
        environment=environment,
        workload=Workload(prompt_set="coding-agentic"),
        levels=[Level(concurrency=1, output_throughput=Metric(unit="tok/s", formula="output_throughput", value=1.0))],
        status=Status(state="complete"),
    )


# --- secrets -------------------------------------------------------------------------------------------------------


def test_planted_secrets_never_reach_the_record_json() -> None:
    environ = {**PLANTED, **HARMLESS, **{k: v for k, (v, _) in PLANTED_INSIDE.items()}}
    env = capture_environment(environ, engine_python="/opt/engine/bin/python", run=fake_run())
    dumped = dump_record(minimal_record(env))
    for name, (_, secret) in PLANTED_INSIDE.items():
        assert secret not in dumped, f"{name}'s secret leaked"
    for name, value in PLANTED.items():
        assert value not in dumped, f"{name}'s value leaked"
        # not even a fragment of a long secret
        assert value[4:20] not in dumped, f"a fragment of {name}'s value leaked"
    # allow-listed names whose values look secret are kept, redacted; others are not read at all
    assert env.env_vars["SGLANG_API_KEY"] == REDACTED
    assert env.env_vars["NCCL_FOO"] == REDACTED
    assert env.env_vars["CUDA_MIRROR"] == f"https://{REDACTED}@mirror.example.internal/cuda"  # the host is kept
    assert env.env_vars["FLASHINFER_CACHE_TAG"] == REDACTED
    assert env.env_vars["NCCL_NET_PLUGIN"] == f"/opt/nccl/libnccl-net.so?sv=2024&sig={REDACTED}"
    assert env.env_vars["NCCL_REDIS"] == f"redis://{REDACTED}@cache.internal:6379/0"
    for name in ("SGLANG_DB_PASS", "SGLANG_PASSPHRASE", "SGLANG_COOKIE", "SGLANG_SESSION", "SGLANG_BEARER"):
        assert env.env_vars[name] == REDACTED, name
    for name in ("HF_TOKEN", "OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "PATH", "USER"):
        assert name not in env.env_vars
        assert name not in dumped


def test_only_allow_listed_names_are_read() -> None:
    environ = {**PLANTED, **HARMLESS}
    got = allowed_variables(environ)
    for name in got:
        assert name in ALLOWED_NAMES or name.startswith(ALLOWED_PREFIXES)
    # every harmless allow-listed value is kept verbatim
    for name, value in HARMLESS.items():
        if name in ("PATH", "USER"):
            assert name not in got
        else:
            assert got[name] == value, name


@pytest.mark.parametrize(
    ("name", "value", "secret"),
    [
        ("SGLANG_AUTH_HEADER", "short", "short"),
        ("NCCL_PASSWORD", "x", "x"),
        ("CUDA_CREDENTIALS_FILE", "/etc/creds", "/etc/creds"),
        ("SGLANG_SECRET", "1", "1"),
        ("SGLANG_PASSPHRASE", "two words", "two words"),
        ("SGLANG_SESSION_ID", "abc", "abc"),
        ("SGLANG_COOKIE", "a=b", "a=b"),
        ("SGLANG_BEARER", "abc", "abc"),
        ("SGLANG_ADMIN_PASS", "abc", "abc"),
        ("NCCL_X", "hf_abcdefghijklmnopqrst", "hf_abcdefghijklmnopqrst"),
        ("NCCL_X", "sk-proj-abcdefghijklmnop", "sk-proj-abcdefghijklmnop"),
        ("NCCL_X", "sk_live_4eC39HqLyjWDarjtT1zdp7dc", "sk_live_4eC39HqLyjWDarjtT1zdp7dc"),
        ("NCCL_X", "ya29.a0AfH6SMBx-token-value", "ya29.a0AfH6SMBx"),
        ("NCCL_X", "AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
        ("NCCL_X", "ghp_abcdefghijklmnopqrstuvwxyz0123", "ghp_abcdefghijklmnopqrstuvwxyz0123"),
        ("NCCL_X", "xoxb-1234-abcd-efgh", "xoxb-1234-abcd-efgh"),
        ("NCCL_X", "https://user:pass@host.example/path", "user:pass"),
        ("NCCL_X", "redis://:pw1234@host:6379", "pw1234"),
        ("NCCL_X", "/opt/plugin.so?sig=abcdef123&se=1", "abcdef123"),
        ("NCCL_X", "https://h/x?access_token=tok123abc", "tok123abc"),
        ("NCCL_X", "0123456789abcdef0123456789abcdef", "0123456789abcdef0123456789abcdef"),
        ("NCCL_X", "aGVsbG8gd29ybGQgdGhpcyBpcyBhIHNlY3JldA==", "aGVsbG8gd29ybGQgdGhpcyBpcyBhIHNlY3JldA"),
        ("NCCL_X", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
        ("NCCL_X", "opt1,token=Zk3q9XwP2mLr8TvB4nYc7HsJ1dGe", "Zk3q9XwP2mLr8TvB4nYc7HsJ1dGe"),
        ("NCCL_X", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc", "eyJhbGciOiJIUzI1NiJ9"),
    ],
)
def test_secret_names_and_values_are_redacted(name: str, value: str, secret: str) -> None:
    got = allowed_variables({name: value})[name]
    assert secret not in got
    assert REDACTED in got
    assert not looks_like_secret(got)


@pytest.mark.parametrize(
    "value",
    [
        "INFO",
        "^docker0,lo",
        "0,1,2,3,4,5,6,7",
        "expandable_segments:True",
        "/usr/local/cuda-13.0/lib64",
        "/models/Meta-Llama-3.1-8B-Instruct",
        "meta-llama/Meta-Llama-3-8B-Instruct",
        "/opt/conda/envs/sglang/lib/python3.11/site-packages/nvidia/nccl/lib",
        "GPU-2c5e6f3a-1b2c-4d5e-8f90-123456789abc",
        "https://mirror.example.org/cuda",
        "8.0;9.0;10.0+PTX",
    ],
)
def test_ordinary_values_are_kept(value: str) -> None:
    assert not looks_like_secret(value)
    assert redact_value("NCCL_SOMETHING", value) == value


def test_tokenizers_parallelism_is_not_mistaken_for_a_token() -> None:
    assert redact_value("TOKENIZERS_PARALLELISM", "false") == "false"
    assert redact_value("SGLANG_TOKEN", "false") == REDACTED


# --- GPU -----------------------------------------------------------------------------------------------------------


def test_two_h200_lines_are_parsed() -> None:
    gpu = parse_nvidia_smi(SMI_QUERY_2XH200)
    assert gpu.model == "NVIDIA H200"
    assert gpu.count == 2
    assert gpu.driver == "580.159.04"
    assert gpu.memory_mib == 143771
    assert gpu.power_limit_w == 700.0
    assert gpu.architecture == "Hopper"
    assert gpu.clocks == {
        "max_sm_mhz": 1980,
        "max_memory_mhz": 3201,
        "applications_graphics_mhz": 1980,
        "applications_memory_mhz": 3201,
        "compute_capability": "9.0",
    }


def test_every_gpu_is_kept_with_its_own_facts() -> None:
    gpu = parse_nvidia_smi(SMI_QUERY_2XH200)
    assert [d["index"] for d in gpu.devices] == [0, 1]
    assert [d["pci_bus_id"] for d in gpu.devices] == ["00000000:18:00.0", "00000000:2A:00.0"]
    assert gpu.devices[0] == {
        "index": 0,
        "pci_bus_id": "00000000:18:00.0",
        "model": "NVIDIA H200",
        "memory_mib": 143771,
        "power_limit_w": 700.0,
        "compute_capability": "9.0",
        "clocks": {"max_sm_mhz": 1980, "max_memory_mhz": 3201, "applications_graphics_mhz": 1980,
                   "applications_memory_mhz": 3201},
    }  # fmt: skip
    odd = parse_nvidia_smi("NVIDIA H200, 580.1, 143771, [N/A], [N/A], 3201, [N/A], 3201, 9.0, 0, [N/A]\n")
    assert odd.devices == [{"index": 0, "model": "NVIDIA H200", "memory_mib": 143771, "compute_capability": "9.0",
                            "clocks": {"max_memory_mhz": 3201, "applications_memory_mhz": 3201}}]  # fmt: skip


def test_topology_is_the_plain_matrix() -> None:
    topo = parse_topology(TOPO_2XH200)
    assert topo is not None and "\x1b" not in topo
    rows = [line.split("\t") for line in topo.splitlines()]
    assert rows[0][1:3] == ["GPU0", "GPU1"]
    assert rows[1][:3] == ["GPU0", " X ", "NV18"] and rows[2][:3] == ["GPU1", "NV18", " X "]
    assert all(line == line.rstrip() for line in topo.splitlines())
    assert parse_topology(None) is None and parse_topology("No devices were found\n") is None
    # a big node's matrix is cut at a line, and says so
    big = "\t".join(f"GPU{i}" for i in range(64)) + "\n" + "\n".join(f"GPU{i}\t" + "NV18\t" * 64 for i in range(64))
    cut = parse_topology(big, limit=2000)
    assert cut is not None and len(cut) <= 2000 and cut.endswith("more lines]")


def test_capture_uses_nvidia_smi_and_the_engine_probe() -> None:
    run = fake_run()
    env = capture_environment({}, engine_python="/opt/engine/bin/python", run=run, host_info=False)
    assert env.gpu.count == 2 and env.gpu.model == "NVIDIA H200"
    assert len(env.gpu.devices) == 2
    assert env.topology is not None and env.topology.splitlines()[1].startswith("GPU0\t X \tNV18")
    assert env.cuda_runtime == "13.0"
    assert env.nccl_version == "2.28.9"
    assert env.versions == {"sglang": "0.5.9", "flashinfer-python": "0.5.3", "torch": "2.11.0",
                            "nvidia-nccl-cu13": "2.28.9"}  # fmt: skip
    assert env.info == {"driver_cuda_version": "13.0", "engine_python": "3.12.3"}
    assert env.features == {}
    probe_calls = [c for c in run.calls if c[0] == "/opt/engine/bin/python"]  # type: ignore[attr-defined]
    assert len(probe_calls) == 1 and probe_calls[0][1] == "-c"


def test_without_an_engine_interpreter_nothing_is_probed() -> None:
    run = fake_run()
    env = capture_environment({}, run=run, host_info=False)
    assert all(c[0] == "nvidia-smi" for c in run.calls)  # type: ignore[attr-defined]
    assert env.versions == {} and env.cuda_runtime is None and env.nccl_version is None
    assert env.gpu.count == 2


def test_missing_nvidia_smi_and_engine_leave_fields_none() -> None:
    env = capture_environment({"NCCL_DEBUG": "WARN"}, engine_python="python3", run=fake_run(smi=None, probe=None))
    assert env.gpu.model is None and env.gpu.count is None and env.gpu.driver is None
    assert env.gpu.power_limit_w is None and env.gpu.memory_mib is None and env.gpu.clocks == {}
    assert env.gpu.devices == [] and env.topology is None
    assert env.cuda_runtime is None and env.nccl_version is None and env.versions == {}
    assert "driver_cuda_version" not in env.info
    assert env.env_vars == {"NCCL_DEBUG": "WARN"}
    # host facts are still there, as info
    assert env.info["python"] and env.info["cpu_count"] >= 1


def test_default_run_reports_missing_and_failing_commands_as_none() -> None:
    assert default_run(["/nonexistent/nvidia-smi-for-test"]) is None
    assert default_run(["false"]) is None
    assert default_run(["echo", "hi"]) == "hi\n"


def test_odd_nvidia_smi_values() -> None:
    text = "NVIDIA H200, 580.1, 143771, [N/A], [N/A], 3201, [Not Supported], 3201, 9.0, 0, [N/A]\n"
    gpu = parse_nvidia_smi(text)
    assert gpu.power_limit_w is None
    assert "max_sm_mhz" not in gpu.clocks and gpu.clocks["max_memory_mhz"] == 3201
    # output of another shape is not misread
    assert parse_nvidia_smi("NVIDIA H200, 580.1\n") == parse_nvidia_smi(None)
    # mixed GPUs: no single model, driver kept when equal, per-GPU figures None when they differ
    mixed = parse_nvidia_smi(
        "NVIDIA H200, 580.1, 143771, 700.00, 1980, 3201, 1980, 3201, 9.0, 0, 00000000:18:00.0\n"
        "NVIDIA H100 80GB HBM3, 580.1, 81559, 500.00, 1980, 2619, 1755, 2619, 9.0, 1, 00000000:2A:00.0\n"
    )
    assert mixed.count == 2 and mixed.driver == "580.1" and mixed.memory_mib is None
    assert mixed.power_limit_w is None  # they differ: no single value at the top
    # ... and each GPU keeps its own
    assert [(d["index"], d["model"], d["memory_mib"], d["power_limit_w"]) for d in mixed.devices] == [
        (0, "NVIDIA H200", 143771, 700.0),
        (1, "NVIDIA H100 80GB HBM3", 81559, 500.0),
    ]
    assert mixed.devices[1]["clocks"]["applications_graphics_mhz"] == 1755
    assert mixed.model == "NVIDIA H200×1 + NVIDIA H100 80GB HBM3×1"
    assert parse_smi_cuda_version(SMI_PLAIN) == "13.0"
    assert parse_smi_cuda_version("no header") is None


# --- engine probe ---------------------------------------------------------------------------------------------------


def test_probe_without_torch_takes_nccl_from_the_wheel_and_leaves_cuda_none() -> None:
    versions, cuda, nccl, py = parse_engine_probe(
        json.dumps({"python": "3.11.9", "versions": {"nvidia-nccl-cu12": "2.21.5", "sglang": "0.4.0"}})
    )
    assert cuda is None and nccl == "2.21.5" and py == "3.11.9"
    assert versions == {"sglang": "0.4.0", "nvidia-nccl-cu12": "2.21.5"}


@pytest.mark.parametrize("text", [None, "", "not json", "[1, 2]", '{"versions": "x"}'])
def test_probe_garbage_gives_nothing(text: str | None) -> None:
    assert parse_engine_probe(text) == ({}, None, None, None)


def test_probe_old_integer_nccl_version_and_noise_before_the_json() -> None:
    text = "some warning on stdout\n" + json.dumps({"versions": {"torch": "1.12.0"}, "torch_nccl": 21005})
    assert parse_engine_probe(text)[2] == "2.10.5"


def test_probe_script_runs_in_a_real_interpreter() -> None:
    # our own interpreter: prints one JSON object; torch is absent here, so no CUDA runtime is claimed
    import sys

    from bench.runner.environment import ENGINE_PROBE

    out = subprocess.run([sys.executable, "-c", ENGINE_PROBE], capture_output=True, text=True, check=True).stdout
    versions, cuda, _nccl, py = parse_engine_probe(out)
    assert py == f"{sys.version_info.major}.{sys.version_info.minor}.{sys.version_info.micro}"
    if "torch" not in versions:
        assert cuda is None


# --- the measured checkout ----------------------------------------------------------------------------------------


def test_benchbook_names_this_checkouts_commit(monkeypatch: pytest.MonkeyPatch) -> None:
    """By default the commit of the checkout the harness runs from (bench.git reads it; tests/git has the cases)."""
    monkeypatch.delenv("BENCHBOOK_COMMIT", raising=False)
    root = Path(__file__).resolve().parents[2]
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True)
    got = capture_benchbook()
    assert got.commit == head.stdout.strip() and got.dirty is not None and got.version


def test_no_git_folder_gives_none(tmp_path: Path) -> None:
    got = capture_benchbook(tmp_path)
    assert got.commit is None and got.dirty is None and got.version
    assert capture_benchbook(tmp_path / "missing").commit is None


def test_commit_shipped_with_a_copied_tree_is_used_when_there_is_no_git(monkeypatch: pytest.MonkeyPatch) -> None:
    sha = "0123456789abcdef0123456789abcdef01234567"
    monkeypatch.setenv("BENCHBOOK_COMMIT", sha)
    monkeypatch.setenv("BENCHBOOK_DIRTY", "false")
    got = capture_benchbook()
    assert got.commit == sha and got.dirty is False
    monkeypatch.setenv("BENCHBOOK_COMMIT", "not-a-sha")
    assert capture_benchbook().commit != "not-a-sha"


def test_a_server_on_another_host_gets_no_gpu_facts_from_this_one() -> None:
    """Attached to a server elsewhere, this host's GPUs are not the server's: nothing from nvidia-smi is kept
    (and nvidia-smi is not even asked)."""
    run = fake_run()
    env = capture_environment({}, run=run, host_info=False, gpus=False)
    assert env.gpu.count is None and env.gpu.model is None and env.gpu.devices == [] and env.topology is None
    assert not [c for c in run.calls if c[0] == "nvidia-smi"]  # type: ignore[attr-defined]
    here = capture_environment({}, run=fake_run(), host_info=False)
    assert here.gpu.count == 2 and len(here.gpu.devices) == 2 and here.topology is not None
