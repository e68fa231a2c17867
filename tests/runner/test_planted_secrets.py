"""Planted secrets through real ``bench run`` invocations against the local test server: none reaches the record
file, its log excerpt or the terminal.

A fake engine binary (a script) echoes its command line, its environment and a private key into its log, then
hands over to ``bench.testing.testserver``, which answers every request with a 500 whose body repeats a key, as servers
that echo a bad credential do. Four runs: launched (the errors land in ``errors.examples``), launched and exiting
at start (the log tail lands in ``status.log_excerpt``), attached through a URL with user-info, and attached to a
URL that never answers (the not-ready message). Plus ``--dry-run``, which prints the launch command.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
from secret_cases import SECRET_CASES

from bench.record import load_record
from bench.redact import REDACTED
from bench.runner.engines import get_engine
from bench.runner.launcher import ServerProcess, free_port

ROOT = Path(__file__).resolve().parents[2]
PROMPTS = '{"name": "tiny", "description": "t", "license": "CC0-1.0", "source": "tests"}\n' + (
    '{"id": "a", "messages": [{"role": "user", "content": "Say hi."}]}\n'
)

# Every value is fake; each must be absent from every output (tests/runner/secret_cases.py lists them).
V = {row[0]: row[3] for row in SECRET_CASES}
HF, SK, SK_LIVE, YA29 = V["hf-token"], V["openai-key"], V["stripe-key"], V["google-token"]
AKIA, AWS_SECRET, REDIS_PW = V["aws-key-id"], V["aws-secret"], V["redis-password"]
ACCESS_TOKEN, NCCL_SIG = V["access-token-query"], V["nccl-signature"]
URL_PW, ADMIN = V["url-password"], V["admin-token"]
PASSWORD, COOKIE, SESSION = V["password-variable"], V["cookie-variable"], V["session-variable"]
BEARER, PASSPHRASE, PEM_BODY = V["bearer-variable"], V["passphrase-variable"], V["private-key"]
PEM = f"-----BEGIN PRIVATE KEY-----\n{PEM_BODY}\n-----END PRIVATE KEY-----"
SECRETS = V
ECHOED = f"invalid credentials: key {SK}, token {HF}, google {YA29}, url redis://:{REDIS_PW}@cache:6379"

FAKE_ENGINE = """#!{python}
import os, runpy, sys
argv = sys.argv[1:]
print("fake engine starting:", " ".join(argv), flush=True)
for name in sorted(os.environ):
    if name.startswith(("SERVER_", "AWS_", "NCCL_NET", "SGLANG_")):
        print(name + "=" + os.environ[name], flush=True)
print("loaded {hf}; fallback {sk_live}; aws_secret_access_key = {aws}", flush=True)
print({pem!r}, flush=True)
if os.environ.get("SERVER_EXIT_AT_START"):
    print("fatal: cannot bind", flush=True)
    sys.exit(3)
known, it = [], iter(argv[2:])  # after "-m bench.testing.testserver"
for arg in it:
    if arg in ("--api-key", "--admin-token", "--weights-url"):
        next(it, None)
        continue
    known.append(arg)
sys.argv = ["bench.testing.testserver", *known]
runpy.run_module("bench.testing.testserver", run_name="__main__", alter_sys=True)
"""


def _engine(tmp_path: Path) -> Path:
    script = tmp_path / "fake-engine"
    text = FAKE_ENGINE.format(python=sys.executable, hf=HF, sk_live=SK_LIVE, aws=AWS_SECRET, pem=PEM)
    script.write_text(text, encoding="utf-8")
    script.chmod(0o755)
    return script


def _config(tmp_path: Path, **extra: Any) -> Path:
    (tmp_path / "prompts.jsonl").write_text(PROMPTS, encoding="utf-8")
    data: dict[str, Any] = {
        "experiment": "planted",
        "variant": "secrets",
        "engine": "testserver",
        "binary": str(_engine(tmp_path)),
        "server_args": {
            "ttft-ms": 5,
            "itl-ms": 1,
            "output-tokens": 4,
            "fail-status": 500,
            "fail-message": ECHOED,
            "api-key": SK,
        },
        "extra_args": [
            "--admin-token",
            ADMIN,
            "--weights-url",
            f"https://store.internal/w.bin?access_token={ACCESS_TOKEN}&part=1",
        ],
        "server_env": {
            "SERVER_PASSWORD": PASSWORD,
            "SERVER_COOKIE": COOKIE,
            "SERVER_SESSION": SESSION,
            "SERVER_BEARER": BEARER,
            "SERVER_PASSPHRASE": PASSPHRASE,
            "AWS_ACCESS_KEY_ID": AKIA,
            "AWS_SECRET_ACCESS_KEY": AWS_SECRET,
            "SGLANG_CACHE_URL": f"redis://:{REDIS_PW}@cache.internal:6379/0",
            "NCCL_NET_PLUGIN": f"/opt/nccl/libnccl-net.so?sv=2026&sig={NCCL_SIG}",
        },
        "prompt_set": str(tmp_path / "prompts.jsonl"),
        "levels": [1],
        "requests_per_level": 4,
        "warmup": 0,
        "max_tokens": 8,
        "records_dir": str(tmp_path / "records"),
        "ready_timeout_s": 30,
    }
    data.update(extra)
    path = tmp_path / "run.yaml"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _bench_env() -> dict[str, str]:
    return {
        **os.environ,
        "HF_TOKEN": HF,
        "OPENAI_API_KEY": SK,
        "NCCL_NET_PLUGIN": f"/opt/nccl/libnccl-net.so?sv=2026&sig={NCCL_SIG}",  # allow-listed: read, redacted
        "SGLANG_API_KEY": SK_LIVE,
    }


def _bench(args: list[str]) -> subprocess.CompletedProcess[str]:
    env = _bench_env()
    return subprocess.run(
        [sys.executable, "-m", "bench", *args], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120
    )


def _record_file(folder: Path) -> Path:
    files = sorted(folder.rglob("*.json"))
    assert len(files) == 1, files
    return files[0]


def test_every_listed_secret_is_planted(tmp_path: Path) -> None:
    """A row of tests/secret_cases.py that no run plants would pass without proving anything."""
    planted = _config(tmp_path).read_text(encoding="utf-8") + (tmp_path / "fake-engine").read_text(encoding="utf-8")
    planted += " ".join(_bench_env().values()) + f" http://admin:{URL_PW}@"
    assert [name for name, value in V.items() if value not in planted] == []


def _assert_clean(where: str, text: str) -> None:
    leaked = [what for what, value in SECRETS.items() if value in text]
    leaked += [f"part of {what}" for what, part in (("passphrase-variable", "pass phrase"),) if part in text]
    assert not leaked, f"{where} repeats planted secrets: {leaked}"


def test_launched_run_echoing_keys_in_its_500s_and_log(tmp_path: Path) -> None:
    proc = _bench(["run", str(_config(tmp_path)), "--log-dir", str(tmp_path / "logs")])
    terminal = proc.stdout + proc.stderr
    _assert_clean("the terminal", terminal)
    path = _record_file(tmp_path / "records")
    text = path.read_text(encoding="utf-8")
    _assert_clean("the record", text)
    record = load_record(path).record  # still a valid record
    # the secrets were there to leak: the server really echoed them, and what is kept says where they were
    log = next((tmp_path / "logs").glob("*.log")).read_text(encoding="utf-8")
    assert SK in log and ADMIN in log and PEM_BODY in log
    (level,) = record.levels
    assert level.errors is not None and level.requests_failed == 4
    (example,) = level.errors.examples
    assert example.startswith("http_5xx: HTTP 500: invalid credentials: ")
    assert f"token {REDACTED}, google {REDACTED}" in example
    assert f"redis://{REDACTED}@cache:6379" in example
    assert record.server.command is not None
    command = record.server.command
    assert command[command.index("--api-key") + 1] == REDACTED
    assert command[command.index("--admin-token") + 1] == REDACTED
    assert f"access_token={REDACTED}&part=1" in " ".join(command)
    assert record.server.args["api-key"] == REDACTED
    assert record.server.args["extra_args"][1] == REDACTED
    env = record.environment.env_vars
    for name in ("SERVER_PASSWORD", "SERVER_COOKIE", "SERVER_SESSION", "SERVER_BEARER", "SERVER_PASSPHRASE"):
        assert env[name] == REDACTED, name
    assert env["SGLANG_CACHE_URL"] == f"redis://{REDACTED}@cache.internal:6379/0"
    assert env["NCCL_NET_PLUGIN"] == f"/opt/nccl/libnccl-net.so?sv=2026&sig={REDACTED}"
    assert "HF_TOKEN" not in env and "OPENAI_API_KEY" not in env  # not allow-listed: never read
    assert "server: " in terminal and f"--api-key '{REDACTED}'" in terminal  # the command is printed, redacted


def test_server_exiting_at_start_leaves_a_redacted_log_excerpt(tmp_path: Path) -> None:
    cfg = _config(tmp_path)
    data = json.loads(cfg.read_text(encoding="utf-8"))
    data["server_env"]["SERVER_EXIT_AT_START"] = "1"
    cfg.write_text(json.dumps(data), encoding="utf-8")
    proc = _bench(["run", str(cfg), "--log-dir", str(tmp_path / "logs")])
    assert proc.returncode == 1, proc.stdout + proc.stderr
    _assert_clean("the terminal", proc.stdout + proc.stderr)
    path = _record_file(tmp_path / "records")
    _assert_clean("the record", path.read_text(encoding="utf-8"))
    status = load_record(path).record.status
    assert status.state == "failed" and "exited with status 3" in (status.message or "")
    excerpt = status.log_excerpt or ""
    assert "fatal: cannot bind" in excerpt and "fake engine starting:" in excerpt  # the tail is there
    assert "<redacted private key>" in excerpt and f"SERVER_PASSWORD={REDACTED}" in excerpt
    assert f"--admin-token {REDACTED}" in excerpt and f"--api-key {REDACTED}" in excerpt


def test_attached_through_a_url_with_credentials(tmp_path: Path) -> None:
    port = free_port()
    command = [sys.executable, "-m", "bench.testing.testserver", "--port", str(port), "--ttft-ms", "5", "--itl-ms", "1"]
    command += ["--fail-status", "500", "--fail-message", ECHOED]
    with ServerProcess(command, log_path=tmp_path / "external.log") as external:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}") as http:
            external.wait_ready(lambda: get_engine("testserver").is_ready(http), timeout_s=30)
        url = f"http://admin:{URL_PW}@127.0.0.1:{port}"
        proc = _bench(["run", str(_config(tmp_path)), "--url", url])
    _assert_clean("the terminal", proc.stdout + proc.stderr)
    path = _record_file(tmp_path / "records")
    _assert_clean("the record", path.read_text(encoding="utf-8"))
    record = load_record(path).record
    assert record.server.url == f"http://{REDACTED}@127.0.0.1:{port}"
    assert record.levels and record.levels[0].requests_failed == 4  # the URL was used, credentials and all


def test_unreachable_url_with_credentials_in_the_not_ready_message(tmp_path: Path) -> None:
    url = f"http://admin:{URL_PW}@127.0.0.1:{free_port()}"
    proc = _bench(["run", str(_config(tmp_path)), "--url", url])
    _assert_clean("the terminal", proc.stdout + proc.stderr)
    path = _record_file(tmp_path / "records")
    _assert_clean("the record", path.read_text(encoding="utf-8"))
    status = load_record(path).record.status
    assert status.state == "failed" and f"http://{REDACTED}@127.0.0.1" in (status.message or "")


def test_dry_run_prints_no_secret(tmp_path: Path) -> None:
    proc = _bench(["run", str(_config(tmp_path)), "--dry-run"])
    assert proc.returncode == 0, proc.stderr
    _assert_clean("the dry run", proc.stdout + proc.stderr)
    assert f"--api-key '{REDACTED}'" in proc.stdout and f"SERVER_PASSWORD='{REDACTED}'" in proc.stdout
    assert not (tmp_path / "records").exists()
