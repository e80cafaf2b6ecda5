"""Stage 3: one global token order, rare to frequent; identical sets collapsed.

Every shingle key becomes a rank: rank 0 is the key in the fewest documents,
ties broken by first occurrence in the input (so the order, like everything
else, depends only on the input). Each set
becomes its ranks in increasing order, so a set's first tokens are its rarest:
the prefix filter then touches short posting lists (Bayardo et al. 2007, §4).

Identical sets are joined once: documents with equal shingle sets form one
group, represented by one distinct set, and expanded again at output (Mann et
al. 2016 found this the main robustness win on real data). Distinct sets are
sorted by size, then lexicographically, which the prefix index relies on.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._kernels import malloc as _malloc
from .._kernels.csr import block_edges
from .._kernels.jit import resolve_jobs
from ._kernel import (gather_csr, gather_into, group_starts, number_groups, number_small, offset_ids,
                            partition_keys, rank_entries, sort_ties)


@dataclass(init=False, eq=False, repr=False)  # __init__ below is the one it would generate (see corpus.model.FACTORY)
class OrderedSets:
    """Distinct non-empty shingle sets in join order, and the documents behind them.

    Attributes
    ----------
    indptr : int64 (m + 1,)
        CSR offsets of the ``m`` distinct sets, sorted by (size, tokens).
    tokens : int32 (indptr[-1],)
        Ranks, strictly increasing within each set.
    keys : uint64 (num_tokens,)
        The shingle key of each rank (for MinHash, which must not depend on the corpus).
    group_indptr : int64 (m + 1,), group_docs : int32
        Documents whose shingle set is distinct set ``i``: ``group_docs[group_indptr[i]:group_indptr[i+1]]``, ascending.
    doc_set : int32 (n_docs,)
        The distinct set of each document, -1 for a document with no shingle.
    doc_size : int32 (n_docs,)
        Number of distinct shingles of each document.
    total_shingles : int
        Shingles counted with repetition within documents (as produced).
    """

    indptr: np.ndarray
    tokens: np.ndarray
    keys: np.ndarray
    group_indptr: np.ndarray
    group_docs: np.ndarray
    doc_set: np.ndarray
    doc_size: np.ndarray
    total_shingles: int

    def __init__(self, indptr: np.ndarray, tokens: np.ndarray, keys: np.ndarray, group_indptr: np.ndarray,
                 group_docs: np.ndarray, doc_set: np.ndarray, doc_size: np.ndarray, total_shingles: int) -> None:
        self.indptr = indptr
        self.tokens = tokens
        self.keys = keys
        self.group_indptr = group_indptr
        self.group_docs = group_docs
        self.doc_set = doc_set
        self.doc_size = doc_size
        self.total_shingles = total_shingles

    @property
    def num_sets(self) -> int:
        return len(self.indptr) - 1

    @property
    def num_docs(self) -> int:
        return len(self.doc_set)

    @property
    def num_tokens(self) -> int:
        return len(self.keys)

    def set_keys(self) -> tuple[np.ndarray, np.ndarray]:
        """The distinct sets as CSR of their shingle keys (uint64), for MinHash."""
        return self.indptr, self.keys[self.tokens]


#: Entries per partition of the keys that :func:`number_groups` aims at: its hash
#: table per partition (16 bytes a slot, half full) then stays in the L2 cache.
_PARTITION_ENTRIES = 4096


#: The keys are copied out, partition by partition, in this many rounds (or more,
#: for a partition larger than a round): the copies take 16 bytes a key, over
#: this many rounds.
_COPY_PARTS = 8
#: ... but in rounds of at least this many keys (8 MiB of copies): each round reads every entry, and
#: for a small input the rounds cost more than the numbering (8 rounds over Kosarak's 375 k keys:
#: ~50 M instructions, a third of a whole run at t = 0.9). Up to this many keys, the keys are first
#: numbered by one table with no copy (:func:`~allpairs.order._kernel.number_small`), which gives up
#: past 32,768 distinct keys: on Kosarak's 375 k keys (19 k distinct) the copies and partitions cost
#: ~39 M instructions and 6 MiB of fresh pages (~1,470 page faults), the one table ~15 M and 1 MiB.
_COPY_AT_LEAST = 1 << 19


#: Keys from which the work arrays freed here are handed back to the system (malloc_trim) at once. Below it
#: they are a few MiB, which the next step takes again at once, a page fault per page: on Kosarak's
#: 375 k keys handing them back cost ~850 page faults at t = 0.9 (~1,400 at 0.5) to lower the peak 1.2 MiB.
_RELEASE_FROM = 1 << 21


def partition_bits(n: int) -> int:
    """log2 of the number of partitions for ``n`` entries: about _PARTITION_ENTRIES each, 2 to 4096 of them."""
    return min(max((n // _PARTITION_ENTRIES).bit_length(), 1), 12)


def order_sets(indptr: np.ndarray, keys: np.ndarray, *, min_size: int = 1, jobs: int | None = 1) -> OrderedSets:
    """Rank shingle keys rare to frequent and turn documents into distinct sorted sets.

    Parameters
    ----------
    indptr : int64 (n_docs + 1,)
        CSR offsets: document ``d`` has keys ``keys[indptr[d]:indptr[d+1]]``.
    keys : uint64
        Shingle keys, repeats allowed, any order.
    min_size : int
        Documents with fewer distinct shingles get no set (``doc_set`` -1);
        empty documents never get one.
    jobs : int, optional
        Threads numbering the keys (default 1; None or 0: every core). The
        result does not depend on it.
    """
    indptr = np.ascontiguousarray(indptr, dtype=np.int64)
    keys = np.ascontiguousarray(keys, dtype=np.uint64)
    # Ranks (document frequency ascending, ties by first occurrence), and each
    # document's distinct ranks in increasing order, in place of its keys. Work
    # arrays of large pages where the system has them (Kosarak, t = 0.9: ~700 fewer
    # page faults of the run's ~7,100); pages past the distinct keys are never touched.
    n = len(keys)
    ids = np.int32 if n < 2**31 else np.int64
    entry, df_rank = _malloc.large_empty(n, ids), _malloc.large_empty(n, ids)
    with np.errstate(over="ignore"):  # NUMBA_DISABLE_JIT: uint64 products wrap by design
        n_ids = _number_keys(indptr, keys, entry, df_rank, resolve_jobs(jobs))
        if n >= _RELEASE_FROM:
            _malloc.release()
        if n_ids >= 2**31:
            raise OverflowError("more than 2**31 distinct shingles")
        key_of = np.empty(n_ids, np.uint64)
        doc_ptr = rank_entries(indptr, keys, entry, df_rank, np.int64(n_ids), key_of)
    del df_rank
    if n >= _RELEASE_FROM:
        _malloc.release()
    # Ranks are below 2**31: int32 tokens whatever the work array was.
    doc_tokens = entry[: doc_ptr[-1]].astype(np.int32, copy=False)
    return group_sets(doc_ptr, doc_tokens, key_of, total_shingles=len(keys), min_size=min_size)


def _number_keys(indptr: np.ndarray, keys: np.ndarray, entry: np.ndarray, df: np.ndarray, jobs: int) -> int:
    """:func:`~allpairs.order._kernel.number_groups` over all the keys' partitions: the number of ids.

    With ``jobs > 1`` the groups of partitions are cut into runs of about equal
    entries, numbered side by side from 0 each (a run writes only its own
    partitions' entries), then each run's ids are moved up past the runs
    before it: the ids of one pass in order.
    """
    n = len(keys)
    if n <= _COPY_AT_LEAST:  # one round of copies at most: try one table over all the keys, with no copy
        n_ids = int(number_small(indptr, keys, entry, df))
        if n_ids >= 0:
            return n_ids
    pbits = partition_bits(n)
    part = max(n // _COPY_PARTS, min(n, _COPY_AT_LEAST)) + 1
    start, groups = partition_keys(keys, pbits, part, entry)
    edges = block_edges(0, np.searchsorted(start[groups], np.linspace(0, n, jobs + 1)[1:-1]), len(groups) - 1)

    def number(a: int, b: int) -> tuple[int, np.ndarray]:
        local = df if a == 0 else np.empty(start[groups[b]] - start[groups[a]], df.dtype)
        return int(number_groups(indptr, keys, pbits, groups[a:b + 1], start, entry, local,
                                 *_copy_buffers(part, entry.dtype))), local

    runs = list(zip(edges[:-1].tolist(), edges[1:].tolist()))
    if len(runs) == 1:
        return number(*runs[0])[0]
    from concurrent.futures import ThreadPoolExecutor  # here: a run on one thread does not load it

    with ThreadPoolExecutor(len(runs)) as pool:
        numbered = list(pool.map(lambda run: number(*run), runs))
        offsets = np.cumsum([0] + [k for k, _ in numbered]).tolist()

        def move(r: int) -> None:
            (a, b), (k, local), off = runs[r], numbered[r], offsets[r]
            offset_ids(keys, pbits, int(groups[a]), int(groups[b]), entry, off)
            df[off:off + k] = local[:k]

        list(pool.map(move, range(1, len(runs))))
    return offsets[-1]


def _copy_buffers(size: int, dtype) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The buffers a group of partitions is copied out to (see :func:`~allpairs.order._kernel.number_groups`)."""
    return np.empty(size, np.uint64), np.empty(size, dtype), np.empty(size, dtype)


#: Keys below this are sorted by numpy's radix sort (its stable sort of 8- and 16-bit integers).
_RADIX_BELOW = 1 << 16


def stable_order(values: np.ndarray, low: int = 0) -> np.ndarray:
    """``np.argsort(values, kind="stable")`` for integers ``values`` >= ``low``: where they span fewer than
    65,536 values, their offsets from ``low`` as 16-bit integers, which numpy sorts by radix in linear
    time (the same order; its timsort of 35,000 ints took ~13 M instructions of a 0.8 G Kosarak run)."""
    if len(values) and int(values.max()) - low < _RADIX_BELOW:
        values = (values - low).astype(np.uint16) if low else values.astype(np.uint16)
    return np.argsort(values, kind="stable")


#: The most bytes of tokens :func:`group_sets` gathers into large pages. With the kernel's defrag in "madvise"
#: mode (the default), a large page asked for is compacted for inside the fault when free memory is
#: fragmented: the 1 M Zipf sets' 108 MB took 0.3-1.0 s more to order so (order 1.44-2.23 against 1.07-1.26 s
#: gathered by the kernel's own allocation, 4 interleaved runs on 2026-12-04; equal once memory was compacted),
#: where the small pages' faults cost ~35 ms.
GATHERED_LARGE_UNTIL = 1 << 25


def group_sets(doc_ptr: np.ndarray, doc_tokens: np.ndarray, keys: np.ndarray, *, total_shingles: int,
               min_size: int = 1) -> OrderedSets:
    """Documents given as sorted distinct tokens, grouped into distinct sets sorted by size, then lexicographically.

    Parameters
    ----------
    doc_ptr : int64 (n_docs + 1,), doc_tokens : int32 (or uint64)
        Each document's distinct tokens, strictly increasing.
    keys : uint64
        What :attr:`OrderedSets.keys` holds.
    total_shingles : int
    min_size : int
        As for :func:`order_sets`.
    """
    n_docs = len(doc_ptr) - 1
    doc_size = np.diff(doc_ptr)

    # Distinct sets, by size then lexicographically; empty documents are left out. Two stable sorts,
    # by first token then by size, leave only ties for the comparison sort.
    order = np.flatnonzero(doc_size >= max(1, min_size))
    order = order[stable_order(doc_tokens[doc_ptr[order]])]
    order = order[stable_order(doc_size[order])]
    order = sort_ties(doc_ptr, doc_tokens, order)
    starts = group_starts(doc_ptr, doc_tokens, order)
    set_of_sorted = np.cumsum(starts) - 1
    first = order[starts]
    if doc_tokens.nbytes <= GATHERED_LARGE_UNTIL:
        # Into large pages (one fault for Kosarak's 1.5 MB where there were ~370): room for every token, of
        # which pages never written take no memory.
        set_ptr, set_tokens = np.empty(len(first) + 1, np.int64), _malloc.large_empty(len(doc_tokens),
                                                                                      doc_tokens.dtype)
        gather_into(doc_ptr, doc_tokens, first, set_ptr, set_tokens)
        set_tokens = set_tokens[: set_ptr[-1]]
    else:
        set_ptr, set_tokens = gather_csr(doc_ptr, doc_tokens, first)

    doc_set = np.full(n_docs, -1, np.int32)
    doc_set[order] = set_of_sorted
    # Group members ascending by document: documents stably sorted by their set (those without one first).
    by_set = stable_order(doc_set, low=-1)
    group_docs = by_set[n_docs - len(order):].astype(np.int32)
    group_indptr = np.zeros(len(first) + 1, np.int64)
    np.cumsum(np.bincount(set_of_sorted, minlength=len(first)), out=group_indptr[1:])

    return OrderedSets(
        indptr=set_ptr,
        tokens=set_tokens,
        keys=keys,
        group_indptr=group_indptr,
        group_docs=group_docs,
        doc_set=doc_set,
        doc_size=doc_size.astype(np.int32),
        total_shingles=int(total_shingles),
    )


