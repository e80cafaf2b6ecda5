"""Prefix-filter join of distinct sets: index, probe in parallel tasks, verify.

Every set's indexing prefix goes into one static inverted index; each set then
probes the postings of strictly earlier (hence not larger) sets only, so probes
are independent and run as tasks on threads (the kernels release the GIL).
Tasks are contiguous ranges of probe sets cut at equal estimated cost, and
their results are concatenated in task order: the output does not depend on
the number of threads.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .._numba import resolve_jobs
from ..measures import Threshold
from ..verify import verify_candidates
from ._kernel import build_index, first_of_size, probe, probe_cost


@dataclass
class SetPairs:
    """Pairs of distinct sets with ``J >= t``: ``left < right`` index distinct sets; int32 arrays."""

    left: np.ndarray
    right: np.ndarray
    overlap: np.ndarray
    candidates: int


def _cut(cost: np.ndarray, n_tasks: int) -> np.ndarray:
    """Boundaries of ``n_tasks`` contiguous ranges of roughly equal total cost."""
    total = np.cumsum(cost, dtype=np.float64)
    if len(total) == 0 or total[-1] == 0:
        return np.array([0, len(cost)], np.int64)
    goals = total[-1] * np.arange(1, n_tasks) / n_tasks
    inner = np.searchsorted(total, goals, side="left") + 1
    return np.unique(np.concatenate([[0], inner, [len(cost)]]).astype(np.int64))


def prefix_join(indptr: np.ndarray, tokens: np.ndarray, num_tokens: int, threshold: Threshold,
                *, jobs: int | None = None, progress: Callable[[int, int], None] | None = None) -> SetPairs:
    """All pairs of distinct sets with Jaccard >= threshold, exactly.

    Parameters
    ----------
    indptr : int64 (m + 1,), tokens : int32
        Distinct non-empty sets sorted by (size, tokens), tokens strictly
        increasing ranks below ``num_tokens`` (see :func:`allpairs.order.order_sets`).
    threshold : Threshold
    jobs : int, optional
        Threads; default all cores. The result is the same for any value.
    progress : callable(done, total), optional
        Called after each task with the probe cost done so far and in all.
    """
    jobs = resolve_jobs(jobs)
    p, q = threshold.p, threshold.q
    m = len(indptr) - 1
    list_ptr, post_set, post_pos = build_index(indptr, tokens, num_tokens, p, q)
    first = first_of_size(indptr)
    cost = probe_cost(indptr, tokens, list_ptr, p, q)
    bounds = _cut(cost, max(1, min(m, 64 * jobs)))
    cum = np.concatenate([[0], np.cumsum(cost)])
    total_cost = int(cum[-1])

    def task(k):
        lo, hi = int(bounds[k]), int(bounds[k + 1])
        x, y, counted, li, lj = probe(indptr, tokens, list_ptr, post_set, post_pos, first, p, q, lo, hi)
        vx, vy, ov = verify_candidates(indptr, tokens, x, y, threshold, counted, li, lj)
        return vy, vx, ov, len(x)

    parts = []
    n_tasks = len(bounds) - 1
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for k, part in enumerate(pool.map(task, range(n_tasks))):
            parts.append(part)
            if progress is not None:
                progress(int(cum[bounds[k + 1]]), total_cost)
    if not parts:
        empty = np.empty(0, np.int32)
        return SetPairs(empty, empty, empty, 0)
    return SetPairs(
        left=np.concatenate([pt[0] for pt in parts]),
        right=np.concatenate([pt[1] for pt in parts]),
        overlap=np.concatenate([pt[2] for pt in parts]),
        candidates=sum(pt[3] for pt in parts),
    )
