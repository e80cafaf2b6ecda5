"""Integer bounds of each measure, compiled, for the index kernels.

A threshold is ``p/q`` with ``0 <= p <= q``; ``p = 0`` asks only for one common
token (SetSimilaritySearch's threshold 0). Every bound is exact integer
arithmetic (Mann, Augsten, Bouros, PVLDB 2016, Table 2). ``x`` is the query
(the left side of an asymmetric measure), ``y`` the indexed set.

Kernel assumes clean input: sizes >= 1, a known measure code.
"""
from .._numba import kernel

JACCARD = 0

#: Measure name -> code passed to the kernels.
CODES = {"jaccard": JACCARD}

_BIG = 2**62


@kernel
def _ceil_div(a, b):
    return -((-a) // b)


@kernel
def required_overlap(code, p, q, size_x, size_y):
    """Least overlap reaching p/q (at least 1). Jaccard: ``⌈p(|x|+|y|)/(p+q)⌉``."""
    return max(1, _ceil_div(p * (size_x + size_y), p + q))


@kernel
def probe_min_overlap(code, p, q, size_x):
    """Least overlap a query of this size needs with any partner. Jaccard: ``⌈t|x|⌉``."""
    return max(1, _ceil_div(p * size_x, q))


@kernel
def index_min_overlap(code, p, q, size_y):
    """Least overlap an indexed set of this size needs with any query. Jaccard: ``⌈t|y|⌉``."""
    return max(1, _ceil_div(p * size_y, q))


@kernel
def size_range(code, p, q, size_x):
    """Sizes of the indexed sets that can reach p/q with a query of this size. Jaccard: ``[⌈t|x|⌉, ⌊|x|/t⌋]``."""
    if p == 0:
        return 1, _BIG
    return max(1, _ceil_div(p * size_x, q)), (q * size_x) // p


@kernel
def more_similar(code, size_x, o1, size_1, o2, size_2):
    """Sign of sim(x, y1) - sim(x, y2) from overlaps and sizes, on integers. Jaccard: cross-multiplied unions."""
    a = o1 * (size_x + size_2 - o2)
    b = o2 * (size_x + size_1 - o1)
    return (a > b) - (a < b)
