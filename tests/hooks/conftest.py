"""Shared fixtures: the records the site tests build from, and one strict build of them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hooks_helpers import FIXTURE_RECORDS, SHIPPED_RECORDS, run_build


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
