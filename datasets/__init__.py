"""Loaders for the real corpora allpairs is tested and benchmarked on.

Each loader finds its data where it normally lives (the project's shared
data folder, a system package, a Python package) and returns plain Python
data: paths, or lists of strings. None of them imports allpairs itself, so
that the benchmarks compare allpairs with its peers on the same inputs.
When the data is absent, a loader raises :class:`FileNotFoundError` whose
message names every place it looked and the command that installs the data.

Run scripts from the repository root (``python scripts/bench_exact.py``):
the name ``datasets`` is also taken by an unrelated package on PyPI, and the
repository root must come first on ``sys.path`` for this one to be found.
"""
from __future__ import annotations

import os
from pathlib import Path

__all__ = ["REPO_ROOT", "TINY", "missing", "shared_dir", "shared_file", "shared_place"]

#: The repository this package lives in.
REPO_ROOT = Path(__file__).resolve().parents[1]

#: The hand-checkable corpus (a directory of short files; see tiny/EXPECTED.md).
TINY = Path(__file__).resolve().parent / "tiny" / "corpus"


def shared_dir() -> Path | None:
    """The shared data folder, or None when there is none.

    ``$ALLPAIRS_DATASETS`` when set, else ``../shared/datasets`` beside the
    repository (where the project's shared files are laid out, also in CI).
    """
    env = os.environ.get("ALLPAIRS_DATASETS")
    if env:
        path = Path(env).expanduser()
        return path if path.is_dir() else None
    path = REPO_ROOT.parent / "shared" / "datasets"
    return path if path.is_dir() else None


def shared_file(name: str) -> Path | None:
    """``name`` inside the shared data folder, or None when it is not there."""
    folder = shared_dir()
    if folder is None:
        return None
    path = folder / name
    return path if path.is_file() else None


def shared_place(name: str) -> str:
    """Where a shared file would be, for error messages."""
    env = os.environ.get("ALLPAIRS_DATASETS")
    base = Path(env).expanduser() if env else REPO_ROOT.parent / "shared" / "datasets"
    return str(base / name)


def missing(what: str, looked: list[str], install: list[str]) -> FileNotFoundError:
    """A FileNotFoundError saying what was looked for, where, and how to get it."""
    lines = [f"{what} not found; looked in:"]
    lines += [f"  {place}" for place in looked]
    lines.append("to get it: " + "  or  ".join(install))
    return FileNotFoundError("\n".join(lines))
