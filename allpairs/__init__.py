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

import importlib
import sys
from types import ModuleType
from typing import TYPE_CHECKING

__version__ = "0.1.0"

#: Public name -> the module that defines it.
_EXPORTS = {
    "Corpus": "corpus", "read_corpus": "corpus", "read_directory": "corpus", "read_jsonl": "corpus",
    "read_lines": "corpus", "read_sets": "corpus", "read_table": "corpus",
    "AllPairsError": "errors", "EmptyCorpusError": "errors", "InputError": "errors", "MissingExtraError": "errors", "OutputError": "errors",
    "UsageError": "errors",
    "JoinResult": "join", "join": "join",
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
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})


class _Package(ModuleType):
    """The package keeps its public names when a submodule of the same name loads: the import
    system binds ``allpairs.join`` (the module) on the package, where the function belongs."""

    def __setattr__(self, name: str, value) -> None:
        if name in _EXPORTS and isinstance(value, ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


if TYPE_CHECKING:  # for type checkers and editors: the same names, imported eagerly
    from .corpus import Corpus, read_corpus, read_directory, read_jsonl, read_lines, read_sets, read_table
    from .errors import AllPairsError, EmptyCorpusError, InputError, MissingExtraError, OutputError, UsageError
    from .join import JoinResult, join
    from .measures import Threshold
    from .pairs import Pair, PairWriter, Pairs
    from .report import Comparison, compare
    from .shingles import ShingleSpec
