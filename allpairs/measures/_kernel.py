"""Compiled twin of the per-pair formulas of :mod:`allpairs.measures` (α).

Kernels assume clean input: a measure code of :data:`allpairs.measures.MEASURES`,
``0 < p``, ``0 < q <= 10**9`` (q = 1 for overlap), set sizes below 2**31.
Products stay below 2**63 except cosine's ``(q·o)² >= p²·x·y``, which is
decided on 128-bit products built from 32-bit halves.

One arithmetic on every path: each kernel widens its integer arguments to
int64 (uint64 for the 128-bit halves) before multiplying, so that numba (which
computes on 64 bits whatever it is given) and numpy scalars on the plain path
(which keep an int32 argument's width and would wrap at 2**31) compute the
same integers.
"""
import numpy as np

from .._kernels.jit import kernel

JACCARD, COSINE, DICE, CONTAINMENT, OVERLAP, CONTAINMENT_MIN, CONTAINMENT_EITHER = range(7)

_LOW = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)
_SMALL = 2**31
_GAP = 2.0**-45
_WIDE = 1.0 + _GAP


@kernel
def _ceil_div(a, b):
    return -((-a) // b)


@kernel
def _mul128(a, b):
    """(high, low) 64-bit words of the product of two uint64 (no partial product wraps)."""
    a = np.uint64(a)
    b = np.uint64(b)
    a0 = a & _LOW
    a1 = a >> _S32
    b0 = b & _LOW
    b1 = b >> _S32
    p00 = a0 * b0
    p01 = a0 * b1
    p10 = a1 * b0
    p11 = a1 * b1
    mid = (p00 >> _S32) + (p01 & _LOW) + (p10 & _LOW)
    low = (p00 & _LOW) | ((mid & _LOW) << _S32)
    high = p11 + (p01 >> _S32) + (p10 >> _S32) + (mid >> _S32)
    return high, low


@kernel
def products_ge(a, b, c, d):
    """``a·b >= c·d`` for non-negative int64 operands, exactly."""
    a = np.int64(a)
    b = np.int64(b)
    c = np.int64(c)
    d = np.int64(d)
    if a < _SMALL and b < _SMALL and c < _SMALL and d < _SMALL:  # both products fit in int64
        return a * b >= c * d
    # In float64 each product is within 4 units of 2**-53 of its true value: a gap of 2**-45
    # decides it; closer products are compared on their 128-bit values.
    fa = np.float64(a) * np.float64(b)
    fc = np.float64(c) * np.float64(d)
    if fa > fc * _WIDE:
        return True
    if fc > fa * _WIDE:
        return False
    h1, l1 = _mul128(a, b)
    h2, l2 = _mul128(c, d)
    return h1 > h2 or (h1 == h2 and l1 >= l2)


@kernel
def _cosine_alpha(p, q, x, y):
    # Smallest o with (q·o)² >= (p·x)(p·y), i.e. ⌈v⌉ for v = p·√(xy)/q. Its float value is
    # within 5 units of 2**-53 of v: when no whole number lies within 2**-45·v of it, its
    # ceiling is α. Else step from it until the exact 128-bit comparison holds at o and
    # fails at o - 1.
    p = np.int64(p)
    q = np.int64(q)
    x = np.int64(x)
    y = np.int64(y)
    v = p * np.sqrt(np.float64(x) * np.float64(y)) / q
    c = np.ceil(v)
    gap = v * _GAP
    if c - v > gap and v - (c - 1.0) > gap:
        return np.int64(c)
    o = np.int64(c)
    if o < 0:
        o = np.int64(0)
    while not products_ge(q * o, q * o, p * x, p * y):
        o += 1
    while o > 0 and products_ge(q * (o - 1), q * (o - 1), p * x, p * y):
        o -= 1
    return o


@kernel
def required_overlap(code, p, q, x, y):
    """α(x, y): the smallest overlap with which sets of sizes x and y reach p/q under the measure."""
    p = np.int64(p)
    q = np.int64(q)
    x = np.int64(x)
    y = np.int64(y)
    if code == JACCARD:
        return _ceil_div(p * (x + y), p + q)
    if code == COSINE:
        return _cosine_alpha(p, q, x, y)
    if code == DICE:
        return _ceil_div(p * (x + y), 2 * q)
    if code == CONTAINMENT:
        return _ceil_div(p * x, q)
    if code == OVERLAP:
        return _ceil_div(p, q)
    if code == CONTAINMENT_MIN:
        return _ceil_div(p * max(x, y), q)
    return _ceil_div(p * min(x, y), q)  # CONTAINMENT_EITHER



@kernel
def largest_other_size(code, p, q, size, budget, hi, probing):
    """The largest size ``v <= hi`` (``hi >= -1``) of the other set with ``α <= budget``; -1 if none.

    α is ``α(size, v)`` where ``probing`` (the set of ``size`` probes), else ``α(v, size)``: under every
    measure it does not fall as either size grows, so it holds up to the answer and fails above it. Jaccard
    and Dice in closed form (``⌈a/b⌉ <= B`` iff ``a <= B·b``); the others a few steps down from ``hi`` (where
    a neighbouring budget's answer is), then a binary search.
    """
    p = np.int64(p)
    q = np.int64(q)
    size = np.int64(size)
    budget = np.int64(budget)
    hi = np.int64(hi)
    if budget < 0:
        return np.int64(-1)
    if p > 0 and (code == JACCARD or code == DICE):
        v = (budget * (p + q)) // p - size if code == JACCARD else (budget * 2 * q) // p - size
        return max(min(v, hi), np.int64(-1))
    for _ in range(4):
        if hi < 0 or (required_overlap(code, p, q, size, hi) if probing
                      else required_overlap(code, p, q, hi, size)) <= budget:
            return hi
        hi -= 1
    lo = np.int64(-1)  # α <= budget holds up to lo, fails above hi
    while lo < hi:
        mid = (lo + hi + 1) >> 1
        if (required_overlap(code, p, q, size, mid) if probing else required_overlap(code, p, q, mid, size)) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return lo


@kernel
def cosine_truncated(o, x, y, scale):
    """``⌊scale · o[k] / √(x[k]·y[k])⌋`` for each k, exactly (int64; o <= min(x, y), scale <= 10**9)."""
    n = o.shape[0]
    out = np.empty(n, np.int64)
    scale = np.int64(scale)
    for k in range(n):
        a = np.int64(o[k]) * scale
        v = np.int64(np.floor(a / np.sqrt(np.float64(x[k]) * np.float64(y[k]))))
        if v < 0:
            v = np.int64(0)
        # The largest v with (v·x)(v·y) <= (o·scale)².
        while v > 0 and not products_ge(a, a, v * x[k], v * y[k]):
            v -= 1
        while products_ge(a, a, (v + 1) * x[k], (v + 1) * y[k]):
            v += 1
        out[k] = v
    return out
