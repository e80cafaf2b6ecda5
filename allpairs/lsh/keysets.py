"""Stage 3 of the LSH path: documents as distinct sets of their raw shingle keys, no global rank order.

MinHash is a function of a set's keys alone, and verification only needs each
set's tokens in one common increasing order: the keys' own order serves both.
So the LSH path skips the exact path's ranking of every key by document
frequency (:func:`allpairs.order.order_sets`, a hash table over all keys) and
keeps only what it needs: each document's keys sorted with repeats dropped,
identical documents grouped into one distinct set
(:func:`allpairs.order.group_sets`), and the number of distinct keys (not the
keys themselves: nothing on this path looks them up).
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from .._kernels.jit import resolve_jobs
from ..order._kernel import count_distinct, gather_csr, rows_increasing
from .._kernels.csr import distinct_rows
from ..order import OrderedSets, group_sets, partition_bits


@dataclass
class KeyedSets(OrderedSets):
    """:class:`~allpairs.order.OrderedSets` whose tokens are the shingle keys themselves.

    ``tokens`` is uint64, strictly increasing within each set: the keys
    themselves, so ``keys`` is empty, and ``distinct_keys`` (what
    ``num_tokens`` gives) counts the distinct ones.
    """

    distinct_keys: int = field(default=0)

    @property
    def num_tokens(self) -> int:
        return self.distinct_keys

    def set_keys(self) -> tuple[np.ndarray, np.ndarray]:
        return self.indptr, self.tokens

    def rows_keys(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The distinct sets ``rows`` (in that order) as CSR of their keys."""
        return gather_csr(self.indptr, self.tokens, np.asarray(rows, dtype=np.int64))


def keyed_sets(indptr: np.ndarray, keys: np.ndarray, *, min_size: int = 1, jobs: int | None = None) -> KeyedSets:
    """Documents' shingle keys as distinct sets of keys, sorted by size then by keys; identical ones grouped.

    Parameters
    ----------
    indptr : int64 (n_docs + 1,), keys : uint64
        As :func:`allpairs.order.order_sets` takes them (repeats allowed, any order).
    min_size : int
        Documents with fewer distinct keys get no set (``doc_set`` -1).
    jobs : int, optional
        Threads (default: every core): rows are sorted in blocks side by side,
        and the distinct keys are counted while the sets are grouped. The
        result does not depend on it.
    """
    indptr = np.ascontiguousarray(indptr, dtype=np.int64)
    keys = np.ascontiguousarray(keys, dtype=np.uint64)
    jobs = resolve_jobs(jobs)
    if rows_increasing(indptr, keys):  # already as needed (hash_sets(..., sorted_rows=True) gives them so)
        doc_ptr, doc_keys = indptr, keys
    else:
        doc_ptr, doc_keys = distinct_rows(indptr, keys, jobs)
    if jobs == 1:
        distinct = _count_keys(doc_keys)
        sets = group_sets(doc_ptr, doc_keys, doc_keys[:0], total_shingles=len(keys), min_size=min_size)
    else:
        with ThreadPoolExecutor(1) as pool:  # the kernels release the GIL
            counting = pool.submit(_count_keys, doc_keys)
            sets = group_sets(doc_ptr, doc_keys, doc_keys[:0], total_shingles=len(keys), min_size=min_size)
            distinct = counting.result()
    return KeyedSets(**vars(sets), distinct_keys=distinct)


def _count_keys(keys: np.ndarray) -> int:
    """The number of distinct ``keys`` (:func:`~allpairs.order._kernel.count_distinct`: 0.04-0.05 s for 3.9 M
    random keys here, against 0.08-0.09 s for a sort and a mask and 6.0 s for ``np.unique`` in numpy 2.4)."""
    return int(count_distinct(keys, np.int64(partition_bits(len(keys)))))
