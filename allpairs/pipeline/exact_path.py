"""The exact path (stages 4a and 5): the prefix-filter join of the distinct sets (self or R–S), and the
ranked joins (top-k pairs, k nearest neighbours)."""
from __future__ import annotations

from __future__ import annotations


import numpy as np

from ..errors import UsageError
from ..exact import prefix_join
from ..exact.topk import check_k, neighbor_lists, top_set_pairs
from ..exact.prefix import LEFT_SIDE, RIGHT_SIDE, join_plan, per_size
from .._kernels.jit import kernel_mode
from ..measures import Measure, Threshold
from ..order import OrderedSets
from ..pairs import Pairs
from ..pairs.ranked import NeighborPairs, ranked_pairs
from .stats import Progress, Stats



#: A join of a small input with more candidate entries than this (the bound of
#: :func:`candidate_bound`) runs its join stage compiled: a handful of sets sharing
#: frequent tokens can be a lot of work for few bytes.
PLAIN_CANDIDATES = 50_000


def candidate_bound(sets: OrderedSets, t: Threshold, measure: Measure) -> int:
    """An upper bound on the posting entries the prefix-filter join reads: for each token, the sets
    whose probing prefix holds it times those whose indexing prefix does (numpy, linear)."""
    sizes = np.diff(sets.indptr)
    if len(sizes) == 0:
        return 0
    _, index_len, probe_len, _, _ = join_plan(measure, t, sizes)
    position = np.arange(len(sets.tokens)) - np.repeat(sets.indptr[:-1], sizes)
    probed = np.bincount(sets.tokens[position < np.repeat(probe_len, sizes)], minlength=sets.num_tokens)
    indexed = np.bincount(sets.tokens[position < np.repeat(index_len, sizes)], minlength=sets.num_tokens)
    return int(probed.astype(np.int64) @ indexed.astype(np.int64))



def check_ranked(top: int | None, neighbors: int | None, measure: Measure, *, method: str = "exact",
                 against=None, clusters: bool = False) -> str | None:
    """Check ``top`` and ``neighbors`` (whole numbers >= 1, not both, exact Jaccard, cosine or dice self-joins);
    return "top", "neighbors" or None."""
    given = [(name, k) for name, k in (("top", top), ("neighbors", neighbors)) if k is not None]
    if not given:
        return None
    if len(given) > 1:
        raise UsageError("{{top}} and {{neighbors}} ask different questions; give one of them", param="neighbors")
    name, k = given[0]
    check_k(name, k, measure)
    if method != "exact":
        raise UsageError(f"{{{{{name}}}}} is exact only; drop {{{{method=lsh}}}}", param="method")
    if against is not None:
        raise UsageError(f"{{{{{name}}}}} is for a self-join; drop {{{{against}}}}", param="against")
    if clusters:
        raise UsageError(f"{{{{{name}}}}} prints pairs, not clusters; drop {{{{clusters=True}}}}", param="clusters")
    return name


def ranked_pairs_of(sets: OrderedSets, floor: Threshold | None, measure: Measure, *, top: int | None,
                    neighbors: int | None, jobs: int, stats: Stats):
    """Stages 4a and 5 for ``top`` or ``neighbors`` (:mod:`allpairs.exact.topk`): the pairs in their order,
    and the threshold of the last join run."""
    weight = np.diff(sets.group_indptr).astype(np.int64)
    if top is not None:
        found = top_set_pairs(sets.indptr, sets.tokens, sets.num_tokens, weight, top, measure=measure,
                              floor=floor, jobs=jobs)
        pairs = ranked_pairs(sets, found, measure)
        stats.candidates = found.candidates
        ts = ", ".join(str(t) for t in found.thresholds) or "none (identical documents suffice)"
        last = pairs[-1] if len(pairs) else None
        if last is not None:
            v = measure.truncated(last.overlap, last.left_size, last.right_size, 6)
        kth = "" if last is None else f"; the last of {len(pairs):,} at {v // 10**6}.{v % 10**6:06d}"
        stats.notes.append(f"top {top:,}: threshold joins at t = {ts}{kth}")
        return pairs, found.thresholds[-1] if found.thresholds else Threshold(1, 1)
    lists = neighbor_lists(sets.indptr, sets.tokens, sets.num_tokens, sets.group_indptr, sets.group_docs,
                           neighbors, measure=measure, floor=floor, jobs=jobs)
    stats.candidates = lists.candidates
    stats.notes.append(f"{neighbors:,} nearest neighbours of each document, from joins down to t = {lists.threshold}")
    return NeighborPairs(sets, lists), lists.threshold


def _much_join(sets: OrderedSets, t: Threshold, measure: Measure) -> bool:
    """Whether the join stage of a run whose kernels run as plain Python should run compiled after all."""
    return kernel_mode() == "python" and candidate_bound(sets, t, measure) > PLAIN_CANDIDATES


def exact_pairs(sets: OrderedSets, t: Threshold, measure: Measure, *, n_left: int | None = None,
                jobs: int | None = None, progress: Progress | None = None):
    """Stages 4a and 5 of the exact path, self or R–S: the prefix-filter join of the distinct sets.

    For an R–S join, documents ``0 .. n_left - 1`` are the left side; each
    distinct set is marked with the sides its documents lie on. Returns the
    pairs and the :class:`~allpairs.exact.prefix.SetPairs` they came from.
    """
    sides = None
    if n_left is not None:
        on_left, on_right = sets.doc_set[:n_left], sets.doc_set[n_left:]
        sides = (np.where(np.bincount(on_left[on_left >= 0], minlength=sets.num_sets) > 0, LEFT_SIDE, 0)
                 | np.where(np.bincount(on_right[on_right >= 0], minlength=sets.num_sets) > 0, RIGHT_SIDE, 0))
    found = prefix_join(sets.indptr, sets.tokens, sets.num_tokens, t, measure=measure, sides=sides, jobs=jobs,
                        progress=(lambda d, n: progress("join", d, n)) if progress else None)
    # Identical documents are a pair when a set reaches t with itself (not, for overlap k, below k tokens).
    group_ok = per_size(lambda s: int(measure.accept(t, s, s, s)), np.diff(sets.indptr)).astype(bool)
    pairs = Pairs(sets, found.left, found.right, found.overlap, directions=found.directions, n_left=n_left,
                  group_ok=group_ok)
    return pairs, found
