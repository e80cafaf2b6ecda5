"""Stage 4a: the exact path, prefix-filter candidates (AllPairs with PPJoin's positional bound)."""
from .._exports import lazy_exports

#: Public name -> the module that defines it, imported on first use: a join of sets loads no row join (subset).
_EXPORTS = {"prefix_join": "prefix", "prefix_join_rows": "subset"}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
