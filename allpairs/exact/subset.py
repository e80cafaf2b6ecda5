"""The prefix-filter join restricted to some of the distinct sets (for LSH buckets too large to expand).

The chosen sets keep their relative order, so they are still sorted by (size,
tokens) and their tokens still follow the one global order: the join of the
sub-corpus is :func:`allpairs.exact.prefix.prefix_join` unchanged, and only the
set indices are translated back.
"""
from __future__ import annotations

from typing import Callable, Iterator

import numpy as np

from ..measures import Threshold
from .prefix import SetPairs, prefix_join, prefix_join_blocks


def prefix_join_rows(indptr: np.ndarray, tokens: np.ndarray, num_tokens: int, rows: np.ndarray,
                     threshold: Threshold, *, jobs: int | None = None) -> SetPairs:
    """All pairs among the sets ``rows`` with Jaccard >= threshold, exactly, in indices of the whole corpus.

    Parameters
    ----------
    indptr : int64 (m + 1,), tokens : int32
        Distinct sets as :func:`allpairs.exact.prefix.prefix_join` takes them.
    num_tokens : int
    rows : int (k,)
        Strictly increasing indices of the sets to join among themselves.
    threshold : Threshold
    jobs : int, optional

    Returns
    -------
    SetPairs
        ``left < right`` index the whole corpus.
    """
    sub_indptr, sub_tokens, back = _sub_corpus(indptr, tokens, rows)
    found = prefix_join(sub_indptr, sub_tokens, num_tokens, threshold, jobs=jobs)
    return SetPairs(back[found.left], back[found.right], found.overlap, found.candidates)


def prefix_join_rows_blocks(indptr: np.ndarray, tokens: np.ndarray, num_tokens: int, rows: np.ndarray,
                            threshold: Threshold, *, block_pairs: int, jobs: int | None = None,
                            progress: Callable[[int, int], None] | None = None) -> Iterator[SetPairs]:
    """The pairs of :func:`prefix_join_rows` as blocks (:func:`allpairs.exact.prefix.prefix_join_blocks`)."""
    sub_indptr, sub_tokens, back = _sub_corpus(indptr, tokens, rows)
    for found in prefix_join_blocks(sub_indptr, sub_tokens, num_tokens, threshold, jobs=jobs,
                                    block_pairs=block_pairs, progress=progress):
        yield SetPairs(back[found.left], back[found.right], found.overlap, found.candidates)


def _sub_corpus(indptr: np.ndarray, tokens: np.ndarray, rows) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The sets ``rows`` as CSR of their own, and the int32 map back to the whole corpus' set indices."""
    rows = np.asarray(rows, dtype=np.int64)
    if rows.ndim != 1 or (rows.size and (rows[0] < 0 or rows[-1] >= len(indptr) - 1 or (np.diff(rows) <= 0).any())):
        raise ValueError("rows must be strictly increasing set indices")
    starts = indptr[rows]
    sizes = indptr[rows + 1] - starts
    sub_indptr = np.zeros(rows.size + 1, np.int64)
    np.cumsum(sizes, out=sub_indptr[1:])
    # Position p of the sub-corpus reads tokens[starts[set] + p - sub_indptr[set]].
    gather = np.arange(sub_indptr[-1], dtype=np.int64) + np.repeat(starts - sub_indptr[:-1], sizes)
    return sub_indptr, tokens[gather], rows.astype(np.int32)
