"""Stage 7: exact and LSH side by side on the same shingle sets — recall and cost.

Both paths start from one :class:`~allpairs.order.OrderedSets` and end in the
same :class:`~allpairs.pairs.Pairs` type, so the comparison is set algebra:
the LSH path's verified pairs are a subset of the exact pairs, recall is the
share of exact pairs it found, and per similarity bin (t to the next tenth,
then tenths up to 1; "bands" are LSH's alone) the observed recall is set
beside the S-curve's prediction, the mean of ``P(s) = 1 - (1 - s^r)^b`` over
the true similarities of the exact pairs in that bin.

Peak memory per method is measured in this process: before each method the
kernel's high-water mark of resident memory is reset to what is resident
(Linux, ``/proc/self/clear_refs``), and the method's peak is how far the mark
rose above that while it ran; where that is not available it is not reported.
"""
from __future__ import annotations

import math
import os
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np

from ..corpus import Corpus
from ..exact.prefix import SetPairs, prefix_join_blocks
from ..lsh import share_joined_bucket
from ..output import spill as spill_module
from ..output.spill import parse_memory
from ..pairs.clusters import flatten, linked_groups, union_sets
from ..pipeline import (LSHInfo, Progress, Stats, timed, as_corpus, lsh_pairs, lsh_settings, peak_memory,
                   process_status, shingle_corpus)
from ..pipeline.sink import PairSink
from ..pipeline.stats import available_memory
from .._kernels.jit import resolve_jobs
from .._plural import banding, count
from ..lsh import MAX_EXPAND
from ..measures import Threshold
from ..order import OrderedSets
from ..pairs import Pairs
from ..verify import verify_candidates


@dataclass
class Bin:
    """Pairs with true similarity in [lo, hi) (hi = 1 includes identical sets)."""

    lo: float
    hi: float
    exact: int
    found: int
    predicted: float
    #: The clusters (connected components, in distinct sets) the bin's pairs of distinct sets form, and the
    #: largest: found as the pairs stream past, for the note on a bin far below the curve.
    clusters: int | None = None
    largest: int | None = None

    @property
    def recall(self) -> float:
        return self.found / self.exact if self.exact else float("nan")


@dataclass
class Comparison:
    """Exact join and LSH join of the same sets at the same threshold.

    Pairs (``all_pairs``, ``exact_pairs``, ``lsh_pairs``, the bins) are
    pairs of documents, identical documents included, among the ``joined``
    documents (those of the ``documents`` read that have a shingle).
    Candidates are pairs of distinct sets, which is what each path had to
    verify; their share is of ``all_set_pairs``, the pairs of distinct sets.
    ``memory`` holds the process peak after the shared stages (``shared``) and
    each method's own peak (``exact``, ``lsh``: the rise of the resident
    high-water mark while it ran; None where it cannot be measured).
    """

    threshold: Threshold
    shingle: str
    lsh: LSHInfo
    documents: int
    joined: int
    all_pairs: int
    all_set_pairs: int
    exact_pairs: int
    exact_candidates: int
    lsh_candidates: int
    lsh_pairs: int
    bins: list[Bin]
    seconds: dict[str, dict[str, float]]
    memory: dict[str, int | None]
    stats: Stats
    # For pictures: set-level LSH candidates with their true similarity, and
    # the documents they stand for (the first document of each set).
    candidate_left_doc: np.ndarray = field(repr=False, default=None)
    candidate_right_doc: np.ndarray = field(repr=False, default=None)
    candidate_similarity: np.ndarray = field(repr=False, default=None)
    candidate_verified: np.ndarray = field(repr=False, default=None)
    # The exact pairs of distinct sets, likewise, and whether LSH found each.
    true_left_doc: np.ndarray = field(repr=False, default=None)
    true_right_doc: np.ndarray = field(repr=False, default=None)
    true_similarity: np.ndarray = field(repr=False, default=None)
    true_found: np.ndarray = field(repr=False, default=None)
    # Per document: how many documents share its set (0 for a document that is not its set's first),
    # and whether it was joined (it has a shingle).
    copies: np.ndarray = field(repr=False, default=None)
    doc_joined: np.ndarray = field(repr=False, default=None)
    ids: list[str] = field(repr=False, default_factory=list)
    labels: list[str] | None = field(repr=False, default=None)
    kind: str = "texts"
    #: The pairs with J >= t that LSH missed, as pairs of documents (``--missed``), and the columns
    #: carried beside each id into that file (the line for ``--lines``).
    missed_pairs: Pairs | None = field(repr=False, default=None)
    columns: dict = field(repr=False, default_factory=dict)
    normalize: bool = True
    min_shingles: int = 1
    #: Per document, the PATH it was read from when several were given (else None): the pictures
    #: group documents by it as they group one root's documents by their top directory.
    roots: list[str] | None = field(repr=False, default=None)

    #: Pairs of distinct sets with J >= t, and those of them LSH did not find.
    exact_set_pairs: int = 0
    missed_set_pairs: int = 0

    @property
    def missed(self) -> int:
        """Pairs of distinct sets with J >= t that LSH did not find."""
        return self.missed_set_pairs

    @property
    def recall(self) -> float:
        return self.lsh_pairs / self.exact_pairs if self.exact_pairs else float("nan")

    @property
    def predicted_recall(self) -> float:
        """Expected recall from the S-curve over all exact pairs."""
        filled = [b for b in self.bins if b.exact]
        total = sum(b.exact for b in filled)
        return sum(b.predicted * b.exact for b in filled) / total if total else float("nan")

    def as_dict(self) -> dict:
        """Plain data for ``--json``: numbers as numbers (NaN and what was not measured as None).

        ``settings`` holds what was asked for, by the parameter names of
        :func:`compare`; ``exact`` and ``lsh`` hold each method's results
        under the same keys (``pairs`` of documents, ``set_pairs`` of
        distinct sets, ``missed_pairs``, ``missed_set_pairs``, ...); every
        key is listed in ``docs/compare.md``.
        """
        def num(x):
            return None if isinstance(x, float) and math.isnan(x) else x

        def seconds(key):
            return {stage: round(v, 4) for stage, v in self.seconds.get(key, {}).items()}

        lsh = self.lsh
        set_pairs = self.exact_set_pairs

        def method(key, candidates, pairs, found_sets, recall, predicted):
            return {"candidates": candidates, "candidate_share": num(_share(candidates, self.all_set_pairs)),
                    "pairs": pairs, "set_pairs": found_sets, "missed_pairs": self.exact_pairs - pairs,
                    "missed_set_pairs": set_pairs - found_sets, "recall": num(recall),
                    "predicted_recall": num(predicted), "seconds": seconds(key),
                    "peak_memory_bytes": self.memory.get(key)}

        return {
            "settings": {"threshold": float(self.threshold.fraction), "shingle": self.shingle,
                         "normalize": self.normalize, "min_shingles": self.min_shingles,
                         "num_perm": lsh.num_perm, "bands": lsh.bands, "rows": lsh.rows,
                         "bands_rows_chosen": lsh.auto, "recall": lsh.recall, "seed": lsh.seed, "bits": lsh.bits,
                         "max_bucket": lsh.max_bucket},
            "documents": {"read": self.documents, "skipped": self.documents - self.joined, "joined": self.joined},
            "all_pairs": self.all_pairs, "all_set_pairs": self.all_set_pairs,
            "exact": method("exact", self.exact_candidates, self.exact_pairs, set_pairs,
                            1.0 if self.exact_pairs else float("nan"), 1.0 if self.exact_pairs else float("nan")),
            "lsh": {**method("lsh", self.lsh_candidates, self.lsh_pairs, set_pairs - self.missed, self.recall,
                             self.predicted_recall),
                    "signature_bytes": lsh.signature_bytes, "largest_bucket": lsh.largest_bucket,
                    "joined_buckets": len(lsh.joined), "joined_sets": lsh.joined_sets,
                    "skipped_buckets": len(lsh.oversized), "skipped_candidates": lsh.skipped_pairs},
            "bins": [{"lo": b.lo, "hi": b.hi, "pairs": b.exact, "found": b.found, "recall": num(b.recall),
                      "predicted_recall": num(b.predicted)} for b in self.bins],
            "shared": {"seconds": seconds("shared"), "peak_memory_bytes": self.memory.get("shared")},
            "report": {"seconds": seconds("report")},
        }


def _share(part: int, whole: int) -> float:
    return part / whole if whole else float("nan")


def _bin_edges(t: Fraction) -> list[Fraction]:
    """t, then every tenth above it, then 1."""
    edges = [t]
    k = math.floor(t * 10) + 1
    while Fraction(k, 10) < 1:
        edges.append(Fraction(k, 10))
        k += 1
    edges.append(Fraction(1))
    return edges


def _set_pair_keys(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    a = np.minimum(left, right).astype(np.int64)
    b = np.maximum(left, right).astype(np.int64)
    return (a << 32) | b


def recall_by_bin(sets: OrderedSets, exact: Pairs, lsh: Pairs, t: Threshold, info: LSHInfo) -> list[Bin]:
    """Exact pairs and LSH-found pairs per similarity bin, with the S-curve's prediction.

    Pairs are weighted by the documents behind each distinct set; identical
    documents (J = 1) fall in the last bin and are always found.
    """
    lsh_keys = np.sort(_set_pair_keys(lsh.set_left, lsh.set_right))
    tally = _Tally(sets, t, info, lambda left, right: _member(_set_pair_keys(left, right), lsh_keys),
                   spill=None, keep_pairs=False)
    tally.add(SetPairs(exact.set_left, exact.set_right, exact.set_overlap, 0))
    return tally.bins()


def _member(keys: np.ndarray, sorted_keys: np.ndarray) -> np.ndarray:
    """Whether each key is one of ``sorted_keys`` (ascending)."""
    if not len(sorted_keys):
        return np.zeros(len(keys), bool)
    at = np.minimum(np.searchsorted(sorted_keys, keys), len(sorted_keys) - 1)
    return sorted_keys[at] == keys


@contextmanager
def own_peak_memory(out: dict, key: str):
    """Put in ``out[key]`` how far resident memory rose above its level at the start while the block ran.

    The kernel's high-water mark is reset to the current resident size first
    (``echo 5 > /proc/self/clear_refs``, Linux 4.0+); elsewhere, or if the
    reset is refused, ``out[key]`` is None rather than a process-wide figure
    that would charge one method with another's memory. The reset is
    process-wide: a peak read from getrusage afterwards no longer includes
    what came before it (``compare`` reads the shared stages' peak first).
    """
    start = process_status("VmRSS")
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        start = None
    try:
        yield
    finally:
        peak = process_status("VmHWM") if start is not None else None
        out[key] = None if peak is None else max(0, peak - start)


def compare(data: Corpus | Mapping | Sequence[str] | Sequence[Iterable], threshold: float | str | Threshold, *,
            shingle=None, normalize: bool = True, min_shingles: int = 1, jobs: int | None = None,
            num_perm: int = 128, bands: int | None = None, rows: int | None = None, recall: float = 0.99,
            seed: int = 1, bits: int | None = None, max_bucket: int | None = None,
            max_expand: int | None = MAX_EXPAND, progress: Progress | None = None,
            ids: Sequence | None = None, memory: int | str | None = None, spill: str | os.PathLike | bool = True,
            keep_pairs: bool = True) -> Comparison:
    """Run the exact join and the LSH join on the same shingle sets and compare them.

    Parameters are those of :func:`allpairs.join`, and:

    memory, spill :
        The LSH join only counts its pairs; the exact join hands its pairs over
        a block of about ``memory`` bytes at a time (default half the memory
        available), each compared with the LSH candidates as it passes and
        counted into the bins. The pairs LSH missed
        (:attr:`Comparison.missed_pairs`) are held while they fit ``memory``,
        past it spilled in sorted runs to a directory made in ``spill`` (True:
        ``TMPDIR``); ``missed_pairs.close()`` removes them (done too at exit).
    keep_pairs : bool
        Keep every exact pair of distinct sets (``true_left_doc``,
        ``true_similarity``, ... : what the pictures draw; about 25 bytes a
        pair); False keeps memory bounded by the documents and the LSH
        candidates.

    Returns a :class:`Comparison`.
    """
    t = Threshold.parse(threshold)
    jobs = resolve_jobs(jobs)
    info = lsh_settings(t, num_perm=num_perm, bands=bands, rows=rows, recall=recall, seed=seed, bits=bits,
                        max_bucket=max_bucket, max_expand=max_expand)
    budget = available_memory() // 2 if memory is None else parse_memory(memory)
    corpus = as_corpus(data, ids)
    stats = Stats()
    peaks: dict[str, int | None] = {}
    sets, label = shingle_corpus(corpus, shingle, normalize=normalize, min_shingles=min_shingles,
                                 stats=stats, progress=progress)
    peaks["shared"] = peak_memory()
    shared = dict(stats.seconds)

    # LSH first, counting its pairs: the exact pairs are then compared with its candidates as they pass.
    lsh_stats = Stats()
    with own_peak_memory(peaks, "lsh"):
        approx, cand, sig = lsh_pairs(sets, t, info, verify="exact", jobs=jobs, stats=lsh_stats, count=True,
                                      memory=budget, progress=progress, with_signatures=True)
    stats.notes.extend(lsh_stats.notes)

    cand_keys = _set_pair_keys(cand.left, cand.right)  # ascending: the candidates are sorted
    joined = cand.joined.shape[1] > 0

    def found_of(left: np.ndarray, right: np.ndarray) -> np.ndarray:
        # A true pair is found exactly when it is an expanded candidate or shares a bucket joined exactly.
        found = _member(_set_pair_keys(left, right), cand_keys)
        return found | share_joined_bucket(sig, cand, left, right) if joined else found

    tally = _Tally(sets, t, info, found_of, budget=budget, spill=spill, keep_pairs=keep_pairs)
    exact_stats = Stats()
    with own_peak_memory(peaks, "exact"), timed(exact_stats, "join"):
        exact_candidates = 0
        blocks = prefix_join_blocks(sets.indptr, sets.tokens, sets.num_tokens, t, jobs=jobs,
                                    block_pairs=max(1, budget // spill_module.SET_PAIR_BYTES),
                                    progress=(lambda d, n: progress("join", d, n)) if progress else None)
        for block in blocks:
            exact_candidates += block.candidates
            tally.add(block)
    # The exact method's time is the join's: the tally of each block is the report's.
    exact_stats.seconds["join"] -= tally.seconds

    # True similarity of every LSH candidate (threshold 0 accepts all: a full merge).
    t0 = time.perf_counter()
    cand_left, cand_right = cand.left, cand.right
    _, _, cand_overlap = verify_candidates(sets.indptr, sets.tokens, cand_left, cand_right, Threshold(0, 1))
    size = np.diff(sets.indptr)
    both = size[cand_left] + size[cand_right]
    cand_sim = cand_overlap / (both - cand_overlap)
    # J >= t on integers, as everywhere: overlap·(p+q) >= p·(|x|+|y|).
    cand_verified = cand_overlap.astype(np.int64) * (t.p + t.q) >= t.p * both
    first_doc = sets.group_docs[sets.group_indptr[:-1]]
    copies = np.zeros(sets.num_docs, np.int64)
    copies[first_doc] = np.diff(sets.group_indptr)
    missed_pairs = tally.missed.finish()
    extra = time.perf_counter() - t0 + tally.seconds
    kept = tally.kept() if keep_pairs else None

    n_joined = int((sets.doc_set >= 0).sum())
    comparison = Comparison(
        threshold=t, shingle=label, lsh=info, documents=stats.documents, joined=n_joined,
        all_pairs=n_joined * (n_joined - 1) // 2, all_set_pairs=sets.num_sets * (sets.num_sets - 1) // 2,
        exact_pairs=tally.pairs, exact_candidates=exact_candidates, lsh_candidates=lsh_stats.candidates,
        lsh_pairs=len(approx), bins=tally.bins(),
        seconds={"shared": shared, "exact": dict(exact_stats.seconds), "lsh": dict(lsh_stats.seconds)},
        memory=peaks, stats=stats,
        candidate_left_doc=first_doc[cand_left], candidate_right_doc=first_doc[cand_right],
        candidate_similarity=cand_sim, candidate_verified=cand_verified,
        copies=copies, doc_joined=sets.doc_set >= 0, ids=corpus.ids, labels=corpus.shown, kind=corpus.kind,
        missed_pairs=missed_pairs, columns=corpus.columns, normalize=normalize, min_shingles=min_shingles,
        roots=corpus.sources if len(corpus.paths) > 1 else None,
        exact_set_pairs=tally.set_pairs, missed_set_pairs=tally.missed_set_pairs,
    )
    if kept is not None:
        (comparison.true_left_doc, comparison.true_right_doc, comparison.true_similarity,
         comparison.true_found) = kept
    comparison.seconds["report"] = {"candidate similarity": extra}
    return comparison


class _Tally:
    """The exact pairs of distinct sets, a block at a time: whether LSH found each, the bins, the missed pairs.

    ``found_of(left, right)`` says which pairs LSH found. The bins' counts are
    sums of integers; their predictions sums of floats over blocks.
    """

    def __init__(self, sets: OrderedSets, t: Threshold, info: LSHInfo,
                 found_of: Callable[[np.ndarray, np.ndarray], np.ndarray], *, budget: int = 1 << 30, spill=True,
                 keep_pairs: bool = False):
        self.sets, self.info, self.found_of = sets, info, found_of
        self.group = np.diff(sets.group_indptr).astype(np.int64)
        self.size = np.diff(sets.indptr)
        self.first_doc = sets.group_docs[sets.group_indptr[:-1]]
        self.edges = _bin_edges(t.fraction)
        n_bins = len(self.edges) - 1
        self.exact, self.found = [0] * n_bins, [0] * n_bins
        self.predicted = [0.0] * n_bins
        self.parents = [np.arange(sets.num_sets, dtype=np.int32) for _ in range(n_bins)]
        self.touched = [np.zeros(sets.num_sets, np.bool_) for _ in range(n_bins)]
        self.pairs = int((self.group * (self.group - 1) // 2).sum())  # identical documents
        self.set_pairs = self.missed_set_pairs = 0
        # Identical documents are never missed: they share every bucket.
        self.missed = PairSink(sets, budget=budget, block_pairs=max(1, budget // spill_module.SET_PAIR_BYTES),
                               group_ok=np.zeros(sets.num_sets, np.bool_), spill=spill)
        self.kept_blocks: list | None = [] if keep_pairs else None
        self.seconds = 0.0

    def add(self, block) -> None:
        t0 = time.perf_counter()
        left, right, ov = block.left, block.right, block.overlap.astype(np.int64)
        found = self.found_of(left, right)
        union = self.size[left] + self.size[right] - ov
        weight = self.group[left] * self.group[right]
        p = np.asarray(self.info.predicted(ov / union), dtype=np.float64)
        for k in range(len(self.edges) - 1):
            lo, hi = self.edges[k], self.edges[k + 1]
            # Exact integer tests of lo <= ov/union < hi (<= 1 in the last band).
            inside = ov * lo.denominator >= lo.numerator * union
            if k < len(self.edges) - 2:
                inside &= ov * hi.denominator < hi.numerator * union
            w = weight[inside]
            self.exact[k] += int(w.sum())
            self.found[k] += int(w[found[inside]].sum())
            self.predicted[k] += float((p[inside] * w).sum())
            union_sets(self.parents[k], left[inside], right[inside])
            self.touched[k][left[inside]] = self.touched[k][right[inside]] = True
        self.pairs += int(weight.sum())
        self.set_pairs += len(left)
        self.missed_set_pairs += int((~found).sum())
        self.missed.add(SetPairs(left[~found], right[~found], block.overlap[~found], 0))
        if self.kept_blocks is not None:
            self.kept_blocks.append((self.first_doc[left], self.first_doc[right], ov / np.maximum(union, 1), found))
        self.seconds += time.perf_counter() - t0

    def bins(self) -> list[Bin]:
        """The bins; identical documents (J = 1) fall in the last and are always found."""
        identical = int((self.group * (self.group - 1) // 2).sum())
        out = []
        for k in range(len(self.edges) - 1):
            last = identical if k == len(self.edges) - 2 else 0
            n, f, pred = self.exact[k] + last, self.found[k] + last, self.predicted[k] + last
            roots = flatten(self.parents[k])[self.touched[k]]
            sizes = np.bincount(roots) if len(roots) else np.zeros(0, np.int64)
            sizes = sizes[sizes > 0]
            out.append(Bin(float(self.edges[k]), float(self.edges[k + 1]), n, f, pred / n if n else float("nan"),
                           clusters=len(sizes), largest=int(sizes.max(initial=0))))
        return out

    def kept(self) -> tuple[np.ndarray, ...]:
        """The exact pairs of distinct sets as (left doc, right doc, similarity, found), concatenated."""
        blocks = self.kept_blocks or [(np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0),
                                       np.zeros(0, bool))]
        return tuple(np.concatenate(cols) for cols in zip(*blocks))


#: The banding "predicts every bin" when the S-curve is at least this high over each bin's pairs.
FLAT = 0.99
#: A bin "lies far below the curve" when it is this many binomial standard errors below its prediction.
FAR_BELOW = 3.0


def curve_banding(t: float, num_perm: int) -> tuple[int, int]:
    """``(b, r)`` with ``b * r <= num_perm`` whose knee ``(1/b)^(1/r)`` is nearest ``t`` (all K rows used,
    ``b = K // r``): an S-curve that rises through the bins above t instead of sitting at 1."""
    options = [(abs((1 / (num_perm // r)) ** (1 / r) - t), num_perm // r, r) for r in range(1, num_perm + 1)]
    _, b, r = min(options)
    return b, r


def _span(lo: float, hi: float) -> str:
    return f"[{lo:.2f}, {hi:.2f}{']' if hi == 1 else ')'}"


def banding_notes(c: Comparison) -> list[str]:
    """What the banding's S-curve says about the bins, in lines for the summary and the picture.

    When the curve is at :data:`FLAT` or above over every bin (the default
    banding, chosen for recall at t, usually is), each bin reads about 1
    whatever LSH did: say so, and name a banding whose knee is at t
    (:func:`curve_banding`). For each bin :data:`FAR_BELOW` standard errors
    or more below the curve: the clusters its pairs fall in. Pairs within
    one cluster of near-copies are not independent (their signatures agree
    together or not at all), so a bin of few clusters strays further from
    the curve than the binomial error bar, which counts pairs as independent.
    """
    info, t = c.lsh, float(c.threshold.fraction)
    filled = [b for b in c.bins if b.exact]
    notes = []
    if filled and min(b.predicted for b in filled) >= FLAT:
        b, r = curve_banding(t, info.num_perm)
        knee = (1 / b) ** (1 / r)
        notes.append(f"{banding(info.bands, info.rows)} predict recall ≥ {min(x.predicted for x in filled):.3f} "
                     f"in every bin (P(t) = {info.predicted(t):.3f}), so each bin reads about 1 whatever the data; "
                     f"-b {b} -r {r} (knee {knee:.2f}, near t) would show the S-curve rise through the bins")
    for bin_ in filled:
        p = bin_.predicted
        se = math.sqrt(p * (1 - p) / bin_.exact)
        if se == 0 or p - bin_.recall < FAR_BELOW * se:
            continue
        if c.true_similarity is not None:
            sim = np.asarray(c.true_similarity, dtype=np.float64)
            inside = (sim >= bin_.lo) & ((sim <= bin_.hi) if bin_.hi == 1 else (sim < bin_.hi))
            groups = linked_groups(np.asarray(c.true_left_doc)[inside], np.asarray(c.true_right_doc)[inside])
            clusters, largest = len(groups), max((len(g) for g in groups.values()), default=0)
        else:  # counted as the pairs streamed past
            clusters, largest = bin_.clusters or 0, bin_.largest or 0
        notes.append(f"{_span(bin_.lo, bin_.hi)}: recall {bin_.recall:.2f} against {p:.2f} predicted, "
                     f"{(p - bin_.recall) / se:.1f} standard errors below: its pairs lie in "
                     f"{count(clusters, 'cluster')} (the largest of {count(largest, 'distinct set')}), and "
                     "pairs within one cluster are not independent (near-copies collide together or not at all)")
    return notes


def _mib(n: int | None) -> str:
    return "n/a" if n is None else f"{n / 2**20:,.0f} MiB"


def _ratio(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{x:.4f}"


def _pct(part: int, whole: int) -> str:
    return "n/a" if not whole else f"{part / whole:.4%}"


def render_table(c: Comparison) -> str:
    """The comparison as an aligned plain-text table (what ``allpairs compare`` prints)."""
    lsh = c.lsh
    label = f"LSH {banding(lsh.bands, lsh.rows)} (K = {lsh.num_perm}{f', {lsh.bits} bits' if lsh.bits else ''})"
    rows = [
        ("", "exact", label),
        ("candidates (pairs of distinct sets)", f"{c.exact_candidates:,} ({_pct(c.exact_candidates, c.all_set_pairs)})",
         f"{c.lsh_candidates:,} ({_pct(c.lsh_candidates, c.all_set_pairs)})"),
        (f"pairs of documents with J >= {c.threshold}", f"{c.exact_pairs:,}",
         f"{c.lsh_pairs:,} ({c.exact_pairs - c.lsh_pairs:,} missed)"),
        ("recall", "1 (exact)", f"{_ratio(c.recall)} (S-curve predicts {_ratio(c.predicted_recall)})"),
        ("time (s)", ", ".join(f"{k} {v:.3f}" for k, v in c.seconds["exact"].items()),
         ", ".join(f"{k} {v:.3f}" for k, v in c.seconds["lsh"].items())),
        ("peak memory of the method", _mib(c.memory["exact"]), _mib(c.memory["lsh"])
         + f" (signatures {_mib(lsh.signature_bytes)})"),
    ]
    w0 = max(len(r[0]) for r in rows)
    w1 = max(len(r[1]) for r in rows)
    skipped = c.documents - c.joined
    out = [f"allpairs compare at t = {c.threshold}: {c.shingle} shingles; {count(c.documents, 'document')}, "
           f"{skipped:,} skipped, {c.joined:,} joined: {count(c.all_pairs, 'pair')} of documents, "
           f"{count(c.all_set_pairs, 'pair')} of distinct sets",
           "shared stages " + ", ".join(f"{k} {v:.3f}s" for k, v in c.seconds["shared"].items())
           + f" (process peak memory {_mib(c.memory['shared'])})", ""]
    out += [f"{a:<{w0}}  {b:<{w1}}  {d}".rstrip() for a, b, d in rows]
    out += ["", "recall by true similarity (pairs of documents) in bins, observed vs predicted by "
                "P(s) = 1 - (1 - s^r)^b",
            f"{'bin':<12}  {'pairs':>10}  {'found':>10}  {'recall':>8}  {'predicted':>9}"]
    for b in c.bins:
        span = f"[{b.lo:.2f}, {b.hi:.2f}{']' if b.hi == 1 else ')'}"
        out.append(f"{span:<12}  {b.exact:>10,}  {b.found:>10,}  {_ratio(b.recall):>8}  {_ratio(b.predicted):>9}")
    notes = banding_notes(c)
    if notes:
        out += [""] + notes
    if lsh.oversized:
        out += ["", f"{count(len(lsh.oversized), 'bucket')} larger than --max-bucket {lsh.max_bucket:,} "
                    f"{'was' if len(lsh.oversized) == 1 else 'were'} not expanded "
                    f"({count(lsh.skipped_pairs, 'candidate pair')} left out; largest {lsh.largest_bucket:,} sets)"]
    return "\n".join(out) + "\n"
