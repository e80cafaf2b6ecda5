"""Stage 6: the result type, its writers and the duplicate clusters.

``result.py`` holds :class:`Pairs` (document pairs streamed in order, written
as TSV, CSV or JSON Lines; kernels in ``_kernel.py``); ``output.py`` is where
they go (standard output, or a file replaced whole at the end);
``clusters.py`` takes the connected components of the pairs (kernel in
``_clusters_kernel.py``).
"""
from .result import Pair, PairWriter, Pairs

__all__ = ["Pair", "PairWriter", "Pairs"]
