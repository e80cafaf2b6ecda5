"""Stage 4a: the exact path, prefix-filter candidates (AllPairs with PPJoin's positional bound)."""
from .prefix import prefix_join
from .subset import prefix_join_rows

__all__ = ["prefix_join", "prefix_join_rows"]
