"""Shared fixtures: paths, and building the site with MkDocs in a subprocess."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURE_RECORDS = ROOT / "tests" / "fixtures" / "records"
SHIPPED_RECORDS = ROOT / "records"

Build = Callable[..., subprocess.CompletedProcess[str]]


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


@pytest.fixture(scope="session")
def site_records(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped records plus the test fixtures, in a temporary records folder."""
    folder = tmp_path_factory.mktemp("records")
    shutil.copytree(SHIPPED_RECORDS, folder, dirs_exist_ok=True)
    shutil.copytree(FIXTURE_RECORDS, folder, dirs_exist_ok=True)
    return folder


@pytest.fixture(scope="session")
def built_site(tmp_path_factory: pytest.TempPathFactory, site_records: Path) -> Path:
    """The site built strictly from ``site_records`` (shared by the build and browser tests)."""
    site = tmp_path_factory.mktemp("site")
    result = run_build(site, site_records)
    assert result.returncode == 0, f"strict build failed:\n{result.stdout}\n{result.stderr}"
    return site
