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
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Iterable, Mapping, Sequence

import numpy as np

from ..corpus import Corpus
from ..exact import prefix_join
from ..pipeline import (LSHInfo, Progress, Stats, timed, as_corpus, lsh_pairs, lsh_settings, peak_memory,
                   process_status, shingle_corpus)
from .._kernels.jit import resolve_jobs
from .._plural import count
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

    @property
    def missed(self) -> int:
        """Pairs of distinct sets with J >= t that LSH did not find."""
        return int((~self.true_found).sum()) if self.true_found is not None else 0

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
        set_pairs = len(self.true_found) if self.true_found is not None else 0

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


def found_by_lsh(exact: Pairs, lsh: Pairs) -> np.ndarray:
    """For each exact pair of distinct sets, whether the LSH path found it too."""
    return np.isin(_set_pair_keys(exact.set_left, exact.set_right), _set_pair_keys(lsh.set_left, lsh.set_right))


def recall_by_bin(sets: OrderedSets, exact: Pairs, lsh: Pairs, t: Threshold, info: LSHInfo) -> list[Bin]:
    """Exact pairs and LSH-found pairs per similarity bin, with the S-curve's prediction.

    Pairs are weighted by the documents behind each distinct set; identical
    documents (J = 1) fall in the last bin and are always found.
    """
    group = np.diff(sets.group_indptr).astype(np.int64)
    size = np.diff(sets.indptr)
    ov = exact.set_overlap.astype(np.int64)
    union = size[exact.set_left] + size[exact.set_right] - ov
    weight = group[exact.set_left] * group[exact.set_right]
    found = found_by_lsh(exact, lsh)
    sim = ov / union
    p = np.asarray(info.predicted(sim), dtype=np.float64)
    identical = int((group * (group - 1) // 2).sum())
    edges = _bin_edges(t.fraction)
    bins = []
    for k in range(len(edges) - 1):
        lo, hi = edges[k], edges[k + 1]
        last = k == len(edges) - 2
        # Exact integer tests of lo <= ov/union < hi (<= 1 in the last band).
        inside = ov * lo.denominator >= lo.numerator * union
        if not last:
            inside &= ov * hi.denominator < hi.numerator * union
        w = weight[inside]
        n = int(w.sum()) + (identical if last else 0)
        f = int(w[found[inside]].sum()) + (identical if last else 0)
        pred_sum = float((p[inside] * w).sum()) + (identical if last else 0)
        bins.append(Bin(float(lo), float(hi), n, f, pred_sum / n if n else float("nan")))
    return bins


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
            ids: Sequence | None = None) -> Comparison:
    """Run the exact join and the LSH join on the same shingle sets and compare them.

    Parameters are those of :func:`allpairs.join`. Returns a :class:`Comparison`.
    """
    t = Threshold.parse(threshold)
    jobs = resolve_jobs(jobs)
    info = lsh_settings(t, num_perm=num_perm, bands=bands, rows=rows, recall=recall, seed=seed, bits=bits,
                        max_bucket=max_bucket, max_expand=max_expand)
    corpus = as_corpus(data, ids)
    stats = Stats()
    memory: dict[str, int | None] = {}
    sets, label = shingle_corpus(corpus, shingle, normalize=normalize, min_shingles=min_shingles,
                                 stats=stats, progress=progress)
    memory["shared"] = peak_memory()
    shared = dict(stats.seconds)

    exact_stats = Stats()
    with own_peak_memory(memory, "exact"), timed(exact_stats, "join"):
        found = prefix_join(sets.indptr, sets.tokens, sets.num_tokens, t, jobs=jobs,
                            progress=(lambda d, n: progress("join", d, n)) if progress else None)
        exact = Pairs(sets, found.left, found.right, found.overlap)

    lsh_stats = Stats()
    with own_peak_memory(memory, "lsh"):
        approx, cand = lsh_pairs(sets, t, info, verify="exact", jobs=jobs, stats=lsh_stats)
    stats.notes.extend(lsh_stats.notes)

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
    true_union = size[exact.set_left] + size[exact.set_right] - exact.set_overlap
    true_found = found_by_lsh(exact, approx)
    extra = time.perf_counter() - t0

    joined = int((sets.doc_set >= 0).sum())
    comparison = Comparison(
        threshold=t, shingle=label, lsh=info, documents=stats.documents, joined=joined,
        all_pairs=joined * (joined - 1) // 2, all_set_pairs=sets.num_sets * (sets.num_sets - 1) // 2,
        exact_pairs=len(exact), exact_candidates=found.candidates, lsh_candidates=lsh_stats.candidates,
        lsh_pairs=len(approx), bins=recall_by_bin(sets, exact, approx, t, info),
        seconds={"shared": shared, "exact": dict(exact_stats.seconds), "lsh": dict(lsh_stats.seconds)},
        memory=memory, stats=stats,
        candidate_left_doc=first_doc[cand_left], candidate_right_doc=first_doc[cand_right],
        candidate_similarity=cand_sim, candidate_verified=cand_verified,
        true_left_doc=first_doc[exact.set_left], true_right_doc=first_doc[exact.set_right],
        true_similarity=exact.set_overlap / np.maximum(true_union, 1), true_found=true_found,
        copies=copies, doc_joined=sets.doc_set >= 0, ids=corpus.ids, labels=corpus.shown, kind=corpus.kind,
        # Identical documents share every bucket: never missed (group_ok False leaves their pairs out).
        missed_pairs=Pairs(sets, exact.set_left[~true_found], exact.set_right[~true_found],
                           exact.set_overlap[~true_found], group_ok=np.zeros(sets.num_sets, np.bool_)),
        columns=corpus.columns, normalize=normalize, min_shingles=min_shingles,
        roots=corpus.sources if len(corpus.paths) > 1 else None,
    )
    comparison.seconds["report"] = {"candidate similarity": extra}
    return comparison


def _mib(n: int | None) -> str:
    return "n/a" if n is None else f"{n / 2**20:,.0f} MiB"


def _ratio(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{x:.4f}"


def _pct(part: int, whole: int) -> str:
    return "n/a" if not whole else f"{part / whole:.4%}"


def render_table(c: Comparison) -> str:
    """The comparison as an aligned plain-text table (what ``allpairs compare`` prints)."""
    lsh = c.lsh
    label = f"LSH {lsh.bands} bands × {lsh.rows} rows (K = {lsh.num_perm}{f', {lsh.bits} bits' if lsh.bits else ''})"
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
    if lsh.oversized:
        out += ["", f"{count(len(lsh.oversized), 'bucket')} larger than --max-bucket {lsh.max_bucket:,} "
                    f"{'was' if len(lsh.oversized) == 1 else 'were'} not expanded "
                    f"({count(lsh.skipped_pairs, 'candidate pair')} left out; largest {lsh.largest_bucket:,} sets)"]
    return "\n".join(out) + "\n"
