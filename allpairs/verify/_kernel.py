"""Compiled kernel of verification: overlap by merge, with early exit, for every measure.

Kernel assumes clean input: tokens strictly increasing within each set, a
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


@kernel
def merge(x_tokens, i, xe, y_tokens, j, ye, o, alpha):
    """``o`` plus the common tokens of ``x_tokens[i:xe]`` and ``y_tokens[j:ye]``, counted by merge;
    stops early once ``alpha`` is out of reach (the result is then below ``alpha``)."""
    while i < xe and j < ye and o + min(xe - i, ye - j) >= alpha:
        a = x_tokens[i]
        b = y_tokens[j]
        # Without branches: which side moves is data the processor cannot predict.
        o += a == b
        i += a <= b
        j += b <= a
    return o
