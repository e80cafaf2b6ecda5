"""Top-k pairs and k-nearest-neighbour lists of distinct sets, exactly, from threshold joins.

Top-k (the question of Xiao, Wang, Lin, Shang, "Top-k Set Similarity Joins",
ICDE 2009) is answered here by a descending sequence of prefix-filter joins
(:func:`allpairs.exact.prefix.prefix_join`) over the same ordered sets: a join
at threshold t finds every pair at or above t, so once it finds K document
pairs the K best are among them. The thresholds come from the data: each step
extrapolates the pair counts of the last two joins (log-linear in 1 - t) to
the threshold that should give about K pairs. Measured against Xiao et al.'s
event-driven algorithm the sequence was as fast for K in the thousands and
costs no second join algorithm; it costs about one threshold join at the
K-th similarity.

Similarities are ordered exactly (:func:`exact_ranks`): as reduced fractions
(cosine as its square), never as floats.

k-NN lists: one threshold join at the floor (without one, at the smallest
positive similarity the set sizes allow, so that every pair sharing a token
is found), then each distinct set keeps its K + 1 best partner documents,
its own identical documents first (at 1.0), ties by the partner's position.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Callable

import numpy as np

from ..errors import UsageError
from ..measures import Measure, Threshold, get_measure
from .prefix import LEFT_SIDE, RIGHT_SIDE, SetPairs, prefix_join_blocks

#: Measures that take --top and --neighbors: symmetric, with a size bound that tightens as t rises.
RANKED_MEASURES = ("jaccard", "cosine", "dice")

#: The first threshold of the sequence is 1 - FIRST_GAP (k-NN: its gap grows by NEIGHBOR_WIDEN from there).
FIRST_GAP = Fraction(1, 20)

#: k-NN steps widen the gap 1 - t by this factor. Measured on 50,000 product titles (word:1, K = 3):
#: doubling joined at 0.6 then 0.3, reading 11.0 M candidates in 31-44 s; widening by 5/4 stops most
#: sets between 0.6 and 0.4 and reads 1.7 M in 7.5-8 s, the same lists (docs/benchmarks.md). On
#: paragraphs and passwords, where sets are done early or late, both read the same (+-6 %).
NEIGHBOR_WIDEN = Fraction(5, 4)

#: Each step widens the gap 1 - t by at least and at most these factors.
MIN_WIDEN, MAX_WIDEN = 1.05, 4.0

#: A step aims at this many times K pairs, so that a slightly convex count curve still reaches K.
AIM = 1.2

#: Thresholds of the sequence are multiples of 1 / GRID (the floor and the lowest excepted).
GRID = 1000


def check_k(name: str, k, measure: Measure) -> None:
    """Refuse a K of ``--top``/``--neighbors`` (``name``) that is not a whole number >= 1, and a measure
    without a tightening size bound, in one line each."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise UsageError(f"{{{{{name}={k!r}}}}} is not a whole number; give K >= 1", param=name)
    if k < 1:
        raise UsageError(f"{{{{{name}={k}}}}} is below 1; give the number of pairs wanted, K >= 1", param=name)
    if k >= 2**31:
        raise UsageError(f"{{{{{name}={k}}}}} is above 2**31 - 1", param=name)
    if measure.name not in RANKED_MEASURES:
        raise UsageError(f"{{{{{name}}}}} takes {{{{measure}}}} {', '.join(RANKED_MEASURES)}, not {measure.name}",
                         param="measure")


def _num_den(measure: Measure, o: np.ndarray, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each similarity as an int64 fraction ordered as the similarity is (cosine squared)."""
    o, x, y = (np.asarray(a, np.int64) for a in (o, x, y))
    if measure.name == "jaccard":
        return o, x + y - o
    if measure.name == "dice":
        return 2 * o, x + y
    if measure.name == "cosine":
        return o * o, x * y
    raise ValueError(f"no exact order for measure {measure.name}")


def exact_ranks(measure: Measure | str, o: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Dense int64 ranks of the similarities of pairs (overlap ``o``, sizes ``x``, ``y``): equal similarities
    get equal ranks, a larger similarity a larger rank; decided on integers.

    Fractions are reduced, grouped, and put in order by their float value, which
    division rounds monotonically (numerators and denominators below 2**53 are
    exact floats); fractions that share a float are then ordered by
    :class:`fractions.Fraction`.
    """
    num, den = _num_den(get_measure(measure), o, x, y)
    n = len(num)
    if n == 0:
        return np.zeros(0, np.int64)
    g = np.gcd(num, den)
    g[g == 0] = 1
    num, den = num // g, den // g
    value = num / den
    order = np.lexsort((den, num, value))
    vs, ns, ds = value[order], num[order], den[order]
    new = np.ones(n, bool)
    new[1:] = (ns[1:] != ns[:-1]) | (ds[1:] != ds[:-1])
    first = np.flatnonzero(new)
    distinct = np.cumsum(new) - 1
    big = max(int(num.max()), int(den.max())) >= 2**53
    fv = vs[first]
    if big:  # floats would not be exact: one exact sort of the distinct fractions
        runs = [(0, len(first))]
    else:
        same = np.flatnonzero(fv[1:] == fv[:-1])
        runs = []
        k = 0
        while k < len(same):
            a = same[k]
            b = a + 1
            while k < len(same) and same[k] == b - 1:
                b += 1
                k += 1
            runs.append((int(a), int(b)))
    if runs:
        remap = np.arange(len(first), dtype=np.int64)
        for a, b in runs:
            fr = [Fraction(int(ns[first[i]]), int(ds[first[i]])) for i in range(a, b)]
            by = sorted(range(b - a), key=fr.__getitem__)
            remap[a + np.array(by, np.int64)] = np.arange(a, b)
        distinct = remap[distinct]
    ranks = np.empty(n, np.int64)
    ranks[order] = distinct
    return ranks


def best_per_group(group: np.ndarray, ranks: np.ndarray, tie: np.ndarray, k: int) -> np.ndarray:
    """Positions of the ``k`` best entries of each group (largest rank first, ties by smallest ``tie``), in
    the order of (group, rank descending, tie)."""
    order = np.lexsort((tie, -np.asarray(ranks, np.int64), group))
    g = np.asarray(group)[order]
    first = np.searchsorted(g, g, side="left")
    return order[(np.arange(len(g)) - first) < k]


def lowest_threshold(measure: Measure, largest: int) -> Threshold:
    """A threshold at or below every positive similarity of sets of at most ``largest`` tokens, so that a
    join at it finds every pair sharing a token: 1/(2L - 1) for Jaccard, 1/L for cosine and dice."""
    if measure.name == "jaccard":
        return Threshold(1, max(1, 2 * largest - 1))
    return Threshold(1, max(1, largest))


@dataclass
class TopSets:
    """The distinct-set pairs behind the K best document pairs.

    Every document pair from ``strict`` pairs (and, when ``identical_strict``,
    from identical documents) is among the K best; of those from ``tie`` pairs
    (and identical documents when ``identical_tie``), all at the K-th
    similarity, the first ``need`` in (left, right) order complete the K.
    """

    strict: SetPairs
    tie: SetPairs
    identical_strict: bool
    identical_tie: bool
    need: int
    thresholds: list[Threshold] = field(default_factory=list)
    candidates: int = 0
    found: int = 0


def _empty_pairs() -> SetPairs:
    z = np.zeros(0, np.int32)
    return SetPairs(z, z, z, 0)


def _subset(found: SetPairs, keep: np.ndarray) -> SetPairs:
    return SetPairs(found.left[keep], found.right[keep], found.overlap[keep], 0)


def _document_pairs(found: SetPairs, weight: np.ndarray) -> np.ndarray:
    """Document pairs behind each set pair (the product of their documents' counts), int64."""
    return weight[found.left] * weight[found.right]


def _next_gap(gaps: list[float], counts: list[int], want: float) -> float:
    """The next gap 1 - t: where the log of the count, linear in the gap through the last two joins,
    reaches ``want``; widened by MIN_WIDEN to MAX_WIDEN times the last gap."""
    g = gaps[-1]
    guess = MAX_WIDEN * g
    if len(gaps) >= 2 and counts[-1] > counts[-2] > 0:
        slope = (math.log(counts[-1]) - math.log(counts[-2])) / (gaps[-1] - gaps[-2])
        guess = g + (math.log(want) - math.log(counts[-1])) / slope
    elif counts[-1] > 0:
        guess = 2 * g
    return min(max(guess, MIN_WIDEN * g), MAX_WIDEN * g)


def top_set_pairs(indptr: np.ndarray, tokens: np.ndarray, num_tokens: int, weight: np.ndarray, k: int, *,
                  measure: Measure | str = "jaccard", floor: Threshold | None = None,
                  jobs: int | None = None, first: np.ndarray | None = None,
                  block_pairs: int = 1 << 22) -> TopSets:
    """The set pairs behind the K best document pairs (similarity at or above ``floor`` when given).

    Parameters
    ----------
    indptr : int64 (m + 1,), tokens : int32
        Distinct sets as for :func:`allpairs.exact.prefix.prefix_join`.
    weight : int64 (m,)
        The documents behind each distinct set: ``w(w-1)/2`` identical document
        pairs at similarity 1, and ``w_a·w_b`` document pairs per set pair.
    k : int >= 1
    first : int array (m,), optional
        Each set's first document (default: the sets in order, one document
        each): ties at the K-th similarity are kept by it.
    block_pairs : int
        Each join's pairs are taken this many at a time, at most
        :func:`top_block` (a few for each pair kept), and cut to those that
        can be among the K best (:func:`_best_of`): memory in K and a block,
        not in the pairs a low threshold finds.
    """
    m_row = get_measure(measure)
    weight = np.asarray(weight, np.int64)
    identical = int((weight * (weight - 1) // 2).sum())
    if identical >= k:  # the K best are all identical documents at 1.0: no join needed
        return TopSets(_empty_pairs(), _empty_pairs(), False, True, k)
    sizes = np.diff(indptr)
    low = lowest_threshold(m_row, int(sizes.max()) if len(sizes) else 1)
    if floor is not None and floor.fraction > low.fraction:
        low = floor
    gap = FIRST_GAP
    gaps: list[float] = []
    counts: list[int] = []
    thresholds: list[Threshold] = []
    candidates = 0
    if first is None:
        first = np.arange(len(sizes), dtype=np.int64)
    block_pairs = top_block(k, block_pairs)
    while True:
        f = 1 - gap
        t = Threshold(f.numerator, f.denominator) if f > low.fraction else low
        n, n_set_pairs, found = identical, 0, _empty_pairs()
        for block in prefix_join_blocks(indptr, tokens, num_tokens, t, block_pairs=block_pairs, measure=m_row,
                                        jobs=jobs):
            candidates += block.candidates
            n += int(_document_pairs(block, weight).sum())
            n_set_pairs += len(block.left)
            found = _best_of(_joined(found, block), sizes, weight, first, k, identical, m_row)
        thresholds.append(t)
        if n >= k or t == low:
            break
        gaps.append(float(1 - t.fraction))
        counts.append(n)
        nxt = _next_gap(gaps, counts, AIM * k)
        gap = Fraction(math.ceil(nxt * GRID), GRID)
        if gap <= 1 - t.fraction:
            gap = 1 - t.fraction + Fraction(1, GRID)
        # Never below half the last threshold in one step: a join's cost climbs steeply as t falls, and a
        # jump to the lowest threshold would pair every two sets sharing a token.
        gap = min(gap, 1 - t.fraction / 2)
    ranks = exact_ranks(m_row, found.overlap, sizes[found.left], sizes[found.right])
    w = _document_pairs(found, weight)
    order = np.argsort(-ranks, kind="stable")
    cum = identical + np.cumsum(w[order])
    j = int(np.searchsorted(cum, k, side="left"))
    if j == len(order):  # fewer than K pairs reach the lowest threshold: all of them
        strict, tie, need = np.ones(len(ranks), bool), np.zeros(len(ranks), bool), 0
    else:
        cut = ranks[order[j]]
        strict, tie = ranks > cut, ranks == cut
        need = k - identical - int(w[strict].sum())
    return TopSets(_subset(found, strict), _subset(found, tie), True, False, need, thresholds, candidates,
                   n_set_pairs)


def _joined(a: SetPairs, b: SetPairs) -> SetPairs:
    if not len(a.left):
        return b
    return SetPairs(*(np.concatenate([getattr(a, f), getattr(b, f)]) for f in ("left", "right", "overlap")), 0)


def _best_of(found: SetPairs, sizes: np.ndarray, weight: np.ndarray, first: np.ndarray, k: int, identical: int,
             measure: Measure) -> SetPairs:
    """The pairs of ``found`` that can be behind the K best document pairs: all above the K-th similarity,
    and of those at it the ``need`` whose first document pair comes first (``first``: each set's first
    document). The first ``need`` document pairs at the K-th similarity, in (left, right) order, come from
    at most ``need`` set pairs, each with its first document pair among them: so from those ``need``."""
    ranks = exact_ranks(measure, found.overlap, sizes[found.left], sizes[found.right])
    w = _document_pairs(found, weight)
    order = np.argsort(-ranks, kind="stable")
    cum = identical + np.cumsum(w[order])
    j = int(np.searchsorted(cum, k, side="left"))
    if j >= len(order):
        return found
    cut = ranks[order[j]]
    keep = ranks > cut
    need = k - identical - int(w[keep].sum())
    tie = np.flatnonzero(ranks == cut)
    fa, fb = first[found.left[tie]].astype(np.int64), first[found.right[tie]].astype(np.int64)
    keep[tie[np.argsort((np.minimum(fa, fb) << 32) | np.maximum(fa, fb), kind="stable")[:need]]] = True
    return _subset(found, keep)


@dataclass
class NeighborLists:
    """Each distinct set's best partner documents, best first, ties by document position (CSR over sets).

    Set ``x`` lists ``doc[ptr[x]:ptr[x+1]]`` with their ``overlap`` with ``x``:
    first up to K + 1 of its own documents (similarity 1), then the documents
    of its partner sets, K + 1 in all at most, so that each of its documents
    has K partners other than itself when there are K.
    """

    ptr: np.ndarray
    doc: np.ndarray
    overlap: np.ndarray
    k: int
    threshold: Threshold
    candidates: int
    set_pairs: int
    #: The thresholds of the joins run, in order (the last is ``threshold``).
    thresholds: list[Threshold] = field(default_factory=list)


def _entries(found: SetPairs, group_indptr: np.ndarray, group_docs: np.ndarray, k: int, wanted: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(set, partner document, overlap) entries of the ``wanted`` sets (bool over sets) from the pairs of
    ``found``: up to K + 1 documents of each partner set (no more can be among a set's K + 1 best)."""
    fwd, back = wanted[found.left], wanted[found.right]
    src = np.concatenate([found.left[fwd], found.right[back]]).astype(np.int64)
    dst = np.concatenate([found.right[fwd], found.left[back]]).astype(np.int64)
    ov = np.concatenate([found.overlap[fwd], found.overlap[back]]).astype(np.int32)
    return _documents_of(src, dst, ov, group_indptr, group_docs, k)


def _documents_of(src, dst, ov, group_indptr, group_docs, k):
    """Entries (set, partner set, overlap) as (set, partner document, overlap): the first K + 1 documents of
    each partner set."""
    cnt = np.minimum(np.diff(group_indptr)[dst], k + 1)
    within = np.arange(int(cnt.sum()), dtype=np.int64) - np.repeat(np.cumsum(cnt) - cnt, cnt)
    src, ov, dst = np.repeat(src, cnt), np.repeat(ov, cnt), np.repeat(dst, cnt)
    return src, group_docs[group_indptr[:-1][dst] + within], ov


def _best_entries(entries: list[tuple[np.ndarray, np.ndarray, np.ndarray]], sizes: np.ndarray,
                  doc_size: np.ndarray, k: int, measure: Measure) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The K + 1 best entries of each set among ``entries`` (pieces of (set, partner document, overlap)),
    sorted by (set, similarity descending, document): a set's own documents first (similarity 1), ties by
    the document's position."""
    src, doc, ov = (np.concatenate(col) for col in zip(*entries))
    ranks = exact_ranks(measure, ov, sizes[src], doc_size[doc])
    keep = best_per_group(src, ranks, doc, k + 1)
    return src[keep], doc[keep], ov[keep]


#: A k-NN step probes its sets in blocks of about this many candidates (each block one join against all
#: sets), expecting each step to read CANDIDATE_GROWTH times the candidates of the one before: the pairs
#: of a low threshold are held a block at a time.
CANDIDATE_BLOCK, CANDIDATE_GROWTH = 1 << 23, 4

#: A k-NN join hands its pairs over in blocks of at most this many pairs for each entry kept ((K + 1) a set),
#: and at least MIN_NEIGHBOR_BLOCK: a block's entries cost about 100 bytes a pair while the best are picked
#: (both directions, K + 1 documents of a partner set, their exact ranks, a sort), so a block of the memory
#: budget's size (5.6 M pairs at 256 MiB) took 1.6 GiB on 5,000 two-token lines whose lists hold 30,000
#: entries. Bounded by the sets, a block costs about what the lists do.
NEIGHBOR_BLOCK, MIN_NEIGHBOR_BLOCK = 4, 1 << 16


def top_block(k: int, block_pairs: int) -> int:
    """Pairs a top-K join hands over at a time: ``block_pairs`` at most, bounded by the set pairs kept
    (at most 2K: those above the K-th similarity, and ``need`` ties at it)."""
    return max(1, min(block_pairs, max(MIN_NEIGHBOR_BLOCK, NEIGHBOR_BLOCK * (k + 1))))


def neighbor_block(k: int, num_sets: int, block_pairs: int) -> int:
    """Pairs a k-NN join hands over at a time: ``block_pairs`` at most, bounded by the entries kept."""
    return max(1, min(block_pairs, max(MIN_NEIGHBOR_BLOCK, NEIGHBOR_BLOCK * (k + 1) * num_sets)))


def neighbor_lists(indptr: np.ndarray, tokens: np.ndarray, num_tokens: int, group_indptr: np.ndarray,
                   group_docs: np.ndarray, k: int, *, measure: Measure | str = "jaccard",
                   floor: Threshold | None = None, jobs: int | None = None,
                   progress: Callable[[int, int], None] | None = None, block_pairs: int = 1 << 22) -> NeighborLists:
    """The K + 1 best partner documents of every distinct set, at or above ``floor`` (any shared token
    when None); ``group_indptr``, ``group_docs`` as in :class:`allpairs.order.OrderedSets`.

    With a floor: one join at it. Without: joins at descending thresholds
    (1 - gap, the gap widening by :data:`NEIGHBOR_WIDEN` from :data:`FIRST_GAP`,
    t at most halved, on the grid of :data:`GRID`, then the lowest positive similarity). A set with K partner documents at or above the
    current threshold has its K best among them and is done; later joins are
    R–S joins of the sets not done against all (a done set only on the
    right side), so that done sets probe no more; a step that should read
    many candidates probes the sets left in blocks (:data:`CANDIDATE_BLOCK`).
    ``progress(done, total)`` is told the sets done before each join, and at the end.
    Each join's pairs come ``block_pairs`` at a time, at most
    :func:`neighbor_block` (a few pairs for each entry kept), and only each
    set's K + 1 best entries are kept from block to block: memory in (K + 1)
    entries a set, never in all the pairs of a low threshold.
    """
    m_row = get_measure(measure)
    sizes = np.diff(indptr)
    m = len(sizes)
    group = np.diff(group_indptr).astype(np.int64)
    doc_size = np.zeros(int(group_docs.max()) + 1 if len(group_docs) else 0, np.int64)  # each document's set size
    doc_size[group_docs] = np.repeat(sizes, group)
    low = floor if floor is not None else lowest_threshold(m_row, int(sizes.max()) if m else 1)
    block_pairs = neighbor_block(k, m, block_pairs)
    undone = np.ones(m, bool)
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    candidates = set_pairs = 0
    gap = FIRST_GAP
    blocks = 1
    thresholds: list[Threshold] = []
    while undone.any():
        f = 1 - gap
        t = Threshold(f.numerator, f.denominator) if floor is None and f > low.fraction else low
        thresholds.append(t)
        if progress is not None:
            progress(m - int(undone.sum()), m)
        rows = np.flatnonzero(undone)
        cum = np.cumsum(sizes[rows])
        earlier = np.zeros(m, bool)  # undone sets of the blocks before: their pairs with this block are found again
        step_candidates = 0
        for part in np.split(rows, np.searchsorted(cum, cum[-1] * np.arange(1, blocks) / blocks, side="right")):
            if not len(part):
                continue
            sides = None
            if len(part) < m:
                sides = np.full(m, RIGHT_SIDE, np.int64)
                sides[part] = LEFT_SIDE | RIGHT_SIDE
            mine = np.zeros(m, bool)
            mine[part] = True
            # Each set of the part starts with its own documents (similarity 1); every block of the join's
            # pairs then adds its partners' and the K + 1 best of each set are kept: memory in the sets.
            own = part.astype(np.int64)
            kept = _best_entries([_documents_of(own, own, sizes[own].astype(np.int32), group_indptr, group_docs, k)],
                                 sizes, doc_size, k, m_row)
            partners = group - 1
            for found in prefix_join_blocks(indptr, tokens, num_tokens, t, block_pairs=block_pairs, measure=m_row,
                                            sides=sides, jobs=jobs):
                step_candidates += found.candidates
                set_pairs += int((~(earlier[found.left] | earlier[found.right])).sum())
                partners = (partners + np.bincount(found.left, group[found.right], minlength=m)
                            + np.bincount(found.right, group[found.left], minlength=m))
                kept = _best_entries([kept, _entries(found, group_indptr, group_docs, k, mine)], sizes, doc_size, k,
                                     m_row)
                del found
            # Partner documents at or above t: identical ones, and those of the pairs found.
            done = mine if t == low else mine & (partners >= k)
            src, doc, ov = kept
            take = done[src]
            parts.append((src[take], doc[take], ov[take]))
            undone &= ~done
            earlier[part] = True
        candidates += step_candidates
        # The next, lower threshold reads more: split the sets left into blocks of about CANDIDATE_BLOCK.
        blocks = max(1, math.ceil(CANDIDATE_GROWTH * step_candidates / CANDIDATE_BLOCK))
        # Wider by NEIGHBOR_WIDEN, on the grid (at least one step of it), t at most halved.
        wider = max(Fraction(math.ceil(NEIGHBOR_WIDEN * gap * GRID), GRID), gap + Fraction(1, GRID))
        gap = min(wider, 1 - t.fraction / 2)
    if progress is not None:
        progress(m, m)
    src, doc, ov = (np.concatenate(col) for col in zip(*parts))
    order = np.argsort(src, kind="stable")  # each set's entries come from one join, already in order
    src, doc, ov = src[order], doc[order], ov[order]
    ptr = np.zeros(m + 1, np.int64)
    np.cumsum(np.bincount(src, minlength=m), out=ptr[1:])
    return NeighborLists(ptr, doc.astype(np.int32), ov, k, t, candidates, set_pairs, thresholds)
