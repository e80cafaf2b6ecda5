"""Compiled twin of the per-pair formulas of :mod:`allpairs.measures` (α and accept).

Kernels assume clean input: a measure code of :data:`allpairs.measures.MEASURES`,
``0 < p``, ``0 < q <= 10**9`` (q = 1 for overlap), set sizes below 2**31.
Products stay below 2**63 except cosine's ``(q·o)² >= p²·x·y``, which is
decided on 128-bit products built from 32-bit halves.
"""
import numpy as np

from ._numba import kernel

JACCARD, COSINE, DICE, CONTAINMENT, OVERLAP, CONTAINMENT_MIN, CONTAINMENT_EITHER = range(7)

_LOW = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)
_SMALL = 2**31


@kernel
def _ceil_div(a, b):
    return -((-a) // b)


@kernel
def _mul128(a, b):
    """(high, low) 64-bit words of the product of two uint64."""
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
    if a < _SMALL and b < _SMALL and c < _SMALL and d < _SMALL:  # both products fit in int64
        return a * b >= c * d
    h1, l1 = _mul128(a, b)
    h2, l2 = _mul128(c, d)
    return h1 > h2 or (h1 == h2 and l1 >= l2)


@kernel
def _cosine_alpha(p, q, x, y):
    # Smallest o with (q·o)² >= (p·x)(p·y): start from the float root, then
    # step until the exact 128-bit comparison holds at o and fails at o - 1.
    o = np.int64(np.ceil(p * np.sqrt(np.float64(x) * np.float64(y)) / q))
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
def accept(code, p, q, o, x, y):
    """True when overlap o of sets of sizes x, y reaches p/q (never for an empty set)."""
    if x <= 0 or y <= 0:
        return False
    return o >= required_overlap(code, p, q, x, y)


@kernel
def cosine_truncated(o, x, y, scale):
    """``⌊scale · o[k] / √(x[k]·y[k])⌋`` for each k, exactly (int64; o <= min(x, y), scale <= 10**9)."""
    n = o.shape[0]
    out = np.empty(n, np.int64)
    for k in range(n):
        a = o[k] * scale
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
