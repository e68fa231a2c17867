from __future__ import annotations

from cmp_fixtures import lab_records, level, record

from bench.compare import CONTEXT_FIELDS, context_of, fingerprint, render_context_table_markdown, role_of


def _rec(**overrides: object):
    return record("baseline", [level(1, 100.0)], overrides=dict(overrides))


def test_lab_context_states_what_the_notes_state_and_none_elsewhere() -> None:
    base, eagle = lab_records()
    ctx = context_of(base)
    assert ctx["environment.gpu.count"] == 8
    assert ctx["environment.gpu.architecture"] == "Blackwell"
    assert ctx["environment.cuda_major"] == "13"
    assert ctx["workload.prompt_set"] == "name:coding-agentic (lab notes)"
    assert ctx["environment.features.flashinfer_allreduce_fusion"] is True
    assert ctx["model.name"] is None and ctx["server.tp"] is None
    assert context_of(eagle)["speculative.algorithm"] == "EAGLE3"
    assert fingerprint(base) != fingerprint(eagle)


def test_fingerprint_is_stable_and_short() -> None:
    a, b = _rec(), _rec()
    assert fingerprint(a) == fingerprint(b)
    assert len(fingerprint(a)) == 12 and int(fingerprint(a), 16) >= 0


def test_info_fields_do_not_change_the_fingerprint() -> None:
    base = fingerprint(_rec())
    assert fingerprint(_rec(**{"environment.info": {"hostname": "node-b"}})) == base
    assert fingerprint(_rec(**{"environment.gpu.driver": "999"})) == base
    assert fingerprint(_rec(**{"server.version": "0.5.9"})) == base  # only major.minor splits
    assert fingerprint(_rec(**{"server.args": {"tp": 8, "cuda-graph-max-bs": 2}})) == base
    assert fingerprint(_rec(**{"environment.env_vars": {"NCCL_ALGO": "Ring", "CUDA_VISIBLE_DEVICES": "0"}})) == base


def test_context_fields_change_the_fingerprint() -> None:
    base = fingerprint(_rec())
    for dotted, value in {
        "model.name": "other/model",
        "environment.gpu.count": 4,
        "environment.gpu.model": "NVIDIA H100",
        "server.version": "0.6.0",
        "environment.cuda_runtime": "12.8",
        "environment.env_vars": {"NCCL_ALGO": "Tree"},
        "environment.features": {"flashinfer_allreduce_fusion": False},
        "workload.prompt_set_hash": "cd" * 32,
        "workload.max_tokens": 256,
        "workload.temperature": 0.7,
        "workload.ignore_eos": False,
        "server.args": {"tp": 4, "cuda-graph-max-bs": 256},
        "server.args.enable-torch-compile": True,
    }.items():
        assert fingerprint(_rec(**{dotted: value})) != base, dotted


def test_unstated_model_is_not_the_same_context_as_a_stated_one() -> None:
    assert fingerprint(_rec(**{"model.name": None})) != fingerprint(_rec())


def test_tp_and_dp_spellings_are_one_field() -> None:
    a = _rec(**{"server.args": {"tp": 8}})
    for spelling in ("tp_size", "--tp-size", "tensor-parallel-size", "TP_SIZE"):
        b = _rec(**{"server.args": {spelling: "8"}})
        assert context_of(b)["server.tp"] == 8
        assert fingerprint(a) == fingerprint(b), spelling
    assert context_of(_rec(**{"server.args": {"dp_size": 2}}))["server.dp"] == 2


def test_prompt_set_name_is_used_only_without_a_hash() -> None:
    assert context_of(_rec())["workload.prompt_set"] == "sha256:" + "ab" * 32
    assert context_of(_rec(**{"workload.prompt_set_hash": None}))["workload.prompt_set"] == "name:coding-agentic"


def test_role_of_raw_fields() -> None:
    assert role_of("server.args.--tp_size") == "context"
    assert role_of("server.args.speculative_num_steps") == "context"
    assert role_of("server.args.enable-flashinfer-allreduce-fusion") == "context"
    assert role_of("server.args.mem-fraction-static") == "info"
    assert role_of("environment.env_vars.NCCL_P2P_LEVEL") == "context"
    assert role_of("environment.env_vars.CUDA_VISIBLE_DEVICES") == "info"
    assert role_of("environment.gpu.driver") == "info"
    assert role_of("environment.info.hostname") == "info"
    assert role_of("workload.prompt_set_hash") == "context"
    assert role_of("workload.seed") == "info"


def test_context_table_lists_every_field_once_with_its_role() -> None:
    md = render_context_table_markdown()
    lines = md.strip().splitlines()
    assert lines[0] == "| field | role | read from | meaning |"
    assert len(lines) == 2 + len(CONTEXT_FIELDS)
    for entry, line in zip(CONTEXT_FIELDS, lines[2:], strict=True):
        assert line.startswith(f"| `{entry.name}` | {entry.role} |")
    assert "| `server.tp` | context |" in md and "| `environment.info.*` | info |" in md


def test_prompt_prefix_policy_and_api_split_comparisons() -> None:
    base = fingerprint(_rec(**{"workload.prefix": "unique", "workload.api": "generate"}))
    assert fingerprint(_rec(**{"workload.prefix": "repeated", "workload.api": "generate"})) != base
    assert fingerprint(_rec(**{"workload.prefix": "unique", "workload.api": "chat"})) != base
    assert fingerprint(_rec(**{"workload.prefix": "unique", "workload.api": "generate"})) == base
