"""The LSH path (stages 4b and 5): its settings checked, signatures, bands, exact verification or the
estimate, and large buckets joined exactly by the prefix filter (the one place the two halves meet)."""
from __future__ import annotations


from dataclasses import dataclass, field
from typing import Iterator

import numpy as np

from ..errors import UsageError
from ..exact.prefix import SetPairs, prefix_join_blocks
from ..exact.subset import prefix_join_rows_blocks
from ..lsh import candidates as lsh_candidates
from ..lsh import (MAX_EXPAND, agreement_counts, agreement_needed, check_banding, check_num_perm, choose_params,
                   estimate_pairs, estimate_table, probability, share_joined_bucket, signature_sets, signatures)
from ..lsh.keysets import KeyedSets
from .._plural import banding, count as count_of
from ..output import spill as spill_module
from ..pairs.clusters import SetUnion
from ..measures import Threshold
from ..order import OrderedSets, order_sets
from ..pairs import Pairs
from ..verify import verify_candidates
from .sink import COUNT_BLOCK, EstimateCode, PairSink
from .stats import Progress, Stats, available_memory, timed


#: Similarities at which the summary shows the S-curve's prediction.
SHOWN_SIMILARITIES = (0.3, 0.5, 0.7, 0.8, 0.9)


@dataclass
class LSHInfo:
    """How the LSH path was set up and what its banding did."""

    num_perm: int
    bands: int
    rows: int
    seed: int
    bits: int | None
    auto: bool
    recall: float
    max_bucket: int | None
    max_expand: int | None = MAX_EXPAND
    oversized: list[tuple[int, int]] = field(default_factory=list)
    joined: list[tuple[int, int]] = field(default_factory=list)
    joined_sets: int = 0
    joined_pairs: int = 0
    skipped_pairs: int = 0
    largest_bucket: int = 0
    signature_bytes: int = 0

    def predicted(self, s):
        """P(s) = 1 - (1 - s^r)^b for this banding."""
        return probability(s, self.bands, self.rows)

    def describe(self) -> str:
        how = f"chosen for P(t) >= {self.recall}" if self.auto else "given"
        bits = f", {self.bits}-bit values" if self.bits else ""
        curve = ", ".join(f"P({s:g}) = {float(self.predicted(s)):.3f}" for s in SHOWN_SIMILARITIES)
        return (f"LSH {banding(self.bands, self.rows)} ({how}) of num_perm {self.num_perm}, seed {self.seed}"
                f"{bits}; {curve}")


#: ``verify="estimate"`` needs MinHash values of at least this many bits. With b-bit values two
#: unrelated sets agree at a position with probability 2**-b, so LSH buckets fill with sets that
#: agree by chance and the estimate join over their signatures (which cannot use the sets' own
#: tokens) meets about n**2 * 2**-b chance agreements: measured on 20,000 Zipf sets, t = 0.5,
#: 1.7 s at 16 and 12 bits, 6.9 s at 8, 73 s at 4, 186 s at 1 (the exact join: 0.9 s).
#: ``verify="exact"`` joins the sets themselves and stays fast at any width.
MIN_ESTIMATE_BITS = 16

#: Without --max-bucket, a bucket this large is worth a warning.
LARGE_BUCKET = 1000


def lsh_settings(threshold: Threshold, *, num_perm: int, bands: int | None, rows: int | None, recall: float,
                 seed: int, bits: int | None, max_bucket: int | None, max_expand: int | None = MAX_EXPAND) -> LSHInfo:
    """Check the LSH options and pick (bands, rows) from the threshold when not both given."""
    check_num_perm(num_perm)
    if (bands is None) != (rows is None):
        given, missing = ("bands", "rows") if rows is None else ("rows", "bands")
        raise UsageError(f"{{{{{given}}}}} needs {{{{{missing}}}}} too; give both, or neither to choose them from the threshold",
                         param=missing)
    if seed < 0 or seed >= 2**64:
        raise UsageError(f"seed {seed} is outside 0 .. 2**64 - 1")
    if bits is not None and not 1 <= bits <= 32:
        raise UsageError(f"bits {bits} is outside 1..32; 16 keeps 2 bytes a value (b-bit MinHash)")
    if max_bucket is not None and max_bucket < 2:
        raise UsageError(f"max bucket {max_bucket} is below 2 (a bucket of 2 sets is one pair); leave it out for no limit")
    if max_expand is not None and max_expand < 1:
        raise UsageError(f"max expand {max_expand} is below 1 (1 joins every bucket exactly); "
                         "None expands every bucket")
    auto = bands is None
    if auto:
        bands, rows = choose_params(float(threshold.fraction), num_perm, recall=recall)
    check_banding(bands, rows, num_perm)
    return LSHInfo(num_perm=num_perm, bands=bands, rows=rows, seed=seed, bits=bits, auto=auto, recall=recall,
                   max_bucket=max_bucket, max_expand=max_expand)


def _estimate_join_blocks(sig: np.ndarray, rows: np.ndarray, t: Threshold, bits: int | None, jobs: int,
                         block_pairs: int, progress) -> Iterator[tuple[np.ndarray, np.ndarray, int]]:
    """Pairs of ``rows`` (ascending) whose MinHash estimate is >= t, found by an exact join of their signatures,
    a block of at most about ``block_pairs`` at a time.

    A pair's estimate is >= t exactly when its rows agree in at least ``c``
    positions (:func:`allpairs.lsh.agreement_needed`); as sets of K (position,
    value) keys two rows overlap in their agreements, and overlap >= c is
    Jaccard >= c / (2K - c). Identical signatures form one distinct set, whose
    rows all pair up (the first block). Yields (left, right) int32 with left <
    right, and the candidates of the join's block (counted once).
    """
    K = sig.shape[1]
    need = agreement_needed(K, float(t.fraction), bits=bits)
    indptr, keys = signature_sets(sig, rows)
    sig_sets = order_sets(indptr, keys)
    none = np.zeros(0, np.int32)
    yield from _rows_of(Pairs(sig_sets, none, none, none), rows, 0, block_pairs)
    apart = np.zeros(sig_sets.num_sets, np.bool_)
    for found in prefix_join_blocks(sig_sets.indptr, sig_sets.tokens, sig_sets.num_tokens,
                                    Threshold(need, 2 * K - need), block_pairs=block_pairs, jobs=jobs,
                                    progress=progress):
        yield from _rows_of(Pairs(sig_sets, found.left, found.right, found.overlap, group_ok=apart), rows,
                            found.candidates, block_pairs)


def _rows_of(pairs: Pairs, rows: np.ndarray, candidates: int, block_pairs: int):
    """The document pairs of ``pairs`` (of signature sets) as pairs of ``rows``, a chunk at a time; the
    candidates go with the first chunk (or an empty one)."""
    for c in pairs.chunks(block_pairs):
        yield rows[c.left], rows[c.right], candidates
        candidates = 0
    if candidates:
        yield rows[:0], rows[:0], candidates


def _join_rows_blocks(sets: OrderedSets, rows: np.ndarray, t: Threshold, jobs: int, block_pairs: int,
                      progress) -> Iterator[SetPairs]:
    """The exact join among the distinct sets ``rows`` (ascending), in indices of all sets, a block at a time.

    Sets of raw keys (:class:`KeyedSets`, in no rank order) are ranked among
    themselves first, rare keys first, so that the prefix filter stays selective.
    """
    if not isinstance(sets, KeyedSets):
        yield from prefix_join_rows_blocks(sets.indptr, sets.tokens, sets.num_tokens, rows, t, jobs=jobs,
                                           block_pairs=block_pairs, progress=progress)
        return
    sub = order_sets(*sets.rows_keys(rows))
    # The rows are distinct sets: each of sub's sets is one of them.
    back = rows[sub.group_docs[sub.group_indptr[:-1]]].astype(np.int32)
    for found in prefix_join_blocks(sub.indptr, sub.tokens, sub.num_tokens, t, block_pairs=block_pairs, jobs=jobs,
                                    progress=progress):
        a, b = back[found.left], back[found.right]
        yield SetPairs(np.minimum(a, b), np.maximum(a, b), found.overlap, found.candidates)


def joined_note(buckets: int, max_expand: int, largest: int, sets: int, pairs: int) -> str:
    """The summary line of the LSH buckets joined exactly instead of expanded (for every engine)."""
    what = "LSH bucket of more than" if buckets == 1 else "LSH buckets of more than"
    were = "was" if buckets == 1 else "were"
    return (f"{buckets:,} {what} {count_of(max_expand, 'distinct set')} (largest {largest:,}) {were} joined "
            f"exactly instead of expanded: {count_of(sets, 'set')}, {count_of(pairs, 'candidate pair')} not expanded; "
            "same result")


def lsh_pairs(sets: OrderedSets, t: Threshold, info: LSHInfo, *, verify: str, jobs: int, stats: Stats,
              memory: int | None = None, count: bool = False, spill=None, union: SetUnion | None = None,
              progress: Progress | None = None, with_signatures: bool = False):
    """Stages 4b and 5 of the LSH path: signatures, bands, then exact verification (or the estimate).

    Buckets too large to expand (more than ``info.max_expand`` sets) are not
    verified pair by pair: their sets are joined exactly by the prefix filter
    (stage 4a, restricted to them), and the pairs found that share such a
    bucket are kept; the result is the same as expanding them, at the cost of
    one exact join of those sets at most. The lsh and exact packages never
    import each other; this function wires them.

    The candidates (at most ``bands · n · (max_expand − 1) / 2`` for ``n``
    distinct sets) are held; the pairs go to a :class:`PairSink` as the exact
    path's do: the verified candidates, then the bucket join's blocks of
    about ``memory`` bytes (None: half the memory available), each counted
    (``count``), taken by ``union`` (clusters), held, or spilled past the
    budget beside ``spill`` (None: stop with one line).

    Returns the pairs and the LSH candidates (pairs of distinct sets) they came from (and, with
    ``with_signatures``, the signature matrix).
    """
    budget = memory if memory is not None else available_memory() // 2
    block_pairs = max(1, budget // spill_module.SET_PAIR_BYTES)
    if count:  # a block is counted and dropped: a larger one buys nothing
        block_pairs = min(block_pairs, COUNT_BLOCK)
    indptr, keys = sets.set_keys()
    with timed(stats, "signatures"):
        sig = signatures(indptr, keys, info.num_perm, seed=info.seed, bits=info.bits, jobs=jobs)
    info.signature_bytes = int(sig.nbytes)
    with timed(stats, "bands"):
        cand = lsh_candidates(sig, info.bands, info.rows, max_bucket=info.max_bucket, max_expand=info.max_expand,
                              empty=np.zeros(sets.num_sets, bool), jobs=jobs)
    info.oversized = cand.oversized
    info.skipped_pairs = int(cand.skipped_pairs)
    info.joined = cand.joined_buckets
    info.joined_pairs = int(cand.joined_pairs)
    info.largest_bucket = int(cand.largest_bucket.max()) if len(cand.largest_bucket) else 0
    stats.candidates = len(cand)
    estimated = verify != "exact"
    code = EstimateCode(lambda a, b: agreement_counts(sig, a, b), estimate_table(sig.shape[1], info.bits))
    # Identical documents always pair on this path (their sets are equal and non-empty).
    sink = PairSink(sets, budget=budget, block_pairs=block_pairs, group_ok=np.ones(sets.num_sets, np.bool_),
                    count=count, spill=spill, union=union, progress=progress, stage="bucket join",
                    estimate=code if estimated else None)
    with timed(stats, "verify"):
        if verify == "exact":
            left, right, value = verify_candidates(sets.indptr, sets.tokens, cand.left, cand.right, t)
        else:
            est = estimate_pairs(sig, cand.left, cand.right, bits=info.bits)
            keep = est >= float(t.fraction)
            left, right, value = cand.left[keep], cand.right[keep], est[keep]
        if info.joined:
            # A kept candidate that shares a joined bucket too is found again by the join: keep it once.
            apart = ~share_joined_bucket(sig, cand, left, right)
            left, right, value = left[apart], right[apart], value[apart]
        sink.add(*_block(left, right, value, 0, estimated))
    if info.joined:
        members = cand.joined_rows
        info.joined_sets = len(members)
        candidates = 0
        with timed(stats, "bucket join"):
            if verify == "exact":
                found = _join_rows_blocks(sets, members, t, jobs, block_pairs, sink.tick)
                blocks = ((f.left, f.right, f.overlap, f.candidates) for f in found)
            else:
                blocks = ((a, b, None, c) for a, b, c in
                          _estimate_join_blocks(sig, members, t, info.bits, jobs, block_pairs, sink.tick))
            for left, right, value, found_candidates in blocks:
                candidates += found_candidates
                shared = share_joined_bucket(sig, cand, left, right)
                left, right = left[shared], right[shared]
                value = value[shared] if verify == "exact" else estimate_pairs(sig, left, right, bits=info.bits)
                sink.add(*_block(left, right, value, 0, estimated))
        stats.candidates += candidates
    pairs = sink.finish()
    if info.joined:
        stats.notes.append(joined_note(len(info.joined), info.max_expand, max(size for _, size in info.joined),
                                       info.joined_sets, info.joined_pairs))
    if info.max_bucket is None and info.max_expand is None and info.largest_bucket > LARGE_BUCKET:
        n = info.largest_bucket
        stats.notes.append(
            f"warning: an LSH bucket holds {count_of(n, 'distinct set')}, {count_of(n * (n - 1) // 2, 'candidate pair')} "
            "on its own: "
            "boilerplate or near-empty documents; bound it with --max-bucket or drop them with --min-shingles")
    if info.oversized:
        sizes = sorted((size for _, size in info.oversized), reverse=True)
        stats.notes.append(
            f"warning: {count_of(len(sizes), 'LSH bucket')} larger than --max-bucket {info.max_bucket:,} "
            f"{'was' if len(sizes) == 1 else 'were'} not expanded (largest {count_of(sizes[0], 'set')}; "
            f"{count_of(info.skipped_pairs, 'candidate pair')} left out): boilerplate or "
            "near-empty documents; drop them with --min-shingles or raise --max-bucket")
    return (pairs, cand, sig) if with_signatures else (pairs, cand)


def _block(left: np.ndarray, right: np.ndarray, value: np.ndarray, candidates: int, estimated: bool):
    """A block of verified pairs (``value`` the overlaps) or of pairs kept on their estimate (``value``)."""
    if estimated:
        return SetPairs(left, right, np.full(len(left), -1, np.int32), candidates), value
    return SetPairs(left, right, value, candidates), None
