"""Threshold algebra for every measure, in exact integer arithmetic.

A threshold ``t`` is held as a fraction ``p/q`` so that every bound below is an
integer computed without rounding. In floating point ``math.ceil(0.28 * 25)`` is 8
where the true value is 7, and ``0.7 * 10`` is ``7.000000000000001``: a prefix one
token too short silently loses pairs.

For sets ``x``, ``y`` with ``J(x, y) = |x ∩ y| / |x ∪ y|``:

- ``J >= t``  iff  ``overlap >= required_overlap(|x|, |y|) = ⌈t/(1+t)·(|x|+|y|)⌉``;
- size bound: ``t·|y| <= |x| <= |y|/t``;
- probing prefix of ``x``: ``|x| - ⌈t·|x|⌉ + 1`` tokens;
- indexing prefix of ``y`` (valid when every probe is at least as large as ``y``):
  ``|y| - ⌈2t/(1+t)·|y|⌉ + 1`` tokens.

(Bayardo, Ma, Srikant, WWW 2007; Xiao, Wang, Lin, Yu, WWW 2008.)

:data:`MEASURES` is the same algebra for every measure (jaccard, cosine, dice,
containment, overlap, and SetSimilaritySearch's containment_min), one row
each, as tabulated by Mann, Augsten and Bouros, "An empirical evaluation of
set similarity join techniques", PVLDB 9(9), 2016, Table 2. The compiled twin
of the per-pair formulas is :mod:`allpairs.measures._kernel`.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from ._kernel import cosine_truncated
from .threshold import MAX_DENOMINATOR, Threshold, _check_threshold_text, _fraction, decimal_text
from ..errors import UsageError

#: Largest set size the kernels take (int32 sizes): no size bound is above it,
#: so that a bound fits wherever a size does (cosine's ``⌊x/t²⌋`` at ``t = 1e-9``
#: would be 10**18·x).
MAX_SET_SIZE = 2**31 - 1


def _ceil_div(a: int, b: int) -> int:
    return -((-a) // b)


def jaccard(overlap: int, size_x: int, size_y: int) -> Fraction:
    """Exact Jaccard similarity from the overlap and both sizes (0 when both sets are empty)."""
    union = size_x + size_y - overlap
    return _fraction(overlap, union) if union else _fraction(0)


# --- every measure: one row each ---------------------------------------------
#
# Notation: x and y are set sizes (x the left set, the one whose share counts for containment), o = |x ∩ y| the
# overlap, t = p/q the threshold (for overlap, the integer k = p with q = 1). Every row gives
#
# - ``accept(t, o, x, y)``: the measure reaches t, decided by cross-multiplying integers (never a float similarity
#   against t); two sets of which one is empty are never a pair;
# - ``required_overlap(t, x, y)``: α(x, y), the smallest o that ``accept``s;
# - ``partner_sizes(t, x, side)``: the sizes a partner of a set of size x can have, from o <= min(x, y); ``hi`` is
#   None where there is no upper bound;
# - ``probe_prefix(t, x, side)``: |x| - min α + 1, the minimum taken over every partner size the window allows,
#   smaller or larger (the prefix filter: Chaudhuri, Ganti, Kaushik, ICDE 2006; sets sharing o >= α tokens share
#   one in their first |x| - α + 1 tokens of the global order);
# - ``index_prefix(t, y, side)``: the same minimum over partners at least as large as y only: valid for an index
#   built while sets are processed in increasing size (Bayardo et al. 2007), shorter than the probing prefix.
#
# ``side`` matters only for containment, the one asymmetric measure: "left" is the contained set (whose size
# divides), "right" the container.
# The positional bound (PPJoin, Xiao et al. 2008) is the same for all and lives in the kernels that probe.

SIDES = ("left", "right")


def _check_side(side: str) -> None:
    if side not in SIDES:
        raise ValueError(f"side must be 'left' or 'right', got {side!r}")


class Measure:
    """One row of the table: a measure's similarity and its integer bounds.

    Subclasses override the formulas; the defaults (shared by the symmetric
    measures) derive the prefixes from :meth:`_min_alpha` and
    :meth:`_min_alpha_larger`.
    """

    name: str = ""
    #: The measure's code in the compiled kernels (:mod:`allpairs.measures._kernel`).
    code: int = -1
    symmetric: bool = True
    #: True for overlap: the threshold is a whole number of common tokens.
    integer_threshold: bool = False
    #: True where the prefixes multiply a size by p² or q² (cosine), bounding :meth:`prefix_arrays`.
    squares: bool = False
    formula: str = ""

    def similarity(self, overlap: int, size_x: int, size_y: int):
        """The exact value (a Fraction; an int for overlap; a float for cosine, which is irrational)."""
        raise NotImplementedError

    def truncated(self, overlap: int, size_x: int, size_y: int, decimals: int) -> int:
        """``⌊similarity · 10**decimals⌋``, exactly (what the output prints)."""
        return math.floor(self.similarity(overlap, size_x, size_y) * 10**decimals)

    def ratio(self, o: np.ndarray, x: np.ndarray, y: np.ndarray, decimals: int) -> tuple[np.ndarray, np.ndarray]:
        """The similarity of each pair as int64 ``num / den`` (overlaps and sizes as int64 arrays), for the writer.

        Rational measures give their exact fraction, which the writer truncates
        to ``decimals``; cosine gives ``⌊cos · 10**decimals⌋ / 10**decimals``.
        """
        raise NotImplementedError

    def floats(self, o: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """``float(similarity(o, x, y))`` of each pair (int64 arrays) at once, for Parquet and DataFrames: the
        exact ratio divided, the float nearest it (both terms are exact in float64); 0 where it is 0/0."""
        num, den = self.ratio(o, x, y, 0)
        num, den = np.asarray(num, np.int64), np.asarray(den, np.int64)
        return np.divide(num, den, out=np.zeros(len(num), np.float64), where=den != 0)

    def accept(self, t: Threshold, overlap: int, size_x: int, size_y: int) -> bool:
        raise NotImplementedError

    def required_overlap(self, t: Threshold, size_x: int, size_y: int) -> int:
        raise NotImplementedError

    def partner_sizes(self, t: Threshold, size: int, side: str = "left") -> tuple[int, int | None]:
        """(lo, hi): the sizes a partner can have, from o <= min(x, y); hi is None where unbounded and
        at most :data:`MAX_SET_SIZE` otherwise."""
        _check_side(side)
        lo, hi = self._window(t, size, side)
        return lo, None if hi is None else min(hi, MAX_SET_SIZE)

    def _window(self, t: Threshold, size: int, side: str) -> tuple[int, int | None]:
        raise NotImplementedError

    def _min_alpha(self, t: Threshold, size: int, side: str) -> int:
        """A lower bound on α(x, y) over every partner size y the window allows."""
        raise NotImplementedError

    def _min_alpha_larger(self, t: Threshold, size: int, side: str) -> int:
        """A lower bound on α(x, y) over partners with y >= x."""
        raise NotImplementedError

    def probe_prefix(self, t: Threshold, size: int, side: str = "left") -> int:
        """Tokens of a set of this size that must be probed: ``|x| - min α + 1``, within [0, |x|]."""
        _check_side(side)
        if size <= 0:
            return 0
        return max(0, min(size, size - self._min_alpha(t, size, side) + 1))

    def index_prefix(self, t: Threshold, size: int, side: str = "left") -> int:
        """Tokens to index when every partner probing it is at least as large: ``|y| - min α + 1``."""
        _check_side(side)
        if size <= 0:
            return 0
        return max(0, min(size, size - self._min_alpha_larger(t, size, side) + 1))

    def prefix_arrays(self, t: Threshold, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """:meth:`index_prefix`, :meth:`probe_prefix` and the smallest of :meth:`partner_sizes` (side
        "left") of each of ``sizes`` (int64 >= 0) as int64 arrays, by the same formulas on numpy's int64,
        for a symmetric measure; None where a product of them could leave 62 bits (then ask per size).

        One pass over an array instead of three Python calls per distinct size: on the 283 sizes of
        Kosarak's distinct sets those calls took 0.45 ms, more than a tenth of the join at t = 0.9.
        """
        if not self.symmetric or not len(sizes):
            return None
        # Every product below is a size times a threshold term: at most 2·max(p, q), squared for cosine.
        term = 2 * max(t.p, t.q)
        if (term * term if self.squares else term) * max(int(sizes.max()), 1) >= 2**62:
            return None
        s = np.asarray(sizes, np.int64)
        lo = np.broadcast_to(np.asarray(self._window(t, s, "left")[0], np.int64), s.shape)
        probe = np.clip(s - self._min_alpha(t, s, "left") + 1, 0, s)
        index = np.clip(s - self._min_alpha_larger(t, s, "left") + 1, 0, s)
        return index.astype(np.int64), probe.astype(np.int64), lo.astype(np.int64)

    def __repr__(self) -> str:
        return f"<measure {self.name}: {self.formula}>"


class Jaccard(Measure):
    """|x ∩ y| / |x ∪ y|.

    ``J >= t`` iff ``o(p+q) >= p(x+y)`` (since |x ∪ y| = x + y - o), so
    α = ⌈p(x+y)/(p+q)⌉. With o <= min(x, y): ``t·x <= y <= x/t``. The
    smallest α over that window is at y = t·x: α >= ⌈t·x⌉ (probing prefix
    ``x - ⌈t·x⌉ + 1``); over y >= x it is at y = x: α >= ⌈2t/(1+t)·x⌉
    (indexing prefix). Mann et al. 2016, Table 2, row "Jaccard".
    """

    name, code, formula = "jaccard", 0, "|x∩y| / |x∪y|"

    def similarity(self, overlap, size_x, size_y):
        return jaccard(overlap, size_x, size_y)

    def ratio(self, o, x, y, decimals):
        return o, x + y - o

    def accept(self, t, overlap, size_x, size_y):
        return size_x > 0 and size_y > 0 and overlap * (t.p + t.q) >= t.p * (size_x + size_y)

    def required_overlap(self, t, size_x, size_y):
        return _ceil_div(t.p * (size_x + size_y), t.p + t.q)

    def _window(self, t, size, side):
        return _ceil_div(t.p * size, t.q), (t.q * size) // t.p

    def _min_alpha(self, t, size, side):
        return _ceil_div(t.p * size, t.q)

    def _min_alpha_larger(self, t, size, side):
        return _ceil_div(2 * t.p * size, t.p + t.q)


class Cosine(Measure):
    """|x ∩ y| / √(|x|·|y|) (Ochiai / binary cosine).

    ``C >= t`` iff ``q²o² >= p²xy``, so α = ⌈t√(xy)⌉, computed with an integer
    square root. With o <= min(x, y): ``t²·x <= y <= x/t²``. The smallest α
    over that window is at y = t²x: α >= ⌈t²x⌉ (probing prefix); over y >= x
    at y = x: α >= ⌈t·x⌉ (indexing prefix). Mann et al. 2016, Table 2, row
    "Cosine".
    """

    name, code, formula = "cosine", 1, "|x∩y| / √(|x|·|y|)"
    squares = True

    def similarity(self, overlap, size_x, size_y):
        return overlap / math.sqrt(size_x * size_y) if size_x and size_y else 0.0

    def truncated(self, overlap, size_x, size_y, decimals):
        # ⌊o·10^d / √(xy)⌋ = ⌊√(o²·10^2d / (xy))⌋ = isqrt(⌊o²·10^2d / (xy)⌋).
        if not size_x or not size_y:
            return 0
        return math.isqrt((overlap * overlap * 10 ** (2 * decimals)) // (size_x * size_y))

    def ratio(self, o, x, y, decimals):
        scale = 10**decimals
        return cosine_truncated(o, x, y, scale), np.full(len(o), scale, np.int64)

    def floats(self, o, x, y):
        # As similarity computes it: o / √(x·y), 0 where a set is empty (irrational: no ratio to divide).
        with np.errstate(divide="ignore", invalid="ignore"):
            out = o / np.sqrt((x * y).astype(np.float64))
        return np.where((x > 0) & (y > 0), out, 0.0)

    def accept(self, t, overlap, size_x, size_y):
        return size_x > 0 and size_y > 0 and (t.q * overlap) ** 2 >= t.p * t.p * size_x * size_y

    def required_overlap(self, t, size_x, size_y):
        # Smallest o with (q·o)² >= N = p²xy: q·o >= ⌈√N⌉.
        n = t.p * t.p * size_x * size_y
        r = math.isqrt(n)
        if r * r < n:
            r += 1
        return _ceil_div(r, t.q)

    def _window(self, t, size, side):
        return _ceil_div(t.p * t.p * size, t.q * t.q), (t.q * t.q * size) // (t.p * t.p)

    def _min_alpha(self, t, size, side):
        return _ceil_div(t.p * t.p * size, t.q * t.q)

    def _min_alpha_larger(self, t, size, side):
        return _ceil_div(t.p * size, t.q)


class Dice(Measure):
    """2|x ∩ y| / (|x| + |y|).

    ``D >= t`` iff ``2qo >= p(x+y)``, so α = ⌈p(x+y)/(2q)⌉. With o <= min(x, y):
    ``t·x/(2-t) <= y <= (2-t)·x/t``. The smallest α over that window is at
    y = t·x/(2-t): α >= ⌈t·x/(2-t)⌉ (probing prefix); over y >= x at y = x:
    α >= ⌈t·x⌉ (indexing prefix). Mann et al. 2016, Table 2, row "Dice".
    """

    name, code, formula = "dice", 2, "2|x∩y| / (|x|+|y|)"

    def similarity(self, overlap, size_x, size_y):
        total = size_x + size_y
        return _fraction(2 * overlap, total) if total else _fraction(0)

    def ratio(self, o, x, y, decimals):
        return 2 * o, x + y

    def accept(self, t, overlap, size_x, size_y):
        return size_x > 0 and size_y > 0 and 2 * t.q * overlap >= t.p * (size_x + size_y)

    def required_overlap(self, t, size_x, size_y):
        return _ceil_div(t.p * (size_x + size_y), 2 * t.q)

    def _window(self, t, size, side):
        return _ceil_div(t.p * size, 2 * t.q - t.p), ((2 * t.q - t.p) * size) // t.p

    def _min_alpha(self, t, size, side):
        return _ceil_div(t.p * size, 2 * t.q - t.p)

    def _min_alpha_larger(self, t, size, side):
        return _ceil_div(t.p * size, t.q)


class Containment(Measure):
    """|x ∩ y| / |x|: the share of the left set x found in the right set y (asymmetric).

    ``C >= t`` iff ``qo >= p·x``, so α = ⌈t·x⌉, whatever y. With o <= y the
    container holds at least ⌈t·x⌉ tokens and may be as large as it likes; seen
    from the container y, a left partner has at most ⌊y/t⌋ tokens.
    Prefixes: the left set probes ``x - ⌈t·x⌉ + 1`` tokens. A container's
    partners may be as small as one token (α = ⌈t·1⌉ = 1), so it must be
    probed or indexed whole; indexed for partners at least as large, its
    prefix is ``y - ⌈t·y⌉ + 1``. (Mann et al. 2016 treat the symmetric
    measures; this row follows from the same prefix principle.)
    """

    name, code, formula = "containment", 3, "|x∩y| / |x|"
    symmetric = False

    def similarity(self, overlap, size_x, size_y):
        return _fraction(overlap, size_x) if size_x else _fraction(0)

    def ratio(self, o, x, y, decimals):
        return o, x

    def accept(self, t, overlap, size_x, size_y):
        return size_x > 0 and size_y > 0 and t.q * overlap >= t.p * size_x

    def required_overlap(self, t, size_x, size_y):
        return _ceil_div(t.p * size_x, t.q)

    def _window(self, t, size, side):
        if side == "left":
            return _ceil_div(t.p * size, t.q), None
        return 1, (t.q * size) // t.p

    def _min_alpha(self, t, size, side):
        return _ceil_div(t.p * size, t.q) if side == "left" else 1

    def _min_alpha_larger(self, t, size, side):
        return _ceil_div(t.p * size, t.q)


class Overlap(Measure):
    """|x ∩ y| >= k, for a whole number k >= 1 (``t = k/1``).

    α = k; a partner has at least k tokens and no upper bound; both prefixes
    are ``|x| - k + 1`` (none at all for a set of fewer than k tokens).
    Mann et al. 2016, Table 2, row "Overlap". The similarity is the count.
    """

    name, code, formula = "overlap", 4, "|x∩y| >= k"
    integer_threshold = True

    def similarity(self, overlap, size_x, size_y):
        return overlap

    def ratio(self, o, x, y, decimals):
        return o, np.ones_like(o)

    def accept(self, t, overlap, size_x, size_y):
        return size_x > 0 and size_y > 0 and overlap * t.q >= t.p

    def required_overlap(self, t, size_x, size_y):
        return _ceil_div(t.p, t.q)

    def _window(self, t, size, side):
        return _ceil_div(t.p, t.q), None

    def _min_alpha(self, t, size, side):
        return _ceil_div(t.p, t.q)

    _min_alpha_larger = _min_alpha


class _OverOneSize(Measure):
    """|x ∩ y| divided by one of the two sizes, ``_size(x, y)``: the rows below differ only in which."""

    _size = staticmethod(max)

    def similarity(self, overlap, size_x, size_y):
        m = self._size(size_x, size_y)
        return _fraction(overlap, m) if m else _fraction(0)

    def ratio(self, o, x, y, decimals):
        return o, (np.maximum if self._size is max else np.minimum)(x, y)

    def accept(self, t, overlap, size_x, size_y):
        return size_x > 0 and size_y > 0 and t.q * overlap >= t.p * self._size(size_x, size_y)

    def required_overlap(self, t, size_x, size_y):
        return _ceil_div(t.p * self._size(size_x, size_y), t.q)


class ContainmentMin(_OverOneSize):
    """|x ∩ y| / max(|x|, |y|): the smaller of the two containments (symmetric).

    This is SetSimilaritySearch 1.0's ``containment_min`` (its ``utils.py``
    divides by ``max(l1, l2)``), kept for :mod:`allpairs.compat`.
    ``C >= t`` iff ``qo >= p·max(x, y)``, so α = ⌈t·max(x, y)⌉; with
    o <= min(x, y): ``t·x <= y <= x/t``. The smallest α over the window and
    over y >= x are both ⌈t·x⌉ (prefix ``x - ⌈t·x⌉ + 1``).
    """

    name, code, formula = "containment_min", 5, "|x∩y| / max(|x|,|y|)"
    _size = staticmethod(max)

    def _window(self, t, size, side):
        return _ceil_div(t.p * size, t.q), (t.q * size) // t.p

    def _min_alpha(self, t, size, side):
        return _ceil_div(t.p * size, t.q)

    _min_alpha_larger = _min_alpha


class ContainmentEither(_OverOneSize):
    """|x ∩ y| / min(|x|, |y|): the larger of the two containments (symmetric).

    Reaches t iff at least one direction of containment does, so a self-join
    or R–S join for containment finds its candidates with this row and then
    keeps each direction that holds. ``C >= t`` iff ``qo >= p·min(x, y)``:
    α = ⌈t·min(x, y)⌉, no size bound either way (a one-token set is contained
    in anything that holds it). Every set must be probed whole; the smallest α
    over partners at least as large is ⌈t·x⌉, so an index built in increasing
    size (or probed by larger sets only) holds ``x - ⌈t·x⌉ + 1`` tokens.
    """

    name, code, formula = "containment_either", 6, "|x∩y| / min(|x|,|y|)"
    _size = staticmethod(min)

    def _window(self, t, size, side):
        return 1, None

    def _min_alpha(self, t, size, side):
        return 1

    def _min_alpha_larger(self, t, size, side):
        return _ceil_div(t.p * size, t.q)


#: Every measure, by name: the table. ``containment_either`` is internal (the
#: candidates of a containment join); the others are user-facing.
MEASURES: dict[str, Measure] = {m.name: m for m in (
    Jaccard(), Cosine(), Dice(), Containment(), Overlap(), ContainmentMin(), ContainmentEither())}

#: What ``--measure`` and ``join(measure=...)`` accept.
JOIN_MEASURES = ("jaccard", "cosine", "dice", "containment", "overlap")


def get_measure(name: "str | Measure", allowed=JOIN_MEASURES) -> Measure:
    """The table row of a measure name; an unknown name is a usage error."""
    if isinstance(name, Measure):
        return name
    if name not in allowed:
        raise UsageError(f"unknown measure {name!r}; choose one of {', '.join(allowed)}")
    return MEASURES[name]


def parse_threshold(value, measure: "str | Measure" = "jaccard") -> Threshold:
    """The threshold for a measure: a whole number k >= 1 for overlap, else as :meth:`Threshold.parse`.

    An overlap threshold is any value equal to a whole number (``3``, ``"3"``,
    ``"3/1"``, ``"3.0"``, ``Fraction(3)``, ``Threshold(3, 1)``), kept as
    ``Threshold(k, 1)``.
    """
    m = get_measure(measure, tuple(MEASURES))
    if not m.integer_threshold:
        return Threshold.parse(value)
    k = None
    if isinstance(value, Threshold):
        value = value.fraction
    value = decimal_text(value)  # Decimal("3"): the text "3"
    if isinstance(value, bool):
        pass
    elif isinstance(value, numbers.Integral):
        k = int(value)
    elif isinstance(value, float) and value.is_integer():
        k = int(value)
    elif isinstance(value, numbers.Rational):  # Fraction(2), Fraction(4, 2): a whole number all the same
        k = int(value) if value.denominator == 1 else None
    elif isinstance(value, str):  # "2", "+2", "2/1", "2.0": any text whose value is a whole number
        text = _check_threshold_text(value)
        try:
            frac = _fraction(text)
        except (ValueError, ZeroDivisionError, OverflowError):
            frac = None
        k = int(frac) if frac is not None and frac.denominator == 1 else None
    if k is None:
        raise UsageError(f"threshold {value!r} is not a whole number; --measure overlap counts common tokens, "
                         "give an integer k >= 1 such as 3")
    if k < 1:
        raise UsageError(f"overlap threshold {k} is below 1; give the number of common tokens, k >= 1")
    if k >= 2**31:
        raise UsageError(f"overlap threshold {k} is above 2**31 - 1 tokens")
    return Threshold(k, 1)
