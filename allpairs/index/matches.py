"""The answer to index queries: (query, indexed document) pairs reaching the threshold, with their overlaps."""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Iterable, Iterator, NamedTuple

import numpy as np

from .._plural import count
from ..exact.topk import best_per_group, exact_ranks
from ..errors import require_extra
from ..pairs.result import similarity_text
from ..pairs.summary import SHOWN, Summarised
from ..output.tables import Column, check_format, write_parquet_slices, write_table
from .output import pair_rows, write_rows
from .rule import Rule

if TYPE_CHECKING:
    from .search import SearchIndex


class Match(NamedTuple):
    """One answer: query document, indexed document (positions), overlap and both set sizes."""

    query: int
    indexed: int
    overlap: int
    query_size: int
    indexed_size: int


@dataclass(repr=False)
class Matches(Summarised):
    """Every (query, indexed document) pair reaching the threshold, sorted by query then indexed document.

    Iterate for :class:`Match` tuples (positions); :meth:`to_pandas` gives a
    table with the ids; ``repr`` (and a notebook's view) the counts and the
    first few matches.

    Attributes
    ----------
    query, indexed, overlap, query_size, indexed_size : int32 arrays
        Positions in the query corpus and in the index, the exact overlap and
        both sets' sizes (a query's unseen tokens count in its size).
    query_ids : list of str
    index : SearchIndex
    rule : Rule
        The measure and threshold the query was answered at.
    """

    query: np.ndarray
    indexed: np.ndarray
    overlap: np.ndarray
    query_size: np.ndarray
    indexed_size: np.ndarray
    query_ids: list[str]
    index: "SearchIndex"
    rule: Rule
    #: Columns of the queries carried into the output (the line of ``--lines``, ``--keep-col`` columns).
    query_columns: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.query)

    def __iter__(self) -> Iterator[Match]:
        cols = (self.query, self.indexed, self.overlap, self.query_size, self.indexed_size)
        return map(Match._make, zip(*(c.tolist() for c in cols)))

    def best(self, k: int) -> "Matches":
        """Each query's ``k`` best matches, best first, ties by indexed document (see :mod:`allpairs.exact.topk`)."""
        ranks = exact_ranks(self.rule.row, self.overlap, self.query_size, self.indexed_size)
        keep = best_per_group(self.query, ranks, self.indexed, k)
        cols = {f: getattr(self, f)[keep] for f in ("query", "indexed", "overlap", "query_size", "indexed_size")}
        return Matches(**cols, query_ids=self.query_ids, index=self.index, rule=self.rule,
                       query_columns=self.query_columns)

    def similarities(self) -> list[Fraction]:
        """Exact similarity of each match."""
        return [self.rule.similarity(m.overlap, m.query_size, m.indexed_size) for m in self]

    def to_pandas(self):
        """The matches as a pandas DataFrame: query and indexed (ids), similarity (a float under the
        index's measure), overlap, query_size, indexed_size. Needs pandas."""
        pandas = require_extra("pandas", "to_pandas")
        row = self.rule.row
        sims = [float(row.similarity(o, x, y)) for o, x, y in
                zip(self.overlap.tolist(), self.query_size.tolist(), self.indexed_size.tolist())]
        return pandas.DataFrame({"query": [self.query_ids[q] for q in self.query.tolist()],
                                 "indexed": [self.index.ids[d] for d in self.indexed.tolist()],
                                 "similarity": np.asarray(sims, np.float64), "overlap": self.overlap,
                                 "query_size": self.query_size, "indexed_size": self.indexed_size})

    def _summary(self) -> tuple[str, tuple[str, ...], list[tuple], int]:
        title = (f"Matches: {count(len(self), 'match', 'matches')} of {count(len(self.query_ids), 'query', 'queries')}"
                 f" against {count(self.index.num_docs, 'document')} at {self.rule}")
        rows = [(self.query_ids[m.query], self.index.ids[m.indexed],
                 similarity_text(self.rule.row, m.overlap, m.query_size, m.indexed_size))
                for m in itertools.islice(self, SHOWN)]
        return title, ("query", "indexed", "similarity"), rows, len(self)

    def write(self, out, fmt: str = "tsv", *, header: bool = True) -> int:
        """Write one row per match to the binary stream ``out``: query id, indexed id, similarity
        (CSV, JSON Lines and Parquet add the overlap and both sizes), then the carried columns of the
        queries (``query_NAME``) and of the indexed documents (``indexed_NAME``); return the rows written."""
        return write_rows(out, fmt, ("query", "indexed"), self.query.tolist(), self.indexed.tolist(), self.rule.row,
                          self.overlap.tolist(), self.query_size.tolist(), self.indexed_size.tolist(),
                          left_ids=self.query_ids, right_ids=self.index.ids, left_columns=self.query_columns,
                          right_columns=self.index.columns, header=header)

    def rows(self, fmt: str, lo: int, hi: int) -> list[Column]:
        """The columns :meth:`write` writes, of the matches ``lo .. hi - 1``."""
        cols = (getattr(self, f)[lo:hi].tolist() for f in ("query", "indexed", "overlap", "query_size", "indexed_size"))
        q, d, o, qs, ds = cols
        return pair_rows(fmt, ("query", "indexed"), q, d, self.rule.row, o, qs, ds, left_ids=self.query_ids,
                         right_ids=self.index.ids, left_columns=self.query_columns, right_columns=self.index.columns)


#: Matches rendered as Python values at a time when written a block at a time (a few MiB, whatever the block).
WRITE_ROWS = 1 << 16


def write_matches(out, blocks: Iterable[Matches], fmt: str = "tsv", *, header: bool = True) -> int:
    """Write the matches of ``blocks`` (consecutive :class:`Matches` of one answer, at least one, such as
    :meth:`SearchIndex.query_blocks` gives) as one table: the bytes :meth:`Matches.write` writes for them all
    at once. :data:`WRITE_ROWS` matches are Python values at a time; Parquet holds a row group as Arrow
    arrays (:func:`~allpairs.output.tables.write_parquet_slices`). Returns the rows written."""
    check_format(fmt)
    slices = (m.rows(fmt, lo, lo + WRITE_ROWS) for m in blocks for lo in range(0, max(len(m), 1), WRITE_ROWS))
    if fmt == "parquet":
        return write_parquet_slices(out, slices)
    n = 0
    for k, columns in enumerate(slices):
        n += write_table(out, fmt, columns, header=header and k == 0)
    return n
