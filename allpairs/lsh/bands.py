"""Locality-sensitive hashing by banding: candidate pairs from MinHash signatures.

Leskovec, Rajaraman, Ullman, *Mining of Massive Datasets*, ch. 3.4: split the K
values of each signature into ``b`` bands of ``r`` rows; two sets are a
candidate pair if they agree on all ``r`` values of at least one band, which
happens with probability ``1 - (1 - s**r)**b`` (:mod:`allpairs.lsh.scurve`).

Buckets are found by sorting, not hashing into a dict: per band, every
non-empty row gets one 64-bit key mixed from its ``r`` values, rows are sorted
by key, and each run of equal keys is a bucket (checked value by value, so a
64-bit key collision never merges two buckets).

Buckets of tiny or boilerplate sets can hold thousands of rows, whose pairs,
expanded one by one, make the work quadratic (12,000 two-token sets: 72 M
candidate pairs). So a bucket of more than ``max_expand`` rows (default
:data:`MAX_EXPAND`) is not expanded: its rows are marked, and the caller joins
the marked rows exactly and keeps the true pairs that share a marked bucket
(:func:`share_joined_bucket`), which are exactly the true pairs its expansion
would have given. Expansion then costs at most ``bands * n * (max_expand - 1) / 2``
pairs. Buckets of more than ``max_bucket`` rows are neither expanded nor
joined, only reported.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from numbers import Integral

import numpy as np

from ..errors import UsageError
from . import _kernel
from .._kernels.jit import resolve_jobs
from .limits import MAX_EXPAND, MAX_NUM_PERM
from .minhash import _check_positive, empty_signatures

__all__ = ["MAX_EXPAND", "Candidates", "candidates", "check_banding", "share_joined_bucket"]

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
        Buckets of more rows were skipped (None: no limit).
    max_expand : int or None
        Buckets of more rows (up to ``max_bucket``) were marked to be joined
        exactly instead of expanded (None: every bucket was expanded).
    joined : ndarray of bool, shape (bands, n), or (bands, 0) if no bucket is marked
        ``joined[j, i]``: row ``i`` sits in a marked bucket of band ``j``.
    joined_band, joined_size : ndarray of int32 / int64, shape (u,)
        Band and size of every marked bucket, sorted.
    joined_pairs : int
        Pairs the marked buckets would have produced, summed over bands.
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
    max_expand: int | None
    joined: np.ndarray
    joined_band: np.ndarray
    joined_size: np.ndarray
    joined_pairs: int
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

    @property
    def joined_buckets(self) -> list[tuple[int, int]]:
        """``(band, size)`` of every bucket marked to be joined exactly, sorted."""
        return list(zip(self.joined_band.tolist(), self.joined_size.tolist()))

    @property
    def joined_rows(self) -> np.ndarray:
        """Rows (int32, ascending) in a marked bucket of at least one band: what the caller joins exactly."""
        return np.flatnonzero(self.joined.any(axis=0)).astype(np.int32)


def check_banding(bands: int, rows: int, num_perm: int) -> None:
    """Raise :class:`UsageError` unless ``bands, rows >= 1`` and ``bands * rows <= num_perm``."""
    _check_positive("bands", bands)
    _check_positive("rows", rows)
    if bands * rows > num_perm:
        fix = (f"lower one of them or raise --num-perm (at most {MAX_NUM_PERM:,})" if bands * rows <= MAX_NUM_PERM
               else f"lower one of them: num_perm is at most {MAX_NUM_PERM:,}")
        raise UsageError(f"bands × rows = {bands} × {rows} = {bands * rows} exceeds num_perm {num_perm}; {fix}")


def _check_limit(name: str, value, least: int, why: str, fix: str) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, Integral) or value < least):
        raise UsageError(f"{name} must be at least {least} ({why}), got {value!r}; {fix}")


def candidates(sig, bands: int, rows: int, *, max_bucket: int | None = None, max_expand: int | None = MAX_EXPAND,
               empty=None, jobs: int | None = None) -> Candidates:
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
    max_expand : int, optional
        Buckets of more rows than this (at least 1), up to ``max_bucket``, are
        not expanded into pairs but marked in :attr:`Candidates.joined`; the
        caller joins those rows exactly and keeps the pairs that
        :func:`share_joined_bucket` accepts. Default :data:`MAX_EXPAND`; None
        expands every bucket up to ``max_bucket``.
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
        ``left < right`` (int32), sorted, deduplicated, from the expanded
        buckets; the marked and the oversized buckets.

    Raises
    ------
    UsageError
        ``bands`` or ``rows`` below 1, ``bands * rows > K``, ``max_bucket`` below 2,
        ``max_expand`` below 1, ``jobs`` below 1.
    """
    sig = np.ascontiguousarray(sig)
    if sig.ndim != 2 or sig.dtype.kind != "u":
        raise ValueError(f"signatures must be a 2-D unsigned integer array, got shape {sig.shape} dtype {sig.dtype}")
    n, K = sig.shape
    check_banding(bands, rows, K)
    _check_limit("max_bucket", max_bucket, 2, "a bucket of 2 rows is one pair", "leave --max-bucket out for no limit")
    _check_limit("max_expand", max_expand, 1, "1 joins every bucket exactly", "None expands every bucket")
    jobs = resolve_jobs(jobs)
    if n > np.iinfo(np.int32).max:
        raise ValueError(f"{n} rows exceed int32 row ids")
    empty = empty_signatures(sig) if empty is None else np.asarray(empty, dtype=bool)
    if empty.shape != (n,):
        raise ValueError(f"empty must have shape ({n},), got {empty.shape}")
    ids = np.flatnonzero(~empty).astype(np.int32)
    limit = n if max_bucket is None else int(max_bucket)
    expand = limit if max_expand is None else min(limit, int(max_expand))

    def band(j: int):
        # Sort the rows by band key; runs of equal keys, checked value by value, are the buckets.
        with np.errstate(over="ignore"):  # wraparound is meant; matters only with NUMBA_DISABLE_JIT
            members, bounds = _kernel.band_buckets(sig, ids, j * rows, rows)
        sizes = np.diff(bounds)
        big = sizes[sizes > limit]
        # Too large to expand, small enough to keep: mark the rows, for the caller's exact join.
        mid = sizes[(sizes > expand) & (sizes <= limit)]
        marked = members[:0]
        if mid.size:
            per_row = np.repeat(sizes, sizes)
            marked = members[(per_row > expand) & (per_row <= limit)]
        pairs = _kernel.bucket_pairs(members, bounds, np.int64(expand))
        return (pairs, np.sort(big), int((big * (big - 1) // 2).sum()), int(sizes.max(initial=0)),
                np.sort(mid), int((mid * (mid - 1) // 2).sum()), marked)

    if jobs == 1 or bands == 1:
        results = [band(j) for j in range(bands)]
    else:
        with ThreadPoolExecutor(max_workers=min(jobs, bands)) as pool:
            results = list(pool.map(band, range(bands)))

    # Rows of the marked buckets, per band (all False, and no memory to speak of, when there are none).
    joined = np.zeros((bands, n if any(r[6].size for r in results) else 0), dtype=bool)
    for j, r in enumerate(results):
        joined[j, r[6]] = True
    # A pair found in several bands is one candidate: sort the codes, keep each once.
    # (Sorting and dropping repeats: numpy 2.4's np.unique hashes and is ~50x slower on 3 M codes.)
    band_pairs = sum(r[0].shape[0] for r in results)
    codes = np.sort(np.concatenate([r[0] for r in results])) if band_pairs else np.empty(0, np.uint64)
    first = np.ones(codes.size, bool)
    first[1:] = codes[1:] != codes[:-1]
    codes = codes[first]
    left = (codes >> np.uint64(32)).astype(np.int32)
    right = (codes & np.uint64(0xFFFFFFFF)).astype(np.int32)
    return Candidates(
        left=left,
        right=right,
        bands=int(bands),
        rows=int(rows),
        max_bucket=None if max_bucket is None else int(max_bucket),
        max_expand=None if max_expand is None else int(max_expand),
        joined=joined,
        joined_band=np.concatenate([np.full(r[4].shape[0], j, np.int32) for j, r in enumerate(results)]),
        joined_size=np.concatenate([r[4] for r in results]).astype(np.int64),
        joined_pairs=sum(r[5] for r in results),
        oversized_band=np.concatenate([np.full(r[1].shape[0], j, np.int32) for j, r in enumerate(results)]),
        oversized_size=np.concatenate([r[1] for r in results]).astype(np.int64),
        skipped_pairs=sum(r[2] for r in results),
        largest_bucket=np.array([r[3] for r in results], dtype=np.int64),
        band_pairs=int(band_pairs),
        empty=int(empty.sum()),
    )


def share_joined_bucket(sig, cand: Candidates, left, right) -> np.ndarray:
    """Which pairs of rows share a bucket that :func:`candidates` marked to be joined exactly.

    The pairs of a marked bucket are not among ``cand.left, cand.right``; a
    caller that joins :attr:`Candidates.joined_rows` exactly keeps, of the
    pairs found, those for which this is True: exactly the true pairs that
    expanding the marked buckets would have given.

    Parameters
    ----------
    sig : array of unsigned int, shape (n, K)
        The signatures ``cand`` was banded from.
    cand : Candidates
    left, right : array of int, shape (m,)
        Row indices of the pairs.

    Returns
    -------
    ndarray of bool, shape (m,)
    """
    sig = np.ascontiguousarray(sig)
    left = np.ascontiguousarray(left, dtype=np.int32)
    right = np.ascontiguousarray(right, dtype=np.int32)
    if left.shape != right.shape or left.ndim != 1:
        raise ValueError(f"left and right must be 1-D of equal length, got {left.shape} and {right.shape}")
    if not cand.joined.shape[1]:
        return np.zeros(left.shape, bool)
    if sig.shape[0] != cand.joined.shape[1]:
        raise ValueError(f"signatures of {sig.shape[0]} rows, banding of {cand.joined.shape[1]}")
    return _kernel.share_marked_band(sig, cand.joined, cand.rows, left, right)
