"""What ``all_pairs`` and ``SearchIndex`` share: threshold cut-offs, prefix lengths, the result order.

SetSimilaritySearch compares a float with the user's threshold object
(``q >= t`` in its position filter, ``q < t`` in its verification), where
``q`` is a Python float or, for cosine, a ``numpy.float64``; with a numpy
threshold (``np.float32(0.2)``) numpy decides the precision of that
comparison. The kernels compare float64 with a cut-off instead: the least
``q`` for which SetSimilaritySearch's comparison passes, found by bisecting
the float64 values with that very comparison. Its prefix lengths come from
its own integer arithmetic, evaluated once per distinct set length.

Its results come in the iteration order of the Python ``set`` its candidates
are collected in. That order follows from the values inserted and the order
of their first insertion (CPython builds ``set(list)`` one element at a time;
a repeat changes nothing), which the kernels report: the set is rebuilt here
from them, for the probes with two results or more.
"""
from __future__ import annotations

import math
import struct

import numpy as np

from ._kernel import build_postings, probe_all_pairs
from .utils import _similarity_funcs

#: SetSimilaritySearch's measure names -> the compat kernels' codes (not :data:`allpairs.measures.MEASURES`'s).
COMPAT_CODES = {"jaccard": 0, "cosine": 1, "containment": 2, "containment_min": 3}
COSINE = COMPAT_CODES["cosine"]
#: Candidates a call of the all-pairs kernel may produce before it returns: few for the first
#: (the first pair comes soon), then more, up to the last (the memory the output takes is bounded).
FIRST_BUDGET = 256
LAST_BUDGET = 1 << 16

_INF_BITS = 0x7FF0000000000000


def _float(bits: int) -> float:
    return struct.unpack("<d", struct.pack("<q", bits))[0]


def check_arguments(sets, similarity_func_name, similarity_threshold) -> None:
    """SetSimilaritySearch's checks of its three arguments, in its order, with its ``ValueError`` messages."""
    if not isinstance(sets, list) or len(sets) == 0:
        raise ValueError("Input parameter sets must be a non-empty list.")
    if similarity_func_name not in _similarity_funcs:
        raise ValueError("Similarity function {} is not supported.".format(similarity_func_name))
    if similarity_threshold < 0 or similarity_threshold > 1.0:
        raise ValueError("Similarity threshold must be in the range [0, 1].")


def least_passing(passes) -> float:
    """The least float64 ``q >= 0`` for which ``passes(q)`` (monotone in ``q``) holds; +inf if none does."""
    if passes(0.0):
        return 0.0
    if not passes(math.inf):
        return math.inf
    lo, hi = 0, _INF_BITS  # non-negative floats are ordered as their bit patterns
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if passes(_float(mid)):
            hi = mid
        else:
            lo = mid
    return _float(hi)


def cutoffs(measure: str, threshold) -> tuple[float, float]:
    """(position filter, verification) cut-offs: ``q >= cut`` in float64 decides as SetSimilaritySearch's
    ``q >= threshold`` and ``not q < threshold`` do, ``q`` of the type it computes for ``measure``."""
    kind = np.float64 if COMPAT_CODES[measure] == COSINE else float
    position = least_passing(lambda q: kind(q) >= threshold)
    verified = least_passing(lambda q: not kind(q) < threshold)
    return position, verified


def prefix_lengths(lengths: np.ndarray, overlap_threshold_func, threshold) -> np.ndarray:
    """``len(s[:len(s) - overlap_threshold_func(len(s), threshold) + 1])`` for each length (int64).

    SetSimilaritySearch's prefix, Python's slice rules included (a negative
    end counts from the end), evaluated once per distinct length.
    """
    distinct = np.unique(lengths)
    values = []
    for n in distinct.tolist():
        values.append(len(range(n)[: n - overlap_threshold_func(n, threshold) + 1]))
    return np.asarray(values, np.int64)[np.searchsorted(distinct, lengths)]


def in_set_order(cand: np.ndarray, a: int, b: int, keep: np.ndarray, where: np.ndarray) -> np.ndarray:
    """Positions in ``[a, b)`` of the kept candidates, in the iteration order of ``set(cand[a:b])``.

    ``cand[a:b]`` holds distinct ints in the order of their first insertion;
    ``where`` is scratch space indexed by candidate.
    """
    seg = cand[a:b]
    where[seg] = np.arange(a, b)
    pos = where[np.fromiter(set(seg.tolist()), np.int64, b - a)]
    return pos[keep[pos]]


def self_join(ranked, measure: str, threshold, overlap_threshold_func):
    """SetSimilaritySearch's ``all_pairs`` over ``ranked`` sets, in its order: yields ``(count, pairs)`` chunks.

    Each chunk's pairs are an iterator of ``(x, y, similarity)`` with numpy
    int64 indices, ``x > y``, and the similarity a Python float
    (``numpy.float64`` for cosine). Memory: the index of prefixes and one
    chunk's candidates, never the whole output.
    """
    indptr, tokens = ranked.indptr, ranked.tokens
    lengths = np.diff(indptr)
    n = len(lengths)
    perm = np.argsort(np.array(lengths.tolist()))  # the call SetSimilaritySearch makes, ties and all
    prefix = prefix_lengths(lengths, overlap_threshold_func, threshold)
    position_cut, similarity_cut = cutoffs(measure, threshold)
    code = COMPAT_CODES[measure]
    post_ptr, post_set, post_pos = build_postings(indptr, tokens, perm, prefix, ranked.num_tokens)
    filled = np.zeros(ranked.num_tokens, np.int64)
    stamp = np.zeros(n, np.int64)
    cap = LAST_BUDGET + n
    cand = np.empty(cap, np.int64)
    cand_sim = np.empty(cap, np.float64)
    cand_keep = np.empty(cap, np.bool_)
    probe_end = np.empty(n + 1, np.int64)
    where = np.empty(n, np.int64)
    budget = FIRST_BUDGET
    step = 0
    while step < n:
        nxt = probe_all_pairs(indptr, tokens, perm, prefix, post_ptr, post_set, post_pos, filled, stamp, code,
                              position_cut, similarity_cut, step, budget, cand, cand_sim, cand_keep, probe_end)
        ends = probe_end[: nxt - step]
        total = int(ends[-1]) if len(ends) else 0
        keep = cand_keep[:total]
        sel = np.flatnonzero(keep)
        if len(sel):
            kept_before = np.zeros(total + 1, np.int64)
            np.cumsum(keep, out=kept_before[1:])
            starts = np.concatenate(([0], ends[:-1]))
            kept = kept_before[ends] - kept_before[starts]
            for p in np.flatnonzero(kept >= 2).tolist():
                a, b = int(starts[p]), int(ends[p])
                sel[kept_before[a]:kept_before[b]] = in_set_order(cand, a, b, cand_keep, where)
            x1 = np.repeat(perm[step:nxt], kept)
            x2 = cand[sel]
            sims = cand_sim[sel]
            pairs = zip(np.maximum(x1, x2), np.minimum(x1, x2), sims if code == COSINE else sims.tolist())
            yield len(sel), pairs
        step = nxt
        budget = min(budget * 4, LAST_BUDGET)


def postings_for_index(ranked, index_prefix: np.ndarray):
    """The inverted lists of ``SearchIndex``: each set's index prefix, sets in input order."""
    n = len(ranked.indptr) - 1
    return build_postings(ranked.indptr, ranked.tokens, np.arange(n, dtype=np.int64), index_prefix,
                          ranked.num_tokens)
