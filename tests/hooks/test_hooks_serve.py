"""`mkdocs serve` rebuilds when a record is added to the records folder, without a restart."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from hooks_helpers import FIXTURE_RECORDS, ROOT, SHIPPED_RECORDS, mkdocs_env

from bench.testing.serve_process import interruptible, stop_serve

NEW_ID = "20261201T090000Z-baseline-a1b2c3d"
DEADLINE_S = 120


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return resp.status, resp.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        return exc.code, ""
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return 0, ""


def wait_for(predicate: object, deadline: float, what: str, proc: subprocess.Popen[str]) -> None:
    assert callable(predicate)
    while time.monotonic() < deadline:
        if predicate():
            return
        if proc.poll() is not None:
            raise AssertionError(f"mkdocs serve exited ({proc.returncode}) while waiting for {what}")
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}")


def test_serve_picks_up_a_new_record(tmp_path: Path) -> None:
    records = tmp_path / "records"
    shutil.copytree(SHIPPED_RECORDS, records)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = (tmp_path / "serve.log").open("w")
    temp = Path(tempfile.gettempdir())
    before = set(temp.glob("mkdocs_*"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "mkdocs", "serve", "-a", f"127.0.0.1:{port}", "-f", str(ROOT / "mkdocs.yml")],
        cwd=ROOT,
        env=mkdocs_env(records),
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        preexec_fn=interruptible,  # stop_serve interrupts it as Ctrl-C does, even where SIGINT is ignored here
    )
    try:
        deadline = time.monotonic() + DEADLINE_S
        wait_for(lambda: get(f"{base}/records/index.html")[0] == 200, deadline, "the first build", proc)
        site_dirs = set(temp.glob("mkdocs_*")) - before  # where serve builds (removed when it stops)
        assert site_dirs
        page = f"{base}/records/eagle-fast-verify/{NEW_ID}.html"
        assert get(page)[0] == 404
        assert NEW_ID not in get(f"{base}/records/index.html")[1]

        target = records / "eagle-fast-verify" / f"{NEW_ID}.json"
        shutil.copy(FIXTURE_RECORDS / "eagle-fast-verify" / f"{NEW_ID}.json", target)

        wait_for(lambda: get(page)[0] == 200, deadline, "the new record's page", proc)
        assert NEW_ID in get(f"{base}/records/index.html")[1]
    finally:
        stop_serve(proc, grace_s=10, group=True)
        log.close()
        print((tmp_path / "serve.log").read_text(encoding="utf-8")[-3000:])
    # stopped as Ctrl-C stops it, serve removed its temporary site (SIGTERM left 2-4 GB behind per 10,000-record run)
    assert not [d for d in site_dirs if d.exists()]
