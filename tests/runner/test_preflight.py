"""Checks before anything is launched: the records folder, the URL, the open-file limit."""

from __future__ import annotations

import resource
from pathlib import Path

import pytest

from bench.runner._preflight import check_records_dir, check_tensor_parallel, ensure_fd_limit
from bench.runner.config import ConfigError, url_problem


def test_records_dir_must_be_a_writable_folder(tmp_path: Path) -> None:
    check_records_dir(str(tmp_path), "cfg.yaml")
    check_records_dir(str(tmp_path / "new" / "deeper"), "cfg.yaml")
    assert list(tmp_path.iterdir()) == []  # the probe leaves nothing, creates no folder
    (tmp_path / "file").write_text("x")
    with pytest.raises(ConfigError) as err:
        check_records_dir(str(tmp_path / "file"), "--records-dir")
    assert str(err.value) == f"--records-dir: field 'records_dir': a folder for records; {tmp_path / 'file'} is a file"
    with pytest.raises(ConfigError) as err:
        check_records_dir(str(tmp_path / "file" / "sub"), "cfg.yaml")
    assert str(err.value).endswith(f"{tmp_path / 'file' / 'sub'} is under {tmp_path / 'file'}, which is not a folder")
    with pytest.raises(ConfigError) as err:
        check_records_dir("/proc/nope", "cfg.yaml")
    assert str(err.value).startswith("cfg.yaml: field 'records_dir': a writable folder; /proc/nope: ")


@pytest.mark.parametrize(
    ("url", "ok"),
    [
        ("http://127.0.0.1:30000", True),
        ("https://gpu-node.example/v1", True),
        ("http://[::1]:8000", True),
        ("not-a-url", False),
        ("ftp://127.0.0.1:21", False),
        ("http://127.0.0.1:99999", False),
        ("http://127.0.0.1:0", False),
        ("http://:8000", False),
        ("127.0.0.1:8000", False),
    ],
)
def test_url_problem(url: str, ok: bool) -> None:
    problem = url_problem(url)
    assert (problem is None) == ok, problem
    if problem is not None:
        assert url not in problem  # never repeated: a URL may carry a password


def test_fd_limit_is_raised_or_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    limits = {"now": (1024, 4096)}

    def setrlimit(_: int, value: tuple[int, int]) -> None:
        if value[0] > value[1] != resource.RLIM_INFINITY:
            raise ValueError("not allowed to raise maximum limit")
        limits["now"] = value

    monkeypatch.setattr(resource, "getrlimit", lambda _: limits["now"])
    monkeypatch.setattr(resource, "setrlimit", setrlimit)
    assert ensure_fd_limit(512) is None and limits["now"] == (1024, 4096)  # 512 + 256 fit: untouched
    limits["now"] = (256, 4096)
    assert ensure_fd_limit(512) == "open-file limit raised from 256 to 768 for concurrency 512"
    assert limits["now"] == (768, 4096)
    limits["now"] = (256, resource.RLIM_INFINITY)
    assert ensure_fd_limit(1000) is not None and limits["now"] == (1256, resource.RLIM_INFINITY)
    limits["now"] = (256, 700)
    with pytest.raises(ConfigError) as err:
        ensure_fd_limit(512)
    assert str(err.value) == (
        "RLIMIT_NOFILE: field 'levels': concurrency 512 needs 768 open files (512 sockets + 256), but the open-file "
        "limit is 256 (hard limit 700, which this process cannot raise): raise it (e.g. 'ulimit -n 768' as allowed "
        "by the system) or lower the levels"
    )
    assert limits["now"] == (256, 700)


def _model(tmp_path: Path, heads: int, kv: int) -> str:
    (tmp_path / "config.json").write_text(f'{{"num_attention_heads": {heads}, "num_key_value_heads": {kv}}}')
    return str(tmp_path)


def test_tensor_parallel_the_model_cannot_take_is_refused_before_launch(tmp_path: Path) -> None:
    """SmolLM2-135M has 9 attention heads and 3 key/value heads: tp 2 and tp 8 cannot split it (SGLang would
    fail only after the GPU machine has started and loaded it); tp 3 can, and so can tp 2 for 32/8 heads."""
    smol = _model(tmp_path, 9, 3)
    for args in ({"tp-size": 2}, {"tp": 8}, {"tp_size": 2}, {"--tensor-parallel-size": 2}):
        with pytest.raises(ConfigError) as err:
            check_tensor_parallel(args, smol, "cfg.yaml")
        text = str(err.value)
        assert text.startswith("cfg.yaml: field 'server_args.tp-size'") and "9 attention heads" in text
    check_tensor_parallel({"tp-size": 3}, smol, "cfg.yaml")  # 9/3 and 3/3
    check_tensor_parallel({"tp-size": 1}, smol, "cfg.yaml")
    check_tensor_parallel({}, smol, "cfg.yaml")


def test_tensor_parallel_key_value_heads(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    check_tensor_parallel({"tp-size": 8}, _model(tmp_path / "a", 32, 8), "c")  # 8 kv heads over 8 GPUs
    check_tensor_parallel({"tp-size": 8}, _model(tmp_path / "b", 32, 4), "c")  # 4 kv heads replicated over 8
    (tmp_path / "c").mkdir()
    with pytest.raises(ConfigError, match="6 key/value heads"):
        check_tensor_parallel({"tp-size": 4}, _model(tmp_path / "c", 24, 6), "c")  # 6 % 4 and 4 % 6 both non-zero


def test_tensor_parallel_unknown_model_says_nothing(tmp_path: Path) -> None:
    check_tensor_parallel({"tp-size": 2}, "meta-llama/Llama-3.1-8B-Instruct", "c")  # a hub id: no config here
    check_tensor_parallel({"tp-size": 2}, None, "c")
    (tmp_path / "config.json").write_text("not json")
    check_tensor_parallel({"tp-size": 2}, str(tmp_path), "c")
