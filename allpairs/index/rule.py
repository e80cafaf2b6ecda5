"""The rule an index answers: a measure and its exact threshold, and the prefix lengths and partner-size
windows it gives each set size (one row of :data:`allpairs.measures.MEASURES`)."""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

import numpy as np

from ..measures import JOIN_MEASURES, MEASURES, Measure, Threshold, get_measure, parse_threshold

#: No upper bound on a partner's size.
UNBOUNDED = 2**62


@dataclass(frozen=True)
class Rule:
    """A measure of :data:`allpairs.measures.MEASURES` and its threshold ``p/q``.

    ``p = 0`` (only in :mod:`allpairs.compat`) asks for one common token.
    Every bound comes from the measure's row of the table; a query is the
    measure's left side (containment: the share of the query found in the
    indexed set).
    """

    measure: str
    p: int
    q: int

    @property
    def row(self) -> Measure:
        return MEASURES[self.measure]

    @property
    def code(self) -> int:
        return self.row.code

    @property
    def threshold(self) -> Threshold:
        return Threshold(self.p, self.q)

    @property
    def fraction(self) -> Fraction:
        return Fraction(self.p, self.q)

    @classmethod
    def parse(cls, measure: str, threshold) -> "Rule":
        row = get_measure(measure, JOIN_MEASURES)
        t = parse_threshold(threshold, row)
        return cls(row.name, t.p, t.q)

    def __str__(self) -> str:
        return f"{self.measure} >= {self.threshold}"

    def similarity(self, overlap: int, size_x: int, size_y: int):
        """The exact similarity of a query of ``size_x`` tokens and an indexed set of ``size_y``."""
        return self.row.similarity(overlap, size_x, size_y)

    def probe(self, sizes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Probing prefix and partner-size window (lo, hi) of queries of these sizes (int64 arrays)."""
        return _per_size(self, sizes, 0)

    def index_prefix(self, sizes) -> np.ndarray:
        """Indexing prefix of indexed sets of these sizes: ``|y|`` minus the least α any query can need, plus 1."""
        return _per_size(self, sizes, 1)[0]


@lru_cache(maxsize=1 << 16)
def _bounds(rule: Rule, size: int, indexed: int) -> tuple[int, ...]:
    """(probing prefix, lo, hi) of a query of ``size`` tokens, or (indexing prefix,) of an indexed set."""
    row, t = rule.row, rule.threshold
    if indexed:
        return (size if rule.p == 0 or size == 0 else row.probe_prefix(t, size, "right"),)
    if rule.p == 0 or size == 0:
        return size, 1, UNBOUNDED
    lo, hi = row.partner_sizes(t, size, "left")
    return row.probe_prefix(t, size, "left"), lo, UNBOUNDED if hi is None else hi


def _per_size(rule: Rule, sizes, indexed: int) -> tuple[np.ndarray, ...]:
    """:func:`_bounds` of each size, as int64 arrays (computed once per distinct size)."""
    sizes = np.asarray(sizes, np.int64)
    if len(sizes) == 1:  # one query: no need to group sizes
        return tuple(np.array([v], np.int64) for v in _bounds(rule, int(sizes[0]), indexed))
    uniq, inverse = np.unique(sizes, return_inverse=True)
    table = np.array([_bounds(rule, x, indexed) for x in uniq.tolist()], np.int64).reshape(len(uniq), 3 - 2 * indexed)
    return tuple(table[inverse.reshape(-1), c] for c in range(table.shape[1]))

