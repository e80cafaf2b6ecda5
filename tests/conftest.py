"""Shared test set-up: the repository root on sys.path, and where the real data is.

The repository root goes first on ``sys.path`` so that ``import datasets``
finds this project's loaders and not the unrelated PyPI package of that name.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path[:1]:
    sys.path.insert(0, str(REPO_ROOT))


def shared_datasets_dir() -> Path | None:
    """The shared data folder: ``$ALLPAIRS_DATASETS``, else ``../shared/datasets``
    beside the repository; None when it does not exist."""
    env = os.environ.get("ALLPAIRS_DATASETS")
    path = Path(env).expanduser() if env else Path(__file__).resolve().parents[2] / "shared" / "datasets"
    return path if path.is_dir() else None


@pytest.fixture(scope="session")
def shared_datasets() -> Path:
    """The shared data folder; skips the test (saying where it looked) when absent."""
    path = shared_datasets_dir()
    if path is None:
        where = os.environ.get("ALLPAIRS_DATASETS") or str(REPO_ROOT.parent / "shared" / "datasets")
        pytest.skip(f"shared data folder not found at {where} (set ALLPAIRS_DATASETS)")
    return path


@pytest.fixture(scope="session")
def go_reference_src() -> Path:
    """The shared Go 1.27.3 src/ tree (REFERENCE.md section 1), unpacked once into
    the user's cache; skips the test when the archive is absent."""
    from datasets.go import shared_go_src

    try:
        return shared_go_src()
    except FileNotFoundError as exc:
        pytest.skip(str(exc).replace("\n", " "))
