"""Streaming near-duplicate removal: keep a document only if no kept document reaches the threshold with it.

Documents are read in input order; each is a query against the index of the
documents kept so far and, if nothing there reaches the threshold, is added to
it (the classic online dedup; exact, since every query is). The whole loop is
one compiled call: the global token order is taken from the whole input first
(so that prefixes are made of rare tokens from the start; the order changes the
speed, never the answer), every distinct set's prefix is indexed up front in
posting lists sorted by size, and a set answers probes only from the moment a
document holding it is kept. That is the growing index of
:meth:`SearchIndex.add` without a Python call per document (which costs about
0.3 ms a document; the compiled loop does tens of thousands a second).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

import numpy as np

from .._plural import count
from ..corpus import Corpus
from ..pipeline import Stats, timed, as_corpus, peak_memory, shingle_corpus
from ..pairs.result import similarity_text
from ..pairs.summary import SHOWN, Summarised
from ._kernel import build_postings, dedup as dedup_kernel
from .search import Rule, scratch


@dataclass(repr=False)
class DedupResult(Summarised):
    """Which documents were kept, and for each removed one the kept document it duplicates.

    Attributes
    ----------
    kept : int32 array
        Positions of the kept documents, in input order.
    removed, duplicate_of, overlap, removed_size, kept_size : int32 arrays
        Each removed document (input order), the kept document it reaches the
        threshold with (the most similar, the earliest among equals), their
        exact overlap and both set sizes.
    ids : list of str
    rule : Rule
    stats : Stats
    columns : dict of str to sequence of str
        Columns carried beside each id into the output (as the corpus gave them).
    """

    kept: np.ndarray
    removed: np.ndarray
    duplicate_of: np.ndarray
    overlap: np.ndarray
    removed_size: np.ndarray
    kept_size: np.ndarray
    ids: list[str]
    rule: Rule
    shingle: str
    stats: Stats = field(default_factory=Stats)
    columns: dict = field(default_factory=dict)

    def _summary(self) -> tuple[str, tuple[str, ...], list[tuple], int]:
        """Counts, settings and the first removed documents, for repr and notebooks."""
        title = (f"DedupResult: kept {len(self.kept):,} and removed {len(self.removed):,} of "
                 f"{count(len(self.ids), 'document')} at {self.rule} ({self.shingle} shingles)")
        rows = [(self.ids[r], self.ids[d], similarity_text(self.rule.row, o, x, y)) for r, d, o, x, y in
                zip(*(a[:SHOWN].tolist() for a in (self.removed, self.duplicate_of, self.overlap,
                                                   self.removed_size, self.kept_size)))]
        return title, ("removed", "duplicate of", "similarity"), rows, len(self.removed)


def dedup(data: Corpus | Sequence[str] | Sequence[Iterable], threshold, *, measure: str = "jaccard",
          shingle=None, normalize: bool = True, min_shingles: int = 1,
          progress: Callable[[str, int, int], None] | None = None) -> DedupResult:
    """Online exact near-duplicate removal.

    Parameters
    ----------
    data : Corpus, list of str, or list of token collections
        As for :func:`allpairs.join`; documents are taken in this order.
    threshold : float, str or Fraction in (0, 1]
        A document is removed when a kept one has similarity >= threshold with it.
    measure, shingle, normalize, min_shingles
        As for :meth:`SearchIndex.build`. Documents with no shingle (or fewer
        than ``min_shingles``) are skipped: neither kept nor removed, counted
        in the statistics.
    """
    rule = Rule.parse(measure, threshold)
    corpus = as_corpus(data)
    stats = Stats()
    sets, label = shingle_corpus(corpus, shingle, normalize=normalize, min_shingles=min_shingles,
                                 stats=stats, progress=progress)
    with timed(stats, "dedup"):
        sizes = np.diff(sets.indptr)
        postings = build_postings(sets.indptr, sets.tokens, rule.index_prefix(sizes), sets.num_tokens,
                                  sets.num_tokens)
        kept, removed, duplicate_of, overlap = dedup_kernel(
            sets.indptr, sets.tokens, sets.doc_set, *rule.probe(sizes), rule.code, rule.p, rule.q, *postings,
            sets.num_tokens, scratch(max(sets.num_sets, 1)))
    kept = np.flatnonzero(kept).astype(np.int32)
    sizes = np.diff(sets.indptr)
    stats.pairs = len(removed)
    stats.distinct_sets = sets.num_sets
    stats.peak_memory = peak_memory()
    return DedupResult(kept=kept, removed=removed, duplicate_of=duplicate_of, overlap=overlap,
                       removed_size=sizes[sets.doc_set[removed]].astype(np.int32),
                       kept_size=sizes[sets.doc_set[duplicate_of]].astype(np.int32),
                       ids=list(corpus.ids), rule=rule, shingle=label, stats=stats, columns=corpus.columns)
