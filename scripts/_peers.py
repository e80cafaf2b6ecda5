"""Peers that the benchmarks run beside allpairs: installed on demand, called the same way.

Each peer function takes the sets as lists of tokens and returns the pairs it
found as a sorted int64 array of keys ``left * n + right`` with
``left < right`` (0-based input positions), so that results from different
tools compare with one ``np.array_equal``.
"""
from __future__ import annotations

import importlib
import subprocess
import sys
from types import ModuleType

import numpy as np


def ensure_installed(distribution: str, module: str) -> ModuleType:
    """Import ``module``, first installing ``distribution`` with this Python's pip if missing."""
    try:
        return importlib.import_module(module)
    except ImportError:
        pass
    print(f"installing {distribution} (python -m pip install {distribution}) ...", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", distribution], check=True)
    importlib.invalidate_caches()
    return importlib.import_module(module)


def pair_keys(left, right, n: int) -> np.ndarray:
    """Sorted unique keys ``min * n + max`` of index pairs."""
    left = np.asarray(left, dtype=np.int64)
    right = np.asarray(right, dtype=np.int64)
    lo, hi = np.minimum(left, right), np.maximum(left, right)
    return np.unique(lo * n + hi)


def setsimilaritysearch_pairs(sets: list[list], threshold: float) -> np.ndarray:
    """SetSimilaritySearch's ``all_pairs`` (Bayardo et al.'s All-Pairs in pure Python), Jaccard.

    It yields ``(x, y, similarity)`` with ``x > y``; it needs the tokens of
    each set to be distinct, which the benchmark corpora are.
    """
    from SetSimilaritySearch import all_pairs

    found = list(all_pairs(sets, similarity_func_name="jaccard", similarity_threshold=threshold))
    if not found:
        return np.empty(0, dtype=np.int64)
    x, y, _ = zip(*found)
    return pair_keys(x, y, len(sets))


def log(*args) -> None:
    """Progress and problems go to stderr, so the tables on stdout stay clean."""
    print(*args, file=sys.stderr, flush=True)


def exit_status(problems: list[str]) -> int:
    """0 when every check held; else list the problems on stderr and return 1."""
    if not problems:
        return 0
    log("")
    log(f"{len(problems)} PROBLEM(S):")
    for p in problems:
        log("  " + p)
    return 1
