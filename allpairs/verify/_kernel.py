"""Compiled kernels of verification: overlap by merge or by look-up in a bit set of the probe set's tokens,
with early exit, for every measure, and the bitmap bound that spares either, shared by the exact join's probe
and the saved index's.

Xiao, Wang, Lin, Yu, WWW 2008 (verification resuming after the prefix
matches); Mann, Augsten, Bouros, PVLDB 2016 (the cheap merge); Sandes,
Teodoro, Melo, "Bitmap filter: speeding up exact set similarity joins with
bitwise operations", Information Systems 2020 (a 64-bit signature per set).

Kernels assume clean input: tokens strictly increasing within each set, a
measure code and threshold ``p/q`` as :mod:`allpairs.measures._kernel` takes them.
"""
import numpy as np

from ..measures._kernel import required_overlap
from .._kernels.jit import kernel


@kernel
def verify(indptr, tokens, x, y, counted, last_i, last_j, code, p, q):
    """Exact overlap of each candidate (x[k], y[k]), or -1 where it stays below α(|x|, |y|).

    The merge resumes after positions ``last_i[k]`` in x and ``last_j[k]`` in y,
    where ``counted[k]`` common tokens were already found (0, -1, -1 for a fresh
    pair). It stops as soon as the tokens left cannot reach the required overlap
    α (Xiao et al. 2008, Alg. 2 "Verify"; Mann et al. 2016 show this cheap merge
    beats costlier filters).
    """
    n = x.shape[0]
    out = np.empty(n, np.int32)
    for k in range(n):
        xs = indptr[x[k]]
        xe = indptr[x[k] + 1]
        ys = indptr[y[k]]
        ye = indptr[y[k] + 1]
        alpha = required_overlap(code, p, q, xe - xs, ye - ys)
        o = merge(tokens, xs + last_i[k] + 1, xe, tokens, ys + last_j[k] + 1, ye, counted[k], alpha)
        out[k] = o if o >= alpha else -1
    return out


#: Steps a merge takes between two looks at its bound, at least: a look costs as much as several steps,
#: and steps past the point where α is out of reach only lower a result already below α.
MIN_RUN = 16


@kernel
def merge(x_tokens, i, xe, y_tokens, j, ye, o, alpha):
    """``o`` plus the common tokens of ``x_tokens[i:xe]`` and ``y_tokens[j:ye]``, counted by merge;
    stops early once ``alpha`` is out of reach (the result is then below ``alpha``).

    A step of the merge lowers the bound ``o + min(xe - i, ye - j)`` by one at
    most (a match keeps it), so after checking it the merge runs ``bound - α``
    steps, but at least :data:`MIN_RUN` (steps beyond the bound only lower a
    result already below α) and at most ``min(xe - i, ye - j)`` (within both
    sides), without a look at the bound or the ends, then checks again: a
    near-copy is merged in a few runs of plain steps. A step moves ``i``, ``j``
    or both (a match), so the matches of a run are the moves less the steps:
    a step is two loads, one comparison and two adds.
    """
    while True:
        rest = min(xe - i, ye - j)
        slack = o + rest - alpha
        if rest <= 0 or slack < 0:
            return o
        n = min(rest, max(slack, MIN_RUN))
        moved = i + j
        for _ in range(n):
            # Unsigned indexes: no code for negative ones. Without branches: which side moves is data
            # the processor cannot predict.
            a = x_tokens[np.uint64(i)]
            b = y_tokens[np.uint64(j)]
            i += a <= b
            j += a >= b
        o += i + j - moved - n


@kernel
def count_marked(marks, y_tokens, j, ye, o, alpha, x_left):
    """``o`` plus the tokens of ``y_tokens[j:ye]`` whose bit is set in ``marks`` (uint64 words, bit ``w & 63``
    of word ``w >> 6`` for token ``w >= 0``): :func:`merge`'s count where x's tokens are the marked ones and
    every token of y from ``j`` on that x holds lies in x's part being merged, ``x_left`` tokens long. Stops
    early, as :func:`merge` does, once ``alpha`` is out of reach (the result is then below ``alpha``).

    A step reads one token of y and one word of a bit set that stays in a core's cache, and no step waits
    for the one before; a step of :func:`merge` reads a token of each side and waits for the comparison of
    the last one (which side moves), and there is a step for each token of either side.
    """
    if o + x_left < alpha:  # x has too few tokens left
        return o
    while True:
        rest = ye - j
        slack = o + rest - alpha
        if rest <= 0 or slack < 0:
            return o
        n = min(rest, max(slack, MIN_RUN))
        for k in range(j, j + n):
            w = np.uint64(y_tokens[np.uint64(k)])
            o += np.int64((marks[w >> np.uint64(6)] >> (w & np.uint64(63))) & np.uint64(1))
        j += n


@kernel
def mark_tokens(marks, tokens, a, b):
    """Set the bits of ``tokens[a:b]`` (non-negative) in ``marks`` (:func:`count_marked`)."""
    for k in range(a, b):
        w = np.uint64(tokens[np.uint64(k)])
        marks[w >> np.uint64(6)] |= np.uint64(1) << (w & np.uint64(63))


@kernel
def unmark_tokens(marks, tokens, a, b):
    """Clear the words of ``marks`` that :func:`mark_tokens` set for ``tokens[a:b]`` (all zero again when
    only those were set)."""
    for k in range(a, b):
        marks[np.uint64(tokens[np.uint64(k)]) >> np.uint64(6)] = 0


@kernel(wraps=True)
def popcount(v):
    """Bits set in the uint64 ``v`` (SWAR; LLVM turns it into one instruction where there is one)."""
    v = v - ((v >> np.uint64(1)) & np.uint64(0x5555555555555555))
    v = (v & np.uint64(0x3333333333333333)) + ((v >> np.uint64(2)) & np.uint64(0x3333333333333333))
    v = (v + (v >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return np.int64((v * np.uint64(0x0101010101010101)) >> np.uint64(56))


@kernel(wraps=True)
def bitmap(tokens, a, b):
    """The 64-bit signature of ``tokens[a:b]``: bit ``h(w)`` set for each token ``w`` (any int32, negative too).

    ``h`` is Fibonacci hashing of the token to 6 bits (Sandes et al. 2020).
    """
    out = np.uint64(0)
    for k in range(a, b):  # an unsigned index: no code for a negative one
        out |= np.uint64(1) << ((np.uint64(tokens[np.uint64(k)]) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(58))
    return out


@kernel(wraps=True)
def bitmaps(indptr, tokens):
    """:func:`bitmap` of each set of the CSR ``indptr``, ``tokens`` (uint64, one per set)."""
    m = indptr.shape[0] - 1
    out = np.empty(m, np.uint64)  # each written below: no pass to clear it first
    for s in range(m):
        out[s] = bitmap(tokens, indptr[s], indptr[s + 1])
    return out


@kernel
def bitmap_admits(size_x, size_y, bx, by, alpha):
    """Whether sets of these sizes and :func:`bitmap` signatures may share ``alpha`` tokens (Sandes et al. 2020).

    A bit set on one side only needs a token of that side that the other
    lacks, so the sets differ in at least ``popcount(bx ^ by)`` tokens and
    their overlap is at most ``(|x| + |y| - popcount(bx ^ by)) // 2``. A
    signature made of some of a set's tokens (a query's known ones) bounds it
    too, when the tokens left out are in no other set.
    """
    return size_x + size_y - popcount(bx ^ by) >= 2 * alpha
