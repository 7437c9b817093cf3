"""Fixtures for the integration tests: they drive the real `silt` binary.

The binary comes from $SILT_BIN (set by `make test`), else
<repo>/build/src/silt/cli/silt. Reference readers (deltalake, pyarrow, duckdb)
and the helpers that use them live in helpers.py.
"""

import os
from pathlib import Path

import pytest

import helpers

REPO = Path(__file__).resolve().parents[2]


def _silt_path() -> Path:
    env = os.environ.get("SILT_BIN")
    return Path(env) if env else REPO / "build" / "src" / "silt" / "cli" / "silt"


@pytest.fixture(scope="session")
def silt_bin() -> Path:
    path = _silt_path()
    if not path.is_file() or not os.access(path, os.X_OK):
        pytest.fail(f"silt binary not found at {path}: build it (make build) or set SILT_BIN")
    return path


@pytest.fixture
def silt(silt_bin):
    """A runner: silt(*args, timeout=..., env=..., cwd=...) -> CompletedProcess."""

    def run(*args, **kwargs):
        return helpers.run_silt(silt_bin, *args, **kwargs)

    return run


@pytest.fixture
def work(tmp_path) -> Path:
    """A fresh directory for one test's input files, tables and checkpoints."""
    return tmp_path


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO
