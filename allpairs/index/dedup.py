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

import sys
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

import numpy as np

from .._plural import count
from ..corpus import Corpus
from ..errors import UsageError
from ..pipeline import Stats, timed, as_corpus, peak_memory, shingle_corpus
from ..pairs.result import similarity_text
from ..pairs.summary import SHOWN, Summarised
from ..verify import bitmaps_prune
from ..verify._kernel import bitmaps
from ._kernel import build_postings, dedup as dedup_kernel
from .postings import alpha_cache, scratch
from .rule import Rule


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
    #: Records read with every column carried: the columns' names in the input's order, and the id column's
    #: (see :class:`~allpairs.corpus.Corpus`), so that the kept rows can be written back as they came.
    header: list | None = None
    id_column: str | None = None
    #: The input's rows as they came (:attr:`~allpairs.corpus.Corpus.rows`), to write the kept ones back typed.
    rows: object = None

    def _summary(self) -> tuple[str, tuple[str, ...], list[tuple], int]:
        """Counts, settings and the first removed documents, for repr and notebooks."""
        title = (f"DedupResult: kept {len(self.kept):,} and removed {len(self.removed):,} of "
                 f"{count(len(self.ids), 'document')} at {self.rule} ({self.shingle} shingles)")
        rows = [(self.ids[r], self.ids[d], similarity_text(self.rule.row, o, x, y)) for r, d, o, x, y in
                zip(*(a[:SHOWN].tolist() for a in (self.removed, self.duplicate_of, self.overlap,
                                                   self.removed_size, self.kept_size)))]
        return title, ("removed", "duplicate of", "similarity"), rows, len(self.removed)


#: Documents per compiled call of the dedup loop: progress is reported between calls.
BLOCK = 1 << 13


def empty_kept_note(n: int, label: str) -> str:
    """The line that says ``n`` documents with no shingle (``label``: the shingle's name, or "tokens") were
    kept; the local and the Spark dedup say it alike."""
    what = "token" if label == "tokens" else f"{label} shingle"
    return (f"{count(n, 'document')} with no {what} kept as {'it is' if n == 1 else 'they are'}: nothing reaches "
            "a threshold with an empty set")

def _dedup_in_blocks(sets, rule: Rule, sizes: np.ndarray, postings, progress) -> tuple[np.ndarray, ...]:
    """The compiled loop over every document, BLOCK documents a call, its state carried between calls;
    ``progress("dedup", done, total)`` after each. Returns kept (bool per document) and the removed
    documents' (document, kept document, overlap)."""
    n_docs, m = len(sets.doc_set), sets.num_sets
    kept_doc = np.full(m, -1, np.int64)
    active = np.zeros(m, np.bool_)
    kept = np.zeros(n_docs, np.bool_)
    out = [np.empty(n_docs, np.int32) for _ in range(3)]
    _, lo, hi = rule.probe(sizes)
    # The bitmap filter where it pays (the join's rule), and α per partner size, as the join's probe has them.
    bits = bitmaps(sets.indptr, sets.tokens) if bitmaps_prune(sizes) else np.zeros(0, np.uint64)
    work = scratch(max(m, 1))
    cache = alpha_cache(int(sizes.max()) if m else 0)
    n_out = 0
    for d0 in range(0, n_docs, BLOCK):
        d1 = min(d0 + BLOCK, n_docs)
        n_out = dedup_kernel(sets.indptr, sets.tokens, bits, sets.doc_set, lo, hi, rule.code, rule.p, rule.q,
                             *postings, sets.num_tokens, work, cache, d0, d1, kept_doc, active, kept, *out, n_out)
        if progress:
            progress("dedup", d1, n_docs)
    return (kept, *(a[:n_out] for a in out))


def _is_dataframe(data) -> bool:
    """Whether ``data`` is a pandas DataFrame (pandas is not imported for the question)."""
    pandas = sys.modules.get("pandas")
    return pandas is not None and isinstance(data, pandas.DataFrame)


def _texts_of(frame, text) -> object:
    """The text column(s) ``text`` of a DataFrame as one Series of texts (several joined by a space),
    indexed as the frame; by default its ``text`` column, or its only column. A column of token
    collections (lists) is given as it is: the token sets, as ``dedup(df[column])`` takes them."""
    names = [text] if isinstance(text, str) else list(text) if text is not None else \
        ["text"] if "text" in frame.columns or len(frame.columns) != 1 else [frame.columns[0]]
    missing = [n for n in names if n not in frame.columns]
    if missing:
        have = ", ".join(map(str, frame.columns))
        hint = "name the text column with text=" if text is None else "text= names a column"
        raise UsageError(f"the DataFrame has no column {missing[0]!r} (it has {have}); {hint}")
    if len(frame.index) and not frame.index.is_unique:
        raise UsageError("the DataFrame's index holds an id twice; ids must be different (reset_index() numbers "
                         "the rows)")
    tokens = [n for n in names if _holds_tokens(frame[n])]
    if tokens:  # str() of a list would be shingled as text: ['b', 'a'] no copy of ['a', 'b']
        if len(names) > 1:
            raise UsageError(f"the column {tokens[0]!r} holds token collections, which are not joined with other "
                             "columns; give it alone (text=) to take them as token sets")
        return frame[names[0]].map(lambda v: v if _is_collection(v) else [])  # a missing value: no token
    texts = _text_of(frame[names[0]])
    for n in names[1:]:
        texts = texts + " " + _text_of(frame[n])
    return texts


def _is_collection(value) -> bool:
    return isinstance(value, (list, tuple, set, frozenset, np.ndarray))


def _holds_tokens(column) -> bool:
    """Whether a column's values are token collections (lists, tuples, sets, arrays), missing ones aside;
    a column mixing them with other values (texts) is refused."""
    collection = column.astype(object).map(_is_collection)
    if not collection.any():
        return False
    other = ~collection & column.notna()
    if other.any():
        row = other.idxmax()
        raise UsageError(f"the column {column.name!r} mixes token collections with other values (row {row!r}: "
                         f"{column[row]!r}); give one kind")
    return True


def _text_of(column):
    """A column's values as text, a missing value (None, NaN, NA) as "" (a document with no shingle), not as
    the word "None" or "nan", which would make every missing title a copy of the others."""
    return column.astype(object).where(column.notna(), "").astype(str)


def dedup(data: Corpus | Sequence[str] | Sequence[Iterable], threshold, *, text: str | Sequence[str] | None = None,
          measure: str = "jaccard", shingle=None, normalize: bool = True, min_shingles: int = 1,
          progress: Callable[[str, int, int], None] | None = None):
    """Online exact near-duplicate removal.

    Given a pandas DataFrame, returns its kept rows (every column, in input
    order, the index as it was): ``allpairs.dedup(df, 0.8, text="title")``.
    Given anything else, returns a :class:`DedupResult`.

    Parameters
    ----------
    data : DataFrame, Corpus, list of str, or list of token collections
        As for :func:`allpairs.join`; documents are taken in this order. A
        DataFrame's rows are its documents, named by its index.
    text : str or list of str, optional
        A DataFrame's text column (several are joined by a space); default its
        ``text`` column, or its only column. A column of token collections
        (lists) gives token sets, not the text of each list.
    threshold : float, str or Fraction in (0, 1]
        A document is removed when a kept one has similarity >= threshold with it.
    measure, shingle, normalize, min_shingles
        As for :meth:`SearchIndex.build`. A document with no shingle (an empty
        text, a line of punctuation) is kept: no document reaches the threshold
        with it (the statistics' notes count them); one with fewer than
        ``min_shingles`` shingles is dropped, as asked: neither kept nor removed.
    """
    if _is_dataframe(data):
        res = dedup(_texts_of(data, text), threshold, measure=measure, shingle=shingle, normalize=normalize,
                    min_shingles=min_shingles, progress=progress)
        return data.iloc[res.kept]
    if text is not None:
        raise UsageError("text= names the text column of a DataFrame; give a DataFrame, or drop text=")
    rule = Rule.parse(measure, threshold)
    corpus = as_corpus(data)
    stats = Stats()
    sets, label = shingle_corpus(corpus, shingle, normalize=normalize, min_shingles=min_shingles,
                                 stats=stats, progress=progress)
    with timed(stats, "dedup"):
        sizes = np.diff(sets.indptr)
        postings = build_postings(sets.indptr, sets.tokens, rule.index_prefix(sizes), sets.num_tokens,
                                  sets.num_tokens)
        kept, removed, duplicate_of, overlap = _dedup_in_blocks(sets, rule, sizes, postings, progress)
    # A document with no shingle reaches no one, so it stays (a table comes back with every row it is not
    # told to remove); the statistics say so instead of listing it as skipped.
    empty = (sets.doc_set < 0) & (sets.doc_size == 0)
    if empty.any():
        kept |= empty
        stats.skipped = [s for s in stats.skipped if s[1] != "no shingle"]
        stats.notes.append(empty_kept_note(int(empty.sum()), label))
    kept = np.flatnonzero(kept).astype(np.int32)
    sizes = np.diff(sets.indptr)
    stats.pairs = len(removed)
    stats.distinct_sets = sets.num_sets
    stats.peak_memory = peak_memory()
    return DedupResult(kept=kept, removed=removed, duplicate_of=duplicate_of, overlap=overlap,
                       removed_size=sizes[sets.doc_set[removed]].astype(np.int32),
                       kept_size=sizes[sets.doc_set[duplicate_of]].astype(np.int32),
                       ids=corpus.ids, rule=rule, shingle=label, stats=stats, columns=corpus.columns,
                       header=corpus.header, id_column=corpus.id_column, rows=corpus.rows)
