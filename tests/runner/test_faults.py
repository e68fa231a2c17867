"""Every fault case of ``fault_cases.FAULT_CASES``, run for real: `bench run` as a subprocess against
bench.testing.testserver in its fault modes, signals sent to the harness, a full and a read-only file system (tmpfs in a
user namespace), a lowered open-file limit. Each case checks what its row promises (exit status, record state)
and, for every case, that the record validates, nothing prints a traceback and no server process survives."""

from __future__ import annotations

import json
import os
import re
import resource
import secrets
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import httpx
import pytest
from fault_cases import FAULT_CASES

from bench.record.load import load_record
from bench.record.model import Record
from bench.runner.engines import get_engine
from bench.runner.launcher import ServerProcess, free_port

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable
PROMPTS = """{"name": "tiny", "description": "test prompts", "license": "CC0-1.0", "source": "tests"}
{"id": "a", "messages": [{"role": "user", "content": "Write a function that adds two numbers."}]}
"""
SLOW = {"ttft-ms": 20, "itl-ms": 40, "output-tokens": 25}  # ~1 s per request: time to act inside a level
TESTSERVER = get_engine("testserver")
_EXPECTED = re.compile(r"^exit (\d+); (no record|record (complete|partial|failed))\b")


@dataclass
class Outcome:
    exit: int
    output: str
    records: list[Path]


@dataclass
class Case:
    tmp: Path
    marker: str  # in the launched server's command line (--model), to find it on the process table

    def config(self, server_args: dict[str, Any] | None = None, **extra: Any) -> Path:
        (self.tmp / "prompts.jsonl").write_text(PROMPTS, encoding="utf-8")
        data: dict[str, Any] = {
            "experiment": "faults",
            "variant": "case",
            "engine": "testserver",
            "server_args": {"ttft-ms": 5, "itl-ms": 2, "output-tokens": 8, "model": self.marker, **(server_args or {})},
            "prompt_set": str(self.tmp / "prompts.jsonl"),
            "levels": [1, 2],
            "requests_per_level": 4,
            "warmup": 0,
            "max_tokens": 30,
            "ready_timeout_s": 60,
            "stop_timeout_s": 3,
            "records_dir": str(self.tmp / "records"),
        }
        data.update(extra)
        path = self.tmp / "run.yaml"
        path.write_text(json.dumps(data), encoding="utf-8")
        return path

    def argv(self, cfg: Path, *args: str) -> list[str]:
        return [PY, "-m", "bench", "run", str(cfg), "--log-dir", str(self.tmp / "logs"), *args]

    def records(self, where: Path | None = None) -> list[Path]:
        return sorted((where or self.tmp / "records").rglob("*.json"))

    def bench(self, cfg: Path, *args: str, preexec: Callable[[], None] | None = None) -> Outcome:
        proc = subprocess.run(
            self.argv(cfg, *args), cwd=ROOT, capture_output=True, text=True, timeout=180, preexec_fn=preexec
        )
        return Outcome(proc.returncode, proc.stdout + proc.stderr, self.records())

    def signalled(self, cfg: Path, signals: Sequence[tuple[float, signal.Signals]]) -> Outcome:
        """Start `bench run`, wait until its first level is in the record, then send each signal after its delay."""
        bench = subprocess.Popen(self.argv(cfg), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            _wait_for_levels(lambda: self.records(), 1)
            for delay, sig in signals:
                time.sleep(delay)
                bench.send_signal(sig)
            out, _ = bench.communicate(timeout=60)
        finally:
            if bench.poll() is None:
                bench.kill()
                bench.wait()
        return Outcome(bench.returncode, out, self.records())


def _wait_for_levels(files: Callable[[], list[Path]], n: int, timeout_s: float = 60) -> Path:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for path in files():
            try:
                if len(json.loads(path.read_text()).get("levels", [])) >= n:
                    return path
            except (OSError, ValueError):
                pass
        time.sleep(0.05)
    raise AssertionError(f"no record reached {n} level(s) in {timeout_s} s")


def alive_with(marker: str) -> list[str]:
    """Live processes (not zombies) whose command line contains ``marker``: the process table, read from /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(") ", 1)[-1][0]
        except OSError:
            continue
        if marker in cmd and state != "Z":
            found.append(f"{entry.name}: {cmd}")
    return found


def only_record(outcome: Outcome) -> Record:
    assert len(outcome.records) == 1, (outcome.records, outcome.output)
    return load_record(outcome.records[0]).record


@cache
def user_namespaces() -> bool:
    """Whether `unshare -Urm` works here (a tmpfs can then be mounted without privileges)."""
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-Urm", "true"], capture_output=True, check=False)
    return probe.returncode == 0


def _rlimit(soft: int, hard: int) -> Callable[[], None]:
    return lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


# -- the cases ------------------------------------------------------------------------------------------------


def exits_at_start(c: Case) -> Outcome:
    out = c.bench(c.config({"exit-at-start": 3}))
    rec = only_record(out)
    assert "exited with status 3 before it was ready" in (rec.status.message or "")
    assert "injected start-up failure" in (rec.status.log_excerpt or "")
    assert rec.levels == []
    return out


def never_ready(c: Case) -> Outcome:
    t0 = time.monotonic()
    out = c.bench(c.config({"never-ready": True}, ready_timeout_s=3))
    assert time.monotonic() - t0 < 60
    assert "not ready after 3 s" in (only_record(out).status.message or "")
    return out


def launched_killed(c: Case) -> Outcome:
    out = c.bench(c.config({"die-after-requests": 11}, requests_per_level=8))  # request 3 of level 2
    rec = only_record(out)
    assert [(lv.concurrency, lv.failed) for lv in rec.levels] == [(1, False), (2, True)]
    assert (rec.levels[1].failure or "").startswith("stopped before its end: the server process killed by signal")
    assert "SIGKILL" in (rec.status.message or "") and rec.status.failed_level == 2
    return out


def attached_killed(c: Case) -> Outcome:
    port = free_port()
    external = [PY, "-m", "bench.testing.testserver", "--port", str(port), "--ttft-ms", "5", "--itl-ms", "2"]
    external += ["--output-tokens", "8", "--die-after-requests", "15", "--model", c.marker + "-external"]
    with ServerProcess(external, log_path=c.tmp / "external.log") as server:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}") as http:
            server.wait_ready(lambda: TESTSERVER.is_ready(http), timeout_s=30)
        out = c.bench(c.config(requests_per_level=12), "--url", f"http://127.0.0.1:{port}")
        assert not server.is_alive()  # it died during level 2, as planned
    rec = only_record(out)
    assert rec.server.command is None and rec.levels and not rec.levels[0].failed
    assert "consecutive failed requests" in (rec.status.message or "") and "connect" in (rec.status.message or "")
    return out


def hangs(c: Case) -> Outcome:
    out = c.bench(c.config({"hang-after-chunks": 2}, requests_per_level=2), "--request-timeout", "1")
    rec = only_record(out)
    assert rec.workload.request_timeout_s == 1.0
    assert rec.levels and all(lv.failed for lv in rec.levels)
    errors = rec.levels[0].errors
    assert errors is not None and errors.by_kind == {"timeout": 2}
    assert any("request timeout of 1 s" in e for e in errors.examples)
    return out


def _all_failed(c: Case, server_args: dict[str, Any], kind: str, text: str) -> Outcome:
    out = c.bench(c.config(server_args))
    rec = only_record(out)
    assert rec.levels and all(lv.failed for lv in rec.levels)
    first = rec.levels[0]
    assert first.failure == f"error rate 100% (4 of 4 requests failed: {kind} 4) above the error threshold 5%"
    assert first.errors is not None and any(text in e for e in first.errors.examples), first.errors.examples
    assert "status: failed" in out.output and f"level C=1 FAILED: {first.failure}" in out.output
    return out


def http_500(c: Case) -> Outcome:
    return _all_failed(c, {"fail-status": 500}, "http_5xx", "HTTP 500")


def html_page(c: Case) -> Outcome:
    return _all_failed(c, {"bad-body": "html"}, "bad_response", "content-type text/html")


def malformed_sse(c: Case) -> Outcome:
    return _all_failed(c, {"bad-body": "malformed_sse"}, "bad_response", "event is not JSON")


def over_capacity(c: Case) -> Outcome:
    out = c.bench(c.config({"max-streams": 2, "itl-ms": 5}, levels=[1, 4], requests_per_level=12))
    rec = only_record(out)
    assert [(lv.concurrency, lv.failed) for lv in rec.levels] == [(1, False), (4, True)]
    assert "above the error threshold 5%" in (rec.levels[1].failure or "")
    assert rec.levels[1].errors is not None and rec.levels[1].errors.by_kind.get("http_5xx", 0) > 0
    return out


def _interrupted(c: Case, signals: Sequence[tuple[float, signal.Signals]]) -> Outcome:
    out = c.signalled(c.config(SLOW, requests_per_level=3), signals)
    rec = only_record(out)
    assert [lv.concurrency for lv in rec.levels] == [1] and not rec.levels[0].failed
    assert f"interrupted (received {signals[0][1].name}) during level C=2" in (rec.status.message or "")
    return out


def sigint(c: Case) -> Outcome:
    return _interrupted(c, [(0.5, signal.SIGINT)])


def sigterm(c: Case) -> Outcome:
    return _interrupted(c, [(0.5, signal.SIGTERM)])


def second_sigint(c: Case) -> Outcome:
    args = {**SLOW, "ignore-sigterm": True}
    out = c.signalled(c.config(args, requests_per_level=3), [(0.5, signal.SIGINT), (1.0, signal.SIGINT)])
    assert [lv.concurrency for lv in only_record(out).levels] == [1]
    return out


def disk_full(c: Case) -> Outcome:
    if not user_namespaces():
        pytest.skip("needs `unshare -Urm` (user and mount namespaces) to mount a small tmpfs")
    mnt, saved = c.tmp / "mnt", c.tmp / "records"
    mnt.mkdir()
    saved.mkdir()
    cfg = c.config(SLOW, requests_per_level=3, records_dir=str(mnt))
    run = " ".join(c.argv(cfg))
    script = f"mount -t tmpfs -o size=1m tmpfs {mnt} && {{ {run}; rc=$?; cp -a {mnt}/faults {saved}/; exit $rc; }}"
    proc = subprocess.Popen(
        ["unshare", "-Urm", "sh", "-c", script], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        view = Path(f"/proc/{proc.pid}/root") / mnt.relative_to("/")  # the tmpfs, seen from outside its namespace
        path = _wait_for_levels(lambda: sorted(view.rglob("*.json")), 1)
        good = path.read_bytes()
        filler = os.open(view / "filler", os.O_WRONLY | os.O_CREAT)  # fill it up: the next write cannot fit
        try:
            with pytest.raises(OSError, match="No space left"):
                while True:
                    os.write(filler, b"\0" * 65536)
        finally:
            os.close(filler)
        out, _ = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    outcome = Outcome(proc.returncode, out, c.records(saved))
    kept = only_record(outcome)
    assert outcome.records[0].read_bytes() == good  # the last good version, byte for byte
    assert [lv.concurrency for lv in kept.levels] == [1]
    assert not [p for p in (saved / "faults").iterdir() if p.suffix == ".tmp"]
    assert "No space left on device" in out and "keeps its last good version (1 level(s)" in out
    return outcome


_INJECT = """
import errno, os, sys
import bench.runner.sweep as sweep
from bench.cli import main
real, broken = sweep.replace_record_file, []
def replace(path, record):
    if len(record.levels) >= 2 or (broken and "{mode}" == "sticky"):
        if "{mode}" == "sticky" or not broken:
            broken.append(1)
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    real(path, record)
sweep.replace_record_file = replace
sys.exit(main(sys.argv[1:]))
"""


def _injected(c: Case, mode: str) -> tuple[Outcome, bytes]:
    cfg = c.config(SLOW, requests_per_level=2, levels=[1, 2, 4])
    bench = subprocess.Popen(
        [PY, "-c", _INJECT.format(mode=mode), *c.argv(cfg)[3:]],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        good = _wait_for_levels(lambda: c.records(), 1).read_bytes()
        out, _ = bench.communicate(timeout=90)
    finally:
        if bench.poll() is None:
            bench.kill()
            bench.wait()
    return Outcome(bench.returncode, out, c.records()), good


def write_fails(c: Case) -> Outcome:
    out, good = _injected(c, "sticky")
    assert out.records[0].read_bytes() == good
    assert "the run stopped: partial: stopped after level C=2" in out.output
    assert "No space left on device" in out.output
    return out


def write_fails_once(c: Case) -> Outcome:
    out, _ = _injected(c, "once")
    rec = only_record(out)
    assert [lv.concurrency for lv in rec.levels] == [1]
    message = rec.status.message or ""
    assert message.startswith("stopped after level C=2: cannot write the record") and "No space left" in message
    return out


def read_only(c: Case) -> Outcome:
    target = c.tmp / "ro"
    target.mkdir()
    cfg = c.config()
    if os.geteuid() != 0:
        target.chmod(0o555)
        out = c.bench(cfg, "--records-dir", str(target))
    elif user_namespaces():
        run = " ".join(c.argv(cfg, "--records-dir", str(target)))
        script = f"mount -t tmpfs -o ro,size=64k tmpfs {target} && {run}"
        proc = subprocess.run(["unshare", "-Urm", "sh", "-c", script], cwd=ROOT, capture_output=True, text=True)
        out = Outcome(proc.returncode, proc.stdout + proc.stderr, c.records())
    else:
        pytest.skip("root without user namespaces: no way to make a folder read-only here")
    assert f"--records-dir: field 'records_dir': a writable folder; {target}:" in out.output
    assert "Read-only file system" in out.output or "Permission denied" in out.output
    assert not list(target.iterdir())
    return out


def _usage_error(c: Case, args: Sequence[str], cfg_extra: dict[str, Any], text: str) -> Outcome:
    out = c.bench(c.config(**cfg_extra), *args)
    assert text in out.output, out.output
    assert out.output.count("\n") <= 2  # one clear line, not a dump
    return out


def records_dir_file(c: Case) -> Outcome:
    text = "error: --records-dir: field 'records_dir': a folder for records; /etc/hostname is a file"
    return _usage_error(c, ["--records-dir", "/etc/hostname"], {}, text)


def records_dir_proc(c: Case) -> Outcome:
    text = f"error: {c.tmp / 'run.yaml'}: field 'records_dir': a writable folder; /proc/nope:"
    return _usage_error(c, [], {"records_dir": "/proc/nope"}, text)


def _url_error(c: Case, url: str, detail: str) -> Outcome:
    out = _usage_error(c, ["--url", url], {}, "error: --url: field 'url': ")
    assert detail in out.output
    return out


def url_not_a_url(c: Case) -> Outcome:
    return _url_error(c, "not-a-url", "an http:// or https:// URL with a host")


def url_ftp(c: Case) -> Outcome:
    return _url_error(c, "ftp://127.0.0.1:21", "an http:// or https:// URL")


def url_port(c: Case) -> Outcome:
    return _url_error(c, "http://127.0.0.1:99999", "Port out of range")


def c512_soft(c: Case) -> Outcome:
    port = free_port()
    external = [PY, "-m", "bench.testing.testserver", "--port", str(port), "--ttft-ms", "300", "--itl-ms", "5"]
    external += ["--output-tokens", "4", "--model", c.marker + "-external"]
    cfg = c.config(levels=[512], requests_per_level=512, max_tokens=4)
    with (
        ServerProcess(external, log_path=c.tmp / "external.log") as server,
        httpx.Client(base_url=f"http://127.0.0.1:{port}") as http,
    ):
        server.wait_ready(lambda: TESTSERVER.is_ready(http), timeout_s=30)
        out = c.bench(cfg, "--url", f"http://127.0.0.1:{port}", preexec=_rlimit(256, 4096))
        stats = http.get("/stats").json()
    assert "open-file limit raised from 256 to 768 for concurrency 512" in out.output
    (level,) = only_record(out).levels
    assert level.requests_sent == 512 == (level.requests_completed or 0) + (level.requests_failed or 0)
    assert level.requests_completed == 512 and stats["requests"] == 512
    assert stats["max_in_flight"] > 256  # the concurrency really was above the old limit
    return out


def c512_hard(c: Case) -> Outcome:
    text = "error: RLIMIT_NOFILE: field 'levels': concurrency 512 needs 768 open files (512 sockets + 256), but "
    out = c.bench(c.config(levels=[512], requests_per_level=512), preexec=_rlimit(256, 256))
    assert text in out.output and "the open-file limit is 256 (hard limit 256" in out.output
    return out


SCENARIOS: dict[str, Callable[[Case], Outcome]] = {
    "launch/exits-at-start": exits_at_start,
    "launch/never-ready": never_ready,
    "launch/killed-mid-level": launched_killed,
    "attached/killed-mid-level": attached_killed,
    "responses/hangs-mid-stream": hangs,
    "responses/http-500": http_500,
    "responses/html-page": html_page,
    "responses/malformed-sse": malformed_sse,
    "responses/over-capacity": over_capacity,
    "signals/sigint": sigint,
    "signals/sigterm": sigterm,
    "signals/second-sigint-while-stopping": second_sigint,
    "storage/disk-full": disk_full,
    "storage/write-fails": write_fails,
    "storage/write-fails-once": write_fails_once,
    "storage/read-only-records-dir": read_only,
    "input/records-dir-is-a-file": records_dir_file,
    "input/records-dir-in-proc": records_dir_proc,
    "input/url-not-a-url": url_not_a_url,
    "input/url-ftp": url_ftp,
    "input/url-port-out-of-range": url_port,
    "scale/c512-soft-fd-limit": c512_soft,
    "scale/c512-hard-fd-limit": c512_hard,
}


def test_every_case_has_a_test_and_every_test_a_case() -> None:
    names = [name for name, _, _ in FAULT_CASES]
    assert len(names) == len(set(names))
    assert set(names) == set(SCENARIOS)
    for name, what, expected in FAULT_CASES:
        assert "/" in name and what and _EXPECTED.match(expected), name


@pytest.mark.parametrize(("name", "what", "expected"), FAULT_CASES, ids=[case[0] for case in FAULT_CASES])
def test_fault_case(tmp_path: Path, name: str, what: str, expected: str) -> None:
    marker = f"faultcase-{secrets.token_hex(4)}"
    outcome = SCENARIOS[name](Case(tmp_path, marker))
    match = _EXPECTED.match(expected)
    assert match is not None
    assert outcome.exit == int(match[1]), outcome.output
    if match[2] == "no record":
        assert outcome.records == [], outcome.records
    else:
        assert only_record(outcome).status.state == match[3], outcome.output
    assert "Traceback" not in outcome.output, outcome.output
    assert not alive_with(marker), alive_with(marker)
