"""The S-curve of LSH banding and the choice of bands and rows from a threshold.

Leskovec, Rajaraman, Ullman, *Mining of Massive Datasets*, ch. 3.4.2: with b
bands of r rows, a pair of similarity s agrees on one band with probability
``s**r`` and becomes a candidate with probability ``P(s) = 1 - (1 - s**r)**b``;
the curve rises steepest near its knee ``(1/b)**(1/r)``.

The parameter rule here is recall-first (:func:`choose_params`): a pair exactly
at the threshold must be caught with at least the target probability, and
within that, the steepest curve.
"""
from __future__ import annotations

import math
from numbers import Real

import numpy as np

from ..errors import UsageError
from .bands import check_banding
from .minhash import MAX_NUM_PERM, _check_positive, check_num_perm

__all__ = ["probability", "choose_params", "knee", "expected_recall"]


def _check_similarity(s) -> np.ndarray:
    s = np.asarray(s, dtype=np.float64)
    if np.isnan(s).any() or (s < 0).any() or (s > 1).any():
        raise UsageError("similarities must lie in [0, 1]")
    return s


def probability(s, bands: int, rows: int):
    """Probability that a pair of Jaccard similarity ``s`` becomes a candidate: ``1 - (1 - s**r)**b``.

    Parameters
    ----------
    s : float or array of float, any shape
        Similarities in [0, 1].
    bands, rows : int
        b and r, at least 1.

    Returns
    -------
    float or ndarray of float64, the shape of ``s``
        Computed as ``-expm1(b * log1p(-s**r))`` so that tiny probabilities at
        small ``s`` keep their digits.
    """
    _check_positive("bands", bands)
    _check_positive("rows", rows)
    s = _check_similarity(s)
    miss = np.power(s, rows)
    with np.errstate(divide="ignore"):  # s = 1: log1p(-1) = -inf, P = 1
        p = -np.expm1(bands * np.log1p(-miss))
    return float(p) if p.ndim == 0 else p


def knee(bands: int, rows: int) -> float:
    """The similarity ``(1/b)**(1/r)`` near which the S-curve rises steepest (the LSH "threshold")."""
    _check_positive("bands", bands)
    _check_positive("rows", rows)
    return (1.0 / bands) ** (1.0 / rows)


def expected_recall(similarities, bands: int, rows: int) -> float:
    """Mean of ``P(s)`` over the given true similarities: the expected share of them LSH finds.

    Parameters
    ----------
    similarities : array of float, shape (m,)
        True Jaccard similarities of the pairs that should be found.
    bands, rows : int

    Returns
    -------
    float
        NaN if ``similarities`` is empty.
    """
    p = np.atleast_1d(probability(np.asarray(similarities, dtype=np.float64), bands, rows))
    return float(p.mean()) if p.size else math.nan


def choose_params(threshold: float, num_perm: int, *, recall: float = 0.99) -> tuple[int, int]:
    """Bands and rows for a threshold, recall first.

    Rule: the largest ``r`` such that ``b = num_perm // r`` bands give
    ``P(threshold) >= recall``; returns ``(b, r)``. Why: the false candidates
    come overwhelmingly from the many pairs of low similarity, where
    ``P(s) ≈ b s**r``, so each extra row divides them by ``1/s`` while extra
    bands only multiply them by a constant; and for a given ``r``, using every
    one of the K values (``b = K // r``) buys the most recall for the signatures
    already computed. (Fewer bands could still meet the target, e.g. 35 × 3
    instead of 42 × 3 below, with somewhat fewer false candidates and less
    margin above it.) ``P(t)`` is largest for ``r = 1``, so if ``K × 1`` misses
    the target no banding meets it.

    What it picks at ``recall = 0.99`` (P at the threshold, knee):

    ===  =========  =================  =================  =================
    K    t          0.5                0.7                0.9
    ===  =========  =================  =================  =================
    48   (b, r)     24 × 2             16 × 3             8 × 6
    48   P(t)       0.9990, knee 0.20  0.9988, knee 0.40  0.9977, knee 0.71
    128  (b, r)     42 × 3             32 × 4             12 × 10
    128  P(t)       0.9963, knee 0.29  0.9998, knee 0.42  0.9942, knee 0.78
    ===  =========  =================  =================  =================

    The Go experiment's 16 × 3 (K = 48, t = 0.5) has ``P(0.5) = 0.882``: its
    99% is the recall over all pairs with J >= 0.5, most of which lie well
    above 0.5, not the probability at the threshold.

    Parameters
    ----------
    threshold : float
        The Jaccard threshold t, in (0, 1].
    num_perm : int
        K, the number of MinHash values per set.
    recall : float, default 0.99
        Target probability of catching a pair at exactly ``s = t``, in (0, 1).

    Returns
    -------
    (bands, rows) : tuple of int
        ``bands * rows <= num_perm``.

    Raises
    ------
    UsageError
        Parameters out of range, or no banding of ``num_perm`` values reaches
        the target (the message gives the smallest K that would).
    """
    check_num_perm(num_perm)
    if isinstance(threshold, bool) or not isinstance(threshold, Real) or not 0 < threshold <= 1:
        raise UsageError(f"threshold must be in (0, 1], got {threshold!r}")
    if isinstance(recall, bool) or not isinstance(recall, Real) or not 0 < recall < 1:
        raise UsageError(f"recall must be in (0, 1) (a probability below certainty), got {recall!r}")
    t = float(threshold)
    # P(t) falls as r grows (with b = K // r), so scan from r = K down and stop at the first hit.
    for r in range(int(num_perm), 0, -1):
        b = num_perm // r
        if probability(t, b, r) >= recall:
            check_banding(b, r, num_perm)
            return b, r
    need = math.ceil(math.log1p(-recall) / math.log1p(-t))
    missed = (f"with num_perm {num_perm}, even {num_perm} bands of 1 row catch a pair at "
              f"s = {t} only with probability {probability(t, num_perm, 1):.4g} < recall {recall}")
    if need <= MAX_NUM_PERM:
        raise UsageError(f"{missed}; raise {{{{num_perm}}}} to at least {need} or lower {{{{recall}}}}", param="num_perm")
    raise UsageError(f"{missed}, and no num_perm up to the limit of {MAX_NUM_PERM:,} reaches it; lower {{{{recall}}}} "
                     "or give {{bands}} and {{rows}}", param="recall")
