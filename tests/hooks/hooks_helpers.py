"""Building the site with MkDocs in a subprocess (used by the tests and fixtures of tests/hooks)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURE_RECORDS = ROOT / "tests" / "fixtures" / "records"
SHIPPED_RECORDS = ROOT / "records"


def mkdocs_env(records: Path | None) -> dict[str, str]:
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", DISABLE_MKDOCS_2_WARNING="true", PYTHONUNBUFFERED="1")
    env.pop("BENCHBOOK_RECORDS_DIR", None)
    if records is not None:
        env["BENCHBOOK_RECORDS_DIR"] = str(records)
    return env


def run_build(
    site_dir: Path, records: Path | None, *, strict: bool = True, config: Path = ROOT / "mkdocs.yml"
) -> subprocess.CompletedProcess[str]:
    """``mkdocs build [--strict] -d site_dir`` with ``$BENCHBOOK_RECORDS_DIR`` set to ``records``."""
    cmd = [sys.executable, "-m", "mkdocs", "build", "-f", str(config), "-d", str(site_dir)]
    if strict:
        cmd.append("--strict")
    return subprocess.run(
        cmd, cwd=config.parent, env=mkdocs_env(records), capture_output=True, text=True, timeout=300, check=False
    )
