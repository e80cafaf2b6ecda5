"""MinHash signatures of every set of a CSR corpus, and similarity estimates from them.

Broder, "On the resemblance and containment of documents", 1997: for a random
permutation π of the key universe, ``P[min π(A) = min π(B)] = J(A, B)``; K
independent permutations give K values per set whose agreement rate estimates J
(Leskovec, Rajaraman, Ullman, *Mining of Massive Datasets*, ch. 3.3). Li and
König, "b-Bit minwise hashing", WWW 2010: keeping only the low b bits of each
value costs 2**-b chance agreements, corrected for in :func:`estimate`.

The hash family (fixed; part of the output's meaning, so it never changes
silently):

1. every key ``x`` (uint64) is mixed once by the splitmix64 finaliser and
   folded to its high 32 bits: ``y = mix64(x) >> 32``;
2. the splitmix64 generator started at ``seed`` yields ``a_0, b_0, a_1, b_1, ...``
   (uint64); permutation ``k`` is ``h_k(y) = (a_k * y + b_k mod 2**64) >> 32``,
   Dietzfelbinger's multiply-add-shift (1996), a strongly universal family
   from 32 to 32 bits;
3. the signature value is ``min h_k(y)`` over the set's keys (uint32), of which
   ``bits`` keeps the low ``w`` bits.

Why this family: arithmetic modulo ``2**64`` is what uint64 does natively, so
there is no prime modulus to overflow (``(a*x + b) % (2**61 - 1)`` in uint64
silently wraps); the per-permutation step is one multiply, one add, one shift
and a min, which the compiler vectorises across permutations; and the one-off
mix of step 1 turns any key set (sequential ids included) into well spread
32-bit inputs, the condition under which a 2-independent family behaves like
a random permutation (Mitzenmacher and Vadhan, "Why simple hash functions work",
SODA 2008). Folding keys to 32 bits merges two distinct keys with probability
``2**-32``, negligible next to the estimator's own error.

Empty sets have no minimum: their rows hold the sentinel ``dtype max`` (every
value 0xFFFFFFFF for full signatures), and :func:`empty_rows` /
:func:`empty_signatures` tell them apart, so that bands never bucket them
together and estimates give them J = 0.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from numbers import Integral

import numpy as np

from .._kernels.jit import resolve_jobs
from ..errors import UsageError
from .._kernels.csr import row_blocks
from . import _kernel
from .limits import MAX_NUM_PERM

__all__ = [
    "MAX_NUM_PERM",
    "check_num_perm",
    "signatures",
    "permutation_params",
    "signature_dtype",
    "empty_rows",
    "empty_signatures",
    "estimate",
    "estimate_pairs",
    "agreement_needed",
    "signature_sets",
]


def _check_positive(name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise UsageError(f"{name} must be a whole number, got {value!r}", param=name)
    if value < 1:
        raise UsageError(f"{name} must be at least 1, got {value}; use {{{{{name}=1}}}} or more", param=name)


def check_num_perm(num_perm) -> None:
    """Raise :class:`UsageError` unless ``1 <= num_perm <= MAX_NUM_PERM``."""
    _check_positive("num_perm", num_perm)
    if num_perm > MAX_NUM_PERM:
        raise UsageError(f"num_perm {num_perm:,} is above the limit of {MAX_NUM_PERM:,} values per set; "
                         f"use {{{{num_perm={MAX_NUM_PERM}}}}} or less", param="num_perm")


def _check_bits(bits: int | None) -> None:
    if bits is None:
        return
    if isinstance(bits, bool) or not isinstance(bits, Integral) or not 1 <= bits <= 32:
        raise UsageError(f"bits must be between 1 and 32 (values are 32-bit), got {bits!r}; "
                         "use e.g. {{bits=16}}, or leave it out for full values", param="bits")


def signature_dtype(bits: int | None) -> np.dtype:
    """The narrowest unsigned dtype holding ``bits`` bits: uint8 up to 8, uint16 up to 16, else uint32."""
    _check_bits(bits)
    if bits is None or bits > 16:
        return np.dtype(np.uint32)
    return np.dtype(np.uint16) if bits > 8 else np.dtype(np.uint8)


def permutation_params(num_perm: int, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """The multipliers and offsets ``a``, ``b`` (uint64, shape (num_perm,)) of the hash family.

    They are the splitmix64 stream started at ``seed``, taken in pairs:
    ``a_k, b_k = stream[2k], stream[2k + 1]``; so the first K permutations of a
    seed do not depend on how many more are asked for.
    """
    check_num_perm(num_perm)
    if isinstance(seed, bool) or not isinstance(seed, Integral) or not 0 <= seed < 2**64:
        raise UsageError(f"seed must be a whole number in 0..2**64-1, got {seed!r}")
    with np.errstate(over="ignore"):  # wraparound is meant; matters only with NUMBA_DISABLE_JIT
        stream = _kernel.splitmix64_stream(np.uint64(seed), 2 * int(num_perm))
    return stream[0::2].copy(), stream[1::2].copy()


def _check_csr(indptr, keys) -> tuple[np.ndarray, np.ndarray]:
    indptr = np.asarray(indptr)
    keys = np.asarray(keys)
    if indptr.ndim != 1 or indptr.shape[0] < 1 or indptr.dtype.kind not in "iu":
        raise ValueError(f"indptr must be a 1-D integer array of n + 1 offsets, got shape {indptr.shape} "
                         f"dtype {indptr.dtype}")
    if keys.ndim != 1 or (keys.dtype.kind not in "iu" and keys.size):
        raise ValueError(f"keys must be a 1-D integer array, got shape {keys.shape} dtype {keys.dtype}")
    indptr = np.ascontiguousarray(indptr, dtype=np.int64)
    # Signed keys are taken by their bit pattern (two's complement), as uint64.
    keys = np.ascontiguousarray(keys.astype(np.uint64, copy=False) if keys.dtype.kind == "u"
                                else keys.astype(np.int64, copy=False).view(np.uint64))
    if indptr[0] != 0 or indptr[-1] != keys.shape[0] or (np.diff(indptr) < 0).any():
        raise ValueError(f"indptr must rise from 0 to len(keys) = {keys.shape[0]}, "
                         f"got {indptr[0]} .. {indptr[-1]} (or a decrease)")
    if indptr.shape[0] - 1 > np.iinfo(np.int32).max:
        raise ValueError(f"{indptr.shape[0] - 1} sets exceed the int32 row ids used downstream")
    return indptr, keys


def signatures(indptr, keys, num_perm: int, *, seed: int = 1, bits: int | None = None,
               jobs: int | None = None) -> np.ndarray:
    """MinHash signatures of all sets of a CSR corpus, one row per set.

    Parameters
    ----------
    indptr : array of int, shape (n + 1,)
        Offsets: set ``i`` is ``keys[indptr[i]:indptr[i + 1]]``; converted to int64.
    keys : array of uint64, shape (nnz,)
        Stable 64-bit keys of the elements (any order; signed keys count by their
        bit pattern). A repeated key within a set changes nothing.
    num_perm : int
        K, the number of hash functions (columns), at least 1.
    seed : int, default 1
        Chooses the hash family's parameters (0 .. 2**64 - 1); same seed, same
        keys, same signatures, on every machine and in every version.
    bits : int, optional
        b-bit MinHash (Li and König 2010): keep the low ``bits`` (1..32) bits of
        every value, stored in the narrowest of uint8/uint16/uint32.
    jobs : int, optional
        Threads, each filling a contiguous block of rows; default every
        available CPU. The result does not depend on it.

    Returns
    -------
    sig : ndarray of uint32 (or uint16 / uint8 with ``bits``), shape (n, num_perm)
        ``sig[i, k] = min over x in set i of h_k(x)`` (see the module docstring
        for ``h_k``). Rows of empty sets hold the dtype's maximum in every
        column; :func:`empty_rows` gives them from ``indptr``.

    Raises
    ------
    UsageError
        ``num_perm`` or ``jobs`` below 1, ``bits`` outside 1..32, ``seed`` out of range.
    ValueError
        ``indptr`` / ``keys`` do not form a CSR.
    """
    _check_bits(bits)
    a, b = permutation_params(num_perm, seed)
    jobs = resolve_jobs(jobs)
    indptr, keys = _check_csr(indptr, keys)
    dtype = signature_dtype(bits)
    mask = np.uint32(0xFFFFFFFF if bits is None else (1 << bits) - 1)
    empty_value = np.iinfo(dtype).max
    n = indptr.shape[0] - 1
    out = np.empty((n, int(num_perm)), dtype)
    if n == 0:
        return out
    edges = row_blocks(indptr, jobs)

    def fill(t: int) -> None:
        lo, hi = edges[t], edges[t + 1]
        with np.errstate(over="ignore"):  # wraparound is meant; matters only with NUMBA_DISABLE_JIT
            _kernel.minhash(indptr[lo: hi + 1], keys, a, b, mask, dtype.type(empty_value), out[lo:hi])

    if len(edges) == 2:
        fill(0)
    else:
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            list(pool.map(fill, range(len(edges) - 1)))
    return out


def empty_rows(indptr) -> np.ndarray:
    """Which sets are empty: bool, shape (n,), from the CSR offsets (the exact test)."""
    indptr = np.asarray(indptr)
    return indptr[1:] == indptr[:-1]


def empty_signatures(sig) -> np.ndarray:
    """Which signature rows are the empty-set sentinel (every value the dtype's max): bool, shape (n,).

    Exact for full values and for ``bits`` below the dtype's width (1..7, 9..15,
    17..31: a real value never reaches the max). With ``bits`` of 8, 16 or 32 a
    non-empty set is taken for empty with probability ``2**-(bits * K)``; pass
    :func:`empty_rows` where that matters.
    """
    sig = np.asarray(sig)
    if sig.ndim == 1:
        return bool((sig == np.iinfo(sig.dtype).max).all()) if sig.size else True
    if sig.shape[1] == 0:
        return np.ones(sig.shape[0], bool)
    return (sig == np.iinfo(sig.dtype).max).all(axis=1)


def _correct(agree: np.ndarray, bits: int | None) -> np.ndarray:
    """Undo chance agreements of b-bit values: ``(E - C) / (1 - C)`` with ``C = 2**-bits``, clipped to [0, 1].

    Li and König (2010) give ``P[agree] = C1 + (1 - C2) J`` with C1, C2 depending on
    the set sizes relative to the hash range; for sets far smaller than 2**32
    both tend to ``2**-bits``, the approximation used here (its error is of the
    order of ``|set| / 2**32``).
    """
    if bits is None:
        return agree
    c = 2.0 ** -bits
    return np.clip((agree - c) / (1.0 - c), 0.0, 1.0)


def estimate(sig_a, sig_b, *, bits: int | None = None) -> float:
    """Estimated Jaccard similarity of two sets from their signatures.

    Parameters
    ----------
    sig_a, sig_b : array of unsigned int, shape (K,)
        Two rows of :func:`signatures` made with the same seed and ``bits``.
    bits : int, optional
        The ``bits`` the signatures were made with: the agreement rate is then
        corrected for chance collisions of ``bits``-bit values (see
        :func:`_correct`) and clipped to [0, 1].

    Returns
    -------
    float
        The fraction of positions where the rows agree (corrected with ``bits``);
        0.0 if either row is the empty-set sentinel (J with an empty set is 0).
    """
    _check_bits(bits)
    sig_a = np.asarray(sig_a)
    sig_b = np.asarray(sig_b)
    if sig_a.shape != sig_b.shape or sig_a.ndim != 1 or sig_a.size == 0:
        raise ValueError(f"two signatures of equal length K >= 1 expected, got shapes {sig_a.shape} and {sig_b.shape}")
    if empty_signatures(sig_a) or empty_signatures(sig_b):
        return 0.0
    return float(_correct(np.mean(sig_a == sig_b), bits))


def estimate_pairs(sig, left, right, *, bits: int | None = None, empty=None) -> np.ndarray:
    """Estimated Jaccard similarity of many pairs of rows, as :func:`estimate` does for one.

    Parameters
    ----------
    sig : array of unsigned int, shape (n, K)
        Signatures from :func:`signatures`.
    left, right : array of int, shape (m,)
        Row indices of the pairs.
    bits : int, optional
        As in :func:`estimate`.
    empty : array of bool, shape (n,), optional
        Which sets are empty (:func:`empty_rows`); default
        :func:`empty_signatures` of ``sig``. Pairs with an empty set get 0.

    Returns
    -------
    ndarray of float64, shape (m,)
    """
    _check_bits(bits)
    sig = np.ascontiguousarray(sig)
    if sig.ndim != 2 or sig.shape[1] == 0:
        raise ValueError(f"signatures must be a 2-D (n, K >= 1) array, got shape {sig.shape}")
    n, K = sig.shape
    left = np.ascontiguousarray(left, dtype=np.int64)
    right = np.ascontiguousarray(right, dtype=np.int64)
    if left.shape != right.shape or left.ndim != 1:
        raise ValueError(f"left and right must be 1-D of equal length, got {left.shape} and {right.shape}")
    if left.size and (min(left.min(), right.min()) < 0 or max(left.max(), right.max()) >= n):
        raise ValueError(f"pair indices must lie in 0..{n - 1}")
    empty = empty_signatures(sig) if empty is None else np.asarray(empty, dtype=bool)
    if empty.shape != (n,):
        raise ValueError(f"empty must have shape ({n},), got {empty.shape}")
    est = estimate_table(K, bits)[_kernel.count_equal(sig, left, right)]
    est[empty[left] | empty[right]] = 0.0
    return est


def estimate_table(num_perm: int, bits: int | None = None) -> np.ndarray:
    """The estimate of a pair agreeing at ``a`` of ``num_perm`` positions, for ``a = 0 .. num_perm``
    (float64, shape (num_perm + 1,)): what :func:`estimate_pairs` gives, so that an agreement count
    stands for its estimate exactly (pairs spilled to disk carry the count)."""
    return _correct(np.arange(num_perm + 1, dtype=np.int64) / num_perm, bits)


def agreement_counts(sig, left, right) -> np.ndarray:
    """Positions at which rows ``left[p]`` and ``right[p]`` of ``sig`` agree (int64, per pair; clean input:
    ``sig`` 2-D contiguous, indices in range)."""
    return _kernel.count_equal(np.ascontiguousarray(sig), np.ascontiguousarray(left, dtype=np.int64),
                               np.ascontiguousarray(right, dtype=np.int64))


def agreement_needed(num_perm: int, threshold: float, *, bits: int | None = None) -> int:
    """Fewest agreeing positions out of ``num_perm`` whose estimate is at least ``threshold``.

    Computed with the very arithmetic of :func:`estimate_pairs` (agreements / K,
    then the b-bit correction), which is non-decreasing in the agreements: a
    pair's estimate is ``>= threshold`` exactly when its rows agree in at least
    this many positions. At least 1, at most ``num_perm`` for a threshold in (0, 1].
    """
    _check_positive("num_perm", num_perm)
    _check_bits(bits)
    est = _correct(np.arange(num_perm + 1) / num_perm, bits)
    hits = np.flatnonzero(est >= threshold)
    if not hits.size:
        raise ValueError(f"no agreement reaches an estimate of {threshold}")
    return max(1, int(hits[0]))


def signature_sets(sig, rows) -> tuple[np.ndarray, np.ndarray]:
    """Signature rows as sets of ``position << 32 | value`` keys, in CSR (int64 offsets, uint64 keys).

    Each row becomes a set of exactly K keys, and two rows share one key per
    position where they agree, so an exact set join of these sets finds the
    pairs by their number of agreements (their MinHash estimate).
    """
    sig = np.asarray(sig)
    rows = np.asarray(rows, dtype=np.int64)
    K = sig.shape[1]
    keys = (np.arange(K, dtype=np.uint64) << np.uint64(32)) | sig[rows].astype(np.uint64)
    return np.arange(0, (rows.size + 1) * K, K, dtype=np.int64), keys.ravel()
