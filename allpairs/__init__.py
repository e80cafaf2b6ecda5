"""allpairs: exact all-pairs set-similarity join, with MinHash+LSH beside it.

>>> import allpairs
>>> res = allpairs.join([["a", "b", "c"], ["a", "b", "c", "d"], ["x"]], threshold=0.7)
>>> [tuple(p) for p in res.pairs]
[(0, 1, 3, 3, 4)]

The public names are imported on first use, so that ``import allpairs`` is
cheap and the program can set up its signal handling (``allpairs.__main__``)
before numba and the kernels load.
"""
from __future__ import annotations

import importlib as _importlib
from typing import TYPE_CHECKING

__version__ = "0.1.0"

#: Public name -> the module that defines it.
_EXPORTS = {
    "Corpus": "corpus", "read_corpus": "corpus", "read_directory": "corpus", "read_jsonl": "corpus",
    "read_lines": "corpus", "read_sets": "corpus", "read_table": "corpus",
    "AllPairsError": "errors", "EmptyCorpusError": "errors", "InputError": "errors", "MissingExtraError": "errors", "OutputError": "errors",
    "UsageError": "errors",
    "JoinResult": "pipeline", "join": "pipeline", "dedup": "index", "SearchIndex": "index",
    "Threshold": "measures",
    "Pair": "pairs", "PairWriter": "pairs", "Pairs": "pairs",
    "Comparison": "report", "compare": "report",
    "ShingleSpec": "shingles",
}

__all__ = sorted([*_EXPORTS, "__version__"])


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'allpairs' has no attribute {name!r}")
    value = getattr(_importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return list(__all__)


if TYPE_CHECKING:  # for type checkers and editors: the same names, imported eagerly
    from .corpus import Corpus, read_corpus, read_directory, read_jsonl, read_lines, read_sets, read_table
    from .errors import AllPairsError, EmptyCorpusError, InputError, MissingExtraError, OutputError, UsageError
    from .index import SearchIndex, dedup
    from .pipeline import JoinResult, join
    from .measures import Threshold
    from .pairs import Pair, PairWriter, Pairs
    from .report import Comparison, compare
    from .shingles import ShingleSpec
