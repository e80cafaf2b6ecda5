"""The exact path (stages 4a and 5): the prefix-filter join of the distinct sets (self or R–S), and the
ranked joins (top-k pairs, k nearest neighbours)."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..errors import UsageError
from ..exact.plan import join_plan, per_size
from ..exact.prefix import LEFT_SIDE, RIGHT_SIDE, prefix_join_blocks
from .._kernels.jit import kernel_mode
from ..measures import Measure, Threshold
from ..order import OrderedSets
from ..output import spill as spill_module
from .._plural import count
from .sink import COUNT_BLOCK, PairSink
from .stats import Progress, Stats, available_memory

if TYPE_CHECKING:  # an annotation only: a join asked for clusters imports the module
    from ..pairs.clusters import SetUnion


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
    from ..exact.topk import check_k  # here, not at the top: only top and neighbors need the ranked joins

    check_k(name, k, measure)
    if method != "exact":
        raise UsageError(f"{{{{{name}}}}} is exact only; drop {{{{method=lsh}}}}", param="method")
    if against is not None:
        raise UsageError(f"{{{{{name}}}}} is for a self-join; drop {{{{against}}}}", param="against")
    if clusters:
        raise UsageError(f"{{{{{name}}}}} prints pairs, not clusters; drop {{{{clusters=True}}}}", param="clusters")
    return name


def ranked_pairs_of(sets: OrderedSets, floor: Threshold | None, measure: Measure, *, top: int | None,
                    neighbors: int | None, jobs: int, stats: Stats, memory: int | None = None,
                    progress: Progress | None = None):
    """Stages 4a and 5 for ``top`` or ``neighbors`` (:mod:`allpairs.exact.topk`): the pairs in their order,
    and the threshold of the last join run."""
    from ..exact.topk import neighbor_lists, top_set_pairs
    from ..pairs.ranked import NeighborPairs, ranked_pairs

    weight = np.diff(sets.group_indptr).astype(np.int64)
    budget = memory if memory is not None else available_memory() // 2
    block_pairs = max(1, budget // spill_module.SET_PAIR_BYTES)  # each join's pairs a block at a time
    if top is not None:
        found = top_set_pairs(sets.indptr, sets.tokens, sets.num_tokens, weight, top, measure=measure,
                              floor=floor, jobs=jobs, first=sets.group_docs[sets.group_indptr[:-1]],
                              block_pairs=block_pairs)
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
                           neighbors, measure=measure, floor=floor, jobs=jobs, block_pairs=block_pairs,
                           progress=(lambda d, n: progress("neighbors", d, n)) if progress else None)
    stats.candidates = lists.candidates
    ts = lists.thresholds
    steps = ", ".join(str(t) for t in ts) if len(ts) <= 4 else f"{ts[0]}, {ts[1]}, ..., {ts[-1]}"
    pairs = NeighborPairs(sets, lists)
    # Two counts of pairs that differ by design: those output, and those the joins verified to pick them from.
    stats.ranked = (f"{count(len(pairs), 'pair')} output, the {neighbors:,} nearest neighbours of each document "
                    f"(fewer where fewer share a token); to find them {count(len(ts), 'join')} at t = {steps} "
                    f"({'the floor' if floor is not None else 'each set done once it has K partners'}) read "
                    f"{count(lists.candidates, 'candidate')} and verified {count(lists.set_pairs, 'pair')} of "
                    f"distinct sets, of which each set keeps its {neighbors:,} best")
    return pairs, lists.threshold


def _much_join(sets: OrderedSets, t: Threshold, measure: Measure) -> bool:
    """Whether the join stage of a run whose kernels run as plain Python should run compiled after all."""
    return kernel_mode() == "python" and candidate_bound(sets, t, measure) > PLAIN_CANDIDATES


def exact_pairs(sets: OrderedSets, t: Threshold, measure: Measure, *, n_left: int | None = None,
                jobs: int | None = None, progress: Progress | None = None, memory: int | None = None,
                count: bool = False, spill=None, union: SetUnion | None = None):
    """Stages 4a and 5 of the exact path, self or R–S: the prefix-filter join of the distinct sets, a block at a time.

    For an R–S join, documents ``0 .. n_left - 1`` are the left side; each
    distinct set is marked with the sides its documents lie on. The probe hands
    its pairs over in blocks of about ``memory`` bytes
    (:func:`allpairs.exact.prefix.prefix_join_blocks`; ``None``: half the
    memory available). ``count``: each block is counted (identical documents
    by arithmetic) and dropped. Else the pairs are kept; past the budget they
    are spilled to sorted runs in a directory beside ``spill`` (True: in
    ``TMPDIR``) or, with ``spill`` None, the join stops with one line. ``union``
    takes every block's pairs as they pass (clusters). Returns the pairs
    (:class:`Pairs`, :class:`SpilledPairs` or :class:`CountedPairs`) and the
    number of candidates verified.
    """
    sides = None
    if n_left is not None:
        on_left, on_right = sets.doc_set[:n_left], sets.doc_set[n_left:]
        sides = (np.where(np.bincount(on_left[on_left >= 0], minlength=sets.num_sets) > 0, LEFT_SIDE, 0)
                 | np.where(np.bincount(on_right[on_right >= 0], minlength=sets.num_sets) > 0, RIGHT_SIDE, 0))
    budget = memory if memory is not None else available_memory() // 2
    block_pairs = max(1, budget // spill_module.SET_PAIR_BYTES)
    if count:  # a block is counted and dropped: a larger one buys nothing
        block_pairs = min(block_pairs, COUNT_BLOCK)
    sink = PairSink(sets, budget=budget, block_pairs=block_pairs, group_ok=group_ok_of(sets, t, measure),
                    count=count, spill=spill, union=union, n_left=n_left, progress=progress,
                    symmetric=measure.symmetric)
    for block in prefix_join_blocks(sets.indptr, sets.tokens, sets.num_tokens, t, block_pairs=block_pairs,
                                    measure=measure, sides=sides, jobs=jobs, progress=sink.tick):
        sink.add(block)
    return sink.finish(), sink.candidates


def group_ok_of(sets: OrderedSets, t: Threshold, measure: Measure) -> np.ndarray:
    """Whether identical documents of each distinct set are a pair: when the set reaches t with itself
    (not, for overlap k, below k tokens). Asked of the sets of two documents or more only: a set of one
    has no such pair (False; a distinct corpus asks nothing)."""
    ok = np.zeros(sets.num_sets, np.bool_)
    many = np.flatnonzero(np.diff(sets.group_indptr) > 1)
    if len(many):
        ok[many] = per_size(lambda s: int(measure.accept(t, s, s, s)), sets.indptr[many + 1] - sets.indptr[many])
    return ok
