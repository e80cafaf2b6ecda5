"""Peers that the benchmarks run beside allpairs: installed on demand, called the same way.

Each peer function takes the sets as lists of tokens and returns the pairs it
found as a sorted int64 array of keys ``left * n + right`` with
``left < right`` (0-based input positions), so that results from different
tools compare with one ``np.array_equal``. For containment, which is
asymmetric, a key is ``contained * n + container`` instead.
"""
from __future__ import annotations

import importlib
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
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


def directed_keys(left, right, n: int) -> np.ndarray:
    """Sorted unique keys ``left * n + right`` of ordered index pairs."""
    return np.unique(np.asarray(left, dtype=np.int64) * n + np.asarray(right, dtype=np.int64))


#: Measures SetSimilaritySearch 1.0 computes that allpairs also offers.
SETSIMILARITYSEARCH_MEASURES = ("jaccard", "cosine", "containment")


def setsimilaritysearch_pairs(sets: list[list], threshold: float, measure: str = "jaccard") -> np.ndarray:
    """SetSimilaritySearch's pairs (Bayardo et al.'s All-Pairs in pure Python) for one measure.

    jaccard and cosine: ``all_pairs``, which yields ``(x, y, similarity)`` with
    ``x > y``. containment, asymmetric, is refused by ``all_pairs``: a
    ``SearchIndex`` of all sets is queried with each set, which returns the sets
    holding at least a share t of it (itself dropped). It needs the tokens of
    each set to be distinct, which the benchmark corpora are.
    """
    from SetSimilaritySearch import SearchIndex, all_pairs

    if measure == "containment":
        index = SearchIndex(sets, similarity_func_name="containment", similarity_threshold=threshold)
        left, right = [], []
        for i, s in enumerate(sets):
            for j, _ in index.query(s):
                if j != i:
                    left.append(i)
                    right.append(j)
        return directed_keys(left, right, len(sets))
    found = list(all_pairs(sets, similarity_func_name=measure, similarity_threshold=threshold))
    if not found:
        return np.empty(0, dtype=np.int64)
    x, y, _ = zip(*found)
    return pair_keys(x, y, len(sets))


def _child(fn, args, path: str) -> None:
    start = time.process_time()
    keys = fn(*args)
    np.save(path + ".keys.npy", keys)
    with open(path + ".seconds", "w") as f:
        f.write(repr(time.process_time() - start))


def cpu_seconds(pid: int) -> float | None:
    """CPU time (user + system) a live process has used so far, from /proc (None where there is none)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def run_with_timeout(fn, args: tuple, timeout: float | None) -> tuple[np.ndarray | None, float | None, str]:
    """``fn(*args)`` in a forked process (it inherits the data, nothing is copied), stopped after ``timeout`` s.

    Returns (keys, CPU seconds of the child, "ok"), or (None, CPU seconds used
    when stopped or None, "timeout") when it ran out of (wall) time, or (None,
    None, "failed ..."). The peers are
    single-threaded, so on a quiet machine CPU time is their wall time; on a
    shared one it leaves out the time others took.
    """
    ctx = multiprocessing.get_context("fork")
    with tempfile.TemporaryDirectory(prefix="allpairs-peer-") as tmp:
        path = os.path.join(tmp, "result")
        proc = ctx.Process(target=_child, args=(fn, args, path))
        proc.start()
        proc.join(timeout)
        if proc.is_alive():
            used = cpu_seconds(proc.pid)
            proc.terminate()
            proc.join()
            return None, used, "timeout"
        if proc.exitcode != 0 or not os.path.exists(path + ".seconds"):
            return None, None, f"failed (exit status {proc.exitcode})"
        with open(path + ".seconds") as f:
            seconds = float(f.read())
        return np.load(path + ".keys.npy"), seconds, "ok"


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
