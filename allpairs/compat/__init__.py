"""A drop-in for SetSimilaritySearch 1.0.1 whose answers a program cannot tell apart, computed by compiled kernels.

``from allpairs.compat import all_pairs, SearchIndex`` in place of
``from SetSimilaritySearch import all_pairs, SearchIndex``, or, to leave a
program's imports as they are, :func:`install` before it runs (or
``sys.modules["SetSimilaritySearch"] = allpairs.compat``): its modules
mirror SetSimilaritySearch's (``all_pairs``, ``search``, ``utils``).

What a program sees is what SetSimilaritySearch 1.0.1 gives it, because the
kernels run its algorithm, not allpairs' join:

- **Order**: ``all_pairs`` probes the sets in ``numpy.argsort`` order of their
  lengths and yields each probe's pairs in the iteration order of its
  Python ``set`` of candidates; ``query`` returns that order too (ties and
  all), rebuilt from the candidates in the order it inserts them.
- **Values**: its frequency order, prefixes (``int(len * t)``), position
  filter and similarity formulas, so a list that repeats a token is scored as
  there: ``numpy.intersect1d(..., assume_unique=True)`` counts each repeat as a
  match (``[a, a, b]`` vs ``[a, c]`` has Jaccard 2/3 there, 1/3 as sets).
  ``allpairs.join`` itself keeps set semantics.
- **Types**: ``all_pairs`` yields ``(numpy.int64, numpy.int64, float)``,
  ``query`` returns ``[(int, float)]``; cosine similarities are
  ``numpy.float64``. A numpy threshold (``np.float32(0.2)``) is compared in
  the precision numpy gives the comparison there.
- **Attributes**: ``SearchIndex`` has ``order``, ``sets``, ``index`` (the
  last two built when first read), ``similarity_threshold``,
  ``similarity_func``, ``position_filter_func`` and the threshold functions.
- **Errors and logging**: ``ValueError`` with its messages; debug records on
  the root logger (``logging.debug``), with its messages.
- **Streaming**: ``all_pairs`` is a generator holding the index and one batch
  of pairs, never all of them.
"""
from __future__ import annotations

import sys
import types

from allpairs.compat.all_pairs import all_pairs
from allpairs.compat.search import SearchIndex

__all__ = ["SearchIndex", "all_pairs", "install"]

#: The modules of SetSimilaritySearch 1.0.1 this package stands in for, by their names there.
MODULES = ("all_pairs", "search", "utils")


def install() -> None:
    """Make ``import SetSimilaritySearch`` and its submodules give :mod:`allpairs.compat` in this process."""
    import allpairs.compat.utils  # noqa: F401  (loaded, so that sys.modules holds it)

    sys.modules["SetSimilaritySearch"] = sys.modules[__name__]
    for name in MODULES:
        sys.modules[f"SetSimilaritySearch.{name}"] = sys.modules[f"{__name__}.{name}"]


class _Package(types.ModuleType):
    """SetSimilaritySearch's package binds ``all_pairs`` to the function, not the submodule of that name:
    an import of the submodule by its other name (``import SetSimilaritySearch.all_pairs`` under a bare
    ``sys.modules`` substitution) must not rebind it."""

    def __setattr__(self, name, value):
        if name == "all_pairs" and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
