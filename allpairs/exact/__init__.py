"""Stage 4a: the exact path, prefix-filter candidates (AllPairs with PPJoin's positional bound)."""
from .prefix import prefix_join

__all__ = ["prefix_join"]
