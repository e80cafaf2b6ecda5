"""allpairs: exact all-pairs set-similarity join, with MinHash+LSH beside it.

>>> import allpairs
>>> res = allpairs.join([["a", "b", "c"], ["a", "b", "c", "d"], ["x"]], threshold=0.7)
>>> [tuple(p) for p in res.pairs]
[(0, 1, 3, 3, 4)]
"""

__version__ = "0.1.0"

from .corpus import Corpus, read_corpus, read_directory, read_jsonl, read_lines, read_sets
from .errors import AllPairsError, EmptyCorpusError, InputError, UsageError
from .join import JoinResult, join
from .measures import Threshold
from .pairs import Pair, PairWriter, Pairs
from .report import Comparison, compare
from .shingles import ShingleSpec

__all__ = [
    "AllPairsError", "Comparison", "Corpus", "EmptyCorpusError", "InputError", "JoinResult", "Pair", "PairWriter", "Pairs",
    "ShingleSpec", "Threshold", "UsageError", "__version__", "compare", "join", "read_corpus", "read_directory",
    "read_jsonl", "read_lines", "read_sets",
]
