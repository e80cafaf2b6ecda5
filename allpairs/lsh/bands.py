"""Locality-sensitive hashing by banding: candidate pairs from MinHash signatures.

Leskovec, Rajaraman, Ullman, *Mining of Massive Datasets*, ch. 3.4: split the K
values of each signature into ``b`` bands of ``r`` rows; two sets are a
candidate pair if they agree on all ``r`` values of at least one band, which
happens with probability ``1 - (1 - s**r)**b`` (:mod:`allpairs.lsh.scurve`).

Buckets are found by sorting, not hashing into a dict: per band, every
non-empty row gets one 64-bit key mixed from its ``r`` values, rows are sorted
by key, and each run of equal keys is a bucket (checked value by value, so a
64-bit key collision never merges two buckets). Buckets of more than
``max_bucket`` rows (boilerplate or near-empty documents) are reported and not
expanded, so that one of them cannot make the candidate count quadratic.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from numbers import Integral

import numpy as np

from ..errors import UsageError
from . import _kernel
from .._numba import resolve_jobs
from .minhash import _check_positive, empty_signatures

__all__ = ["Candidates", "candidates", "check_banding"]


@dataclass(frozen=True)
class Candidates:
    """Candidate pairs of an LSH banding and what the banding left out.

    Attributes
    ----------
    left, right : ndarray of int32, shape (m,)
        Row indices of the candidate pairs, ``left < right``, sorted by
        ``(left, right)``, each pair once.
    bands, rows : int
        The banding: ``bands`` bands of ``rows`` signature values each.
    max_bucket : int or None
        The largest bucket that was expanded into pairs (None: no limit).
    oversized_band, oversized_size : ndarray of int32 / int64, shape (q,)
        Band and size of every bucket larger than ``max_bucket``, sorted.
    skipped_pairs : int
        Pairs the oversized buckets would have produced, summed over bands
        (a pair in two oversized buckets counts twice).
    largest_bucket : ndarray of int64, shape (bands,)
        The largest bucket of each band, expanded or not (0 if every row is empty).
    band_pairs : int
        Pairs produced by the expanded buckets of all bands before the pairs
        found in several bands were merged: the work of banding.
    empty : int
        Rows left out because their set is empty.
    """

    left: np.ndarray
    right: np.ndarray
    bands: int
    rows: int
    max_bucket: int | None
    oversized_band: np.ndarray
    oversized_size: np.ndarray
    skipped_pairs: int
    largest_bucket: np.ndarray
    band_pairs: int
    empty: int

    def __len__(self) -> int:
        return int(self.left.shape[0])

    @property
    def oversized(self) -> list[tuple[int, int]]:
        """``(band, size)`` of every bucket that was not expanded, sorted."""
        return list(zip(self.oversized_band.tolist(), self.oversized_size.tolist()))


def check_banding(bands: int, rows: int, num_perm: int) -> None:
    """Raise :class:`UsageError` unless ``bands, rows >= 1`` and ``bands * rows <= num_perm``."""
    _check_positive("bands", bands)
    _check_positive("rows", rows)
    if bands * rows > num_perm:
        raise UsageError(f"bands × rows = {bands} × {rows} = {bands * rows} exceeds num_perm {num_perm}; "
                         f"lower one of them or raise --num-perm")


def candidates(sig, bands: int, rows: int, *, max_bucket: int | None = None, empty=None,
               jobs: int | None = None) -> Candidates:
    """Pairs of rows that share a bucket in at least one band.

    Parameters
    ----------
    sig : array of unsigned int, shape (n, K)
        Signatures (:func:`allpairs.lsh.minhash.signatures`), full or b-bit.
    bands, rows : int
        ``b`` bands of ``r`` values; band ``j`` is columns ``j*r .. j*r + r - 1``;
        ``b * r <= K`` (columns past ``b * r`` are not used).
    max_bucket : int, optional
        Buckets of more rows than this (at least 2) are not expanded into pairs
        but reported in :attr:`Candidates.oversized`. Default: no limit.
    empty : array of bool, shape (n,), optional
        Which sets are empty (:func:`allpairs.lsh.minhash.empty_rows`); they
        never become candidates. Default: rows that are the empty-set sentinel
        (:func:`allpairs.lsh.minhash.empty_signatures`).
    jobs : int, optional
        Threads, one band at a time each; default every available CPU. The
        result does not depend on it.

    Returns
    -------
    Candidates
        ``left < right`` (int32), sorted, deduplicated, and the oversized buckets.

    Raises
    ------
    UsageError
        ``bands`` or ``rows`` below 1, ``bands * rows > K``, ``max_bucket`` below 2,
        ``jobs`` below 1.
    """
    sig = np.ascontiguousarray(sig)
    if sig.ndim != 2 or sig.dtype.kind != "u":
        raise ValueError(f"signatures must be a 2-D unsigned integer array, got shape {sig.shape} dtype {sig.dtype}")
    n, K = sig.shape
    check_banding(bands, rows, K)
    if max_bucket is not None:
        if isinstance(max_bucket, bool) or not isinstance(max_bucket, Integral) or max_bucket < 2:
            raise UsageError(f"max_bucket must be at least 2 (a bucket of 2 rows is one pair), got {max_bucket!r}; "
                             "leave --max-bucket out for no limit")
    jobs = resolve_jobs(jobs)
    if n > np.iinfo(np.int32).max:
        raise ValueError(f"{n} rows exceed int32 row ids")
    empty = empty_signatures(sig) if empty is None else np.asarray(empty, dtype=bool)
    if empty.shape != (n,):
        raise ValueError(f"empty must have shape ({n},), got {empty.shape}")
    ids = np.flatnonzero(~empty).astype(np.int32)
    limit = np.int64(n if max_bucket is None else max_bucket)

    def band(j: int):
        # Sort the rows by band key; runs of equal keys, checked value by value, are the buckets.
        with np.errstate(over="ignore"):  # wraparound is meant; matters only with NUMBA_DISABLE_JIT
            members, bounds = _kernel.band_buckets(sig, ids, j * rows, rows)
        sizes = np.diff(bounds)
        big = sizes[sizes > limit]
        pairs = _kernel.bucket_pairs(members, bounds, limit)
        return pairs, np.sort(big), int((big * (big - 1) // 2).sum()), int(sizes.max(initial=0))

    if jobs == 1 or bands == 1:
        results = [band(j) for j in range(bands)]
    else:
        with ThreadPoolExecutor(max_workers=min(jobs, bands)) as pool:
            results = list(pool.map(band, range(bands)))

    # A pair found in several bands is one candidate: sort the codes, keep each once.
    band_pairs = sum(r[0].shape[0] for r in results)
    codes = np.unique(np.concatenate([r[0] for r in results])) if band_pairs else np.empty(0, np.uint64)
    left = (codes >> np.uint64(32)).astype(np.int32)
    right = (codes & np.uint64(0xFFFFFFFF)).astype(np.int32)
    return Candidates(
        left=left,
        right=right,
        bands=int(bands),
        rows=int(rows),
        max_bucket=None if max_bucket is None else int(max_bucket),
        oversized_band=np.concatenate([np.full(r[1].shape[0], j, np.int32) for j, r in enumerate(results)]),
        oversized_size=np.concatenate([r[1] for r in results]).astype(np.int64),
        skipped_pairs=sum(r[2] for r in results),
        largest_bucket=np.array([r[3] for r in results], dtype=np.int64),
        band_pairs=int(band_pairs),
        empty=int(empty.sum()),
    )
