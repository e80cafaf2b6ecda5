"""The join's plan, from the bounds of :mod:`allpairs.measures`: each set's indexing and probing prefix lengths
and the window of partner sets its probe reads (sets sorted by size; AllPairs' size bound, Bayardo et al. 2007).

Every bound is worked out once per distinct size, in exact integers, and spread over the sets.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ..measures import MEASURES, Measure, Threshold


def per_size(bound: Callable[[int], int | None], sizes: np.ndarray, none: int = 0) -> np.ndarray:
    """``bound(size)`` for each entry of ``sizes`` (int64), computed once per distinct size in exact integers."""
    sizes = np.asarray(sizes)
    if len(sizes) and (sizes[1:] >= sizes[:-1]).all():  # sets sorted by size: runs of equal sizes, no sort
        starts, lengths = _runs(sizes)
        values = [bound(int(s)) for s in sizes[starts]]
        return np.repeat(np.array([none if v is None else v for v in values], np.int64), lengths)
    distinct, inverse = np.unique(sizes, return_inverse=True)
    values = [bound(int(s)) for s in distinct]
    return np.array([none if v is None else v for v in values], np.int64)[inverse]


def _runs(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start and length of each run of equal neighbours in ``values`` (non-empty)."""
    starts = np.flatnonzero(np.concatenate([[True], values[1:] != values[:-1]]))
    return starts, np.diff(np.append(starts, len(values)))


def join_plan(measure: Measure, threshold: Threshold, sizes: np.ndarray, *, lone: bool = False):
    """Per-set prefix lengths and partner windows of the join, from the measure's row.

    Returns (row used for α, index_len, probe_len, win_lo, win_hi), int64 arrays
    over the sets (sorted by size). Every bound is worked out once per distinct
    size and spread over the sets in one pass (Kosarak's 35,000 sets have 283
    sizes). ``lone`` (a symmetric self-join): sets that only an identical set
    could pair get prefixes of zero (:func:`lone_sizes`).
    """
    sizes = np.asarray(sizes)
    m = len(sizes)
    if not measure.symmetric:
        either = MEASURES["containment_either"]
        probe_len = per_size(lambda s: either.index_prefix(threshold, s), sizes)
        return (either, sizes.astype(np.int64), probe_len, np.arange(1, m + 1, dtype=np.int64),
                np.full(m, m, np.int64))
    if not m:
        empty = np.zeros(0, np.int64)
        return measure, empty, empty, empty, empty
    in_order = bool((sizes[1:] >= sizes[:-1]).all())
    if in_order:  # sets sorted by size: runs of equal sizes, no sort
        starts, lengths = _runs(sizes)
        distinct = sizes[starts]
    else:
        distinct, inverse = np.unique(sizes, return_inverse=True)
    arrays = measure.prefix_arrays(threshold, distinct)
    if arrays is not None:
        index_len, probe_len, smallest = arrays
    else:
        index_len = np.array([measure.index_prefix(threshold, int(s)) for s in distinct], np.int64)
        probe_len = np.array([measure.probe_prefix(threshold, int(s)) for s in distinct], np.int64)
        smallest = np.array([measure.partner_sizes(threshold, int(s))[0] for s in distinct], np.int64)
    # Where each size's window starts: the first set of its smallest partner size.
    win_lo = np.searchsorted(sizes, smallest, side="left").astype(np.int64)
    if lone:
        if not in_order:
            raise ValueError("lone sets are found among sets sorted by size")
        kept, alone = lone_sizes(measure, threshold, sizes, distinct, starts, win_lo)
        index_len = np.where(kept, index_len, 0)
        probe_len = np.where(alone, 0, probe_len)
    if in_order:
        index_len, probe_len, win_lo = (np.repeat(a, lengths) for a in (index_len, probe_len, win_lo))
    else:
        index_len, probe_len, win_lo = (a[inverse] for a in (index_len, probe_len, win_lo))
    return measure, index_len, probe_len, win_lo, np.arange(m, dtype=np.int64)


def lone_sizes(measure: Measure, threshold: Threshold, sizes: np.ndarray, distinct: np.ndarray,
               starts: np.ndarray, win_lo: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Which distinct sizes of a symmetric join are indexed and which probe nothing: ``(kept, lone)``, bool
    arrays over ``distinct`` (the sizes of ``sizes``, sorted, whose runs start at ``starts``; ``win_lo``, the
    first set of each one's window).

    A set of size s probes the sets of sizes ``[lo(s), s]`` (the size bound); when ``lo(s) = s`` and ``α(s, s)
    = s`` only a set identical to it would do, and the sets are distinct: it probes nothing (lone; at t = 0.9
    every set of fewer than 10 tokens). A set is indexed (kept) only if it is such a partner: of a size some
    larger size present admits, or of one whose sets may pair among themselves.
    """
    # The smallest partner size of each distinct size present: where its window starts.
    lo = np.where(win_lo < starts, sizes[win_lo.clip(max=len(sizes) - 1)], distinct)
    # The smallest partner size admitted by any larger size present (min over the later sizes).
    later_lo = np.append(np.minimum.accumulate(lo[::-1])[::-1][1:], np.iinfo(np.int64).max)
    # Whether two distinct sets of one size may pair: asked only where no other size would do.
    pairs_within = np.ones(len(distinct), np.bool_)
    ask = np.flatnonzero((lo >= distinct) | (later_lo > distinct))
    pairs_within[ask] = [measure.required_overlap(threshold, int(s), int(s)) < s for s in distinct[ask]]
    return pairs_within | (later_lo <= distinct), ~pairs_within & (lo >= distinct)
