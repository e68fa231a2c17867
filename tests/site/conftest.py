"""Fixtures shared by the site tests."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from site_helpers import FIXTURES, SHIPPED


@pytest.fixture
def records(tmp_path: Path) -> Path:
    """A records folder of the shipped records and the test fixtures, in the test's own temporary folder."""
    folder = tmp_path / "records"
    shutil.copytree(SHIPPED, folder, dirs_exist_ok=True)
    shutil.copytree(FIXTURES, folder, dirs_exist_ok=True)
    return folder
