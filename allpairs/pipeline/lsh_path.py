"""The LSH path (stages 4b and 5): its settings checked, signatures, bands, exact verification or the
estimate, and large buckets joined exactly by the prefix filter (the one place the two halves meet)."""
from __future__ import annotations

from __future__ import annotations


import numpy as np

from ..errors import UsageError
from ..exact import prefix_join, prefix_join_rows
from ..exact.prefix import SetPairs
from ..lsh import candidates as lsh_candidates
from ..lsh import (MAX_EXPAND, agreement_needed, check_banding, check_num_perm, choose_params, estimate_pairs,
                   share_joined_bucket, signature_sets, signatures)
from ..lsh.keysets import KeyedSets
from .._plural import count
from ..measures import Threshold
from ..order import OrderedSets, order_sets
from ..pairs import Pairs
from ..verify import verify_candidates
from .stats import Stats, timed
from .result import LSHInfo



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


def _estimate_join(sig: np.ndarray, rows: np.ndarray, t: Threshold, bits: int | None, jobs: int):
    """Pairs of ``rows`` (ascending) whose MinHash estimate is >= t, found by an exact join of their signatures.

    A pair's estimate is >= t exactly when its rows agree in at least ``c``
    positions (:func:`allpairs.lsh.agreement_needed`); as sets of K (position,
    value) keys two rows overlap in their agreements, and overlap >= c is
    Jaccard >= c / (2K - c). Identical signatures form one distinct set, whose
    rows all pair up. Returns (left, right) int32 with left < right, and the
    join's SetPairs (for its candidate count).
    """
    K = sig.shape[1]
    need = agreement_needed(K, float(t.fraction), bits=bits)
    indptr, keys = signature_sets(sig, rows)
    sig_sets = order_sets(indptr, keys)
    found = prefix_join(sig_sets.indptr, sig_sets.tokens, sig_sets.num_tokens, Threshold(need, 2 * K - need),
                        jobs=jobs)
    chunks = list(Pairs(sig_sets, found.left, found.right, found.overlap).chunks())
    if not chunks:
        return np.empty(0, np.int32), np.empty(0, np.int32), found
    return (rows[np.concatenate([c.left for c in chunks])], rows[np.concatenate([c.right for c in chunks])], found)


def _join_rows(sets: OrderedSets, rows: np.ndarray, t: Threshold, jobs: int):
    """The exact join among the distinct sets ``rows`` (ascending), in indices of all sets.

    Sets of raw keys (:class:`KeyedSets`, in no rank order) are ranked among
    themselves first, rare keys first, so that the prefix filter stays selective.
    """
    if not isinstance(sets, KeyedSets):
        return prefix_join_rows(sets.indptr, sets.tokens, sets.num_tokens, rows, t, jobs=jobs)
    sub = order_sets(*sets.rows_keys(rows))
    found = prefix_join(sub.indptr, sub.tokens, sub.num_tokens, t, jobs=jobs)
    # The rows are distinct sets: each of sub's sets is one of them.
    back = rows[sub.group_docs[sub.group_indptr[:-1]]].astype(np.int32)
    a, b = back[found.left], back[found.right]
    return SetPairs(np.minimum(a, b), np.maximum(a, b), found.overlap, found.candidates)


def joined_note(buckets: int, max_expand: int, largest: int, sets: int, pairs: int) -> str:
    """The summary line of the LSH buckets joined exactly instead of expanded (for every engine)."""
    what = "LSH bucket of more than" if buckets == 1 else "LSH buckets of more than"
    were = "was" if buckets == 1 else "were"
    return (f"{buckets:,} {what} {count(max_expand, 'distinct set')} (largest {largest:,}) {were} joined "
            f"exactly instead of expanded: {count(sets, 'set')}, {count(pairs, 'candidate pair')} not expanded; "
            "same result")


def lsh_pairs(sets: OrderedSets, t: Threshold, info: LSHInfo, *, verify: str, jobs: int, stats: Stats):
    """Stages 4b and 5 of the LSH path: signatures, bands, then exact verification (or the estimate).

    Buckets too large to expand (more than ``info.max_expand`` sets) are not
    verified pair by pair: their sets are joined exactly by the prefix filter
    (stage 4a, restricted to them), and the pairs found that share such a
    bucket are kept; the result is the same as expanding them, at the cost of
    one exact join of those sets at most. The lsh and exact packages never
    import each other; this function wires them.

    Returns the pairs and the LSH candidates (pairs of distinct sets) they came from.
    """
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
    with timed(stats, "verify"):
        if verify == "exact":
            kept = verify_candidates(sets.indptr, sets.tokens, cand.left, cand.right, t)
        else:
            est = estimate_pairs(sig, cand.left, cand.right, bits=info.bits)
            keep = est >= float(t.fraction)
            kept = cand.left[keep], cand.right[keep], est[keep]
    if info.joined:
        members = cand.joined_rows
        info.joined_sets = len(members)
        with timed(stats, "bucket join"):
            if verify == "exact":
                found = _join_rows(sets, members, t, jobs)
                left, right, value = found.left, found.right, found.overlap
            else:
                left, right, found = _estimate_join(sig, members, t, info.bits, jobs)
            shared = share_joined_bucket(sig, cand, left, right)
            left, right = left[shared], right[shared]
            value = value[shared] if verify == "exact" else estimate_pairs(sig, left, right, bits=info.bits)
            # A kept candidate that shares a joined bucket too was found again by the join: keep it
            # once, without sorting the union (the pairs are expanded in order whatever theirs).
            again = share_joined_bucket(sig, cand, kept[0], kept[1])
            kept = tuple(np.concatenate([a[~again], b]) for a, b in zip(kept, (left, right, value)))
        stats.candidates += found.candidates
    left, right, value = kept
    if verify == "exact":
        pairs = Pairs(sets, left, right, value)
    else:
        pairs = Pairs(sets, left, right, np.full(len(left), -1, np.int32), estimate=value)
    if info.joined:
        stats.notes.append(joined_note(len(info.joined), info.max_expand, max(size for _, size in info.joined),
                                       info.joined_sets, info.joined_pairs))
    if info.max_bucket is None and info.max_expand is None and info.largest_bucket > LARGE_BUCKET:
        n = info.largest_bucket
        stats.notes.append(
            f"warning: an LSH bucket holds {count(n, 'distinct set')}, {count(n * (n - 1) // 2, 'candidate pair')} "
            "on its own: "
            "boilerplate or near-empty documents; bound it with --max-bucket or drop them with --min-shingles")
    if info.oversized:
        sizes = sorted((size for _, size in info.oversized), reverse=True)
        stats.notes.append(
            f"warning: {count(len(sizes), 'LSH bucket')} larger than --max-bucket {info.max_bucket:,} "
            f"{'was' if len(sizes) == 1 else 'were'} not expanded (largest {count(sizes[0], 'set')}; "
            f"{count(info.skipped_pairs, 'candidate pair')} left out): boilerplate or "
            "near-empty documents; drop them with --min-shingles or raise --max-bucket")
    return pairs, cand
