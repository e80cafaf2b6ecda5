"""SetSimilaritySearch 1.0.1's ``all_pairs``, with its arguments, checks, pairs, order and types, compiled."""
from __future__ import annotations

import importlib
import sys

from allpairs.compat._engine import check_arguments, self_join
from allpairs.compat.utils import (
    _debug,
    _frequency_order_transform,
    _overlap_threshold_funcs,
    _symmetric_similarity_funcs,
)


def all_pairs(sets, similarity_func_name="jaccard", similarity_threshold=0.5):
    """Find all pairs of sets whose similarity is at least ``similarity_threshold``.

    SetSimilaritySearch 1.0.1's All-Pair-Binary with a position filter
    (Bayardo et al., WWW 2007), run by compiled kernels: the same pairs, in
    the same order, with the same values and types.

    Parameters
    ----------
    sets : list
        A non-empty list of iterables of hashable tokens. A list that repeats
        a token is scored as SetSimilaritySearch scores it (each repeat counts
        as a match of its own).
    similarity_func_name : str
        ``"jaccard"``, ``"cosine"`` or ``"containment_min"`` (symmetric only).
    similarity_threshold : float
        In [0, 1], compared as SetSimilaritySearch compares it (a numpy float
        in numpy's precision rules).

    Yields
    ------
    tuple
        ``(x, y, similarity)``: ``x > y`` indices into ``sets`` (numpy int64),
        the similarity a float (``numpy.float64`` for cosine). A generator:
        the arguments are checked when the first pair is asked for. Memory
        holds the index of prefixes and one batch of pairs, not all pairs.

    Raises
    ------
    ValueError
        With SetSimilaritySearch's messages: ``sets`` not a non-empty list, an
        unknown or asymmetric measure, a threshold outside [0, 1].
    """
    check_arguments(sets, similarity_func_name, similarity_threshold)
    if similarity_func_name not in _symmetric_similarity_funcs:
        raise ValueError("The similarity function must be symmetric ({})".format(
            ", ".join(_symmetric_similarity_funcs)))
    ranked = _frequency_order_transform(sets, _ranked=True)
    _debug("Find all pairs with similarities >= {}...", similarity_threshold)
    count = 0
    for n, pairs in self_join(ranked, similarity_func_name, similarity_threshold,
                              _overlap_threshold_funcs[similarity_func_name]):
        yield from pairs
        count += n
    _debug("{} pairs found.", count)


if __name__ != "allpairs.compat.all_pairs":  # loaded as SetSimilaritySearch.all_pairs (see allpairs.compat)
    sys.modules[__name__] = importlib.import_module("allpairs.compat.all_pairs")
