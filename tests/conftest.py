"""Shared fixtures. ../shared (beside the checkout) holds the data tests may read."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
SHARED_DATA = SHARED / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.fail(f"../shared/data not found beside the checkout ({SHARED_DATA})")
    return SHARED_DATA
