"""Stage 7: exact and LSH side by side (``comparison.py``), its pictures (``plot.py``), and the files
``allpairs compare`` writes, the missed pairs and the pictures together (``files.py``).

``plot.py`` imports matplotlib only when it draws, and is not imported here.
"""
from .comparison import Comparison, compare, recall_by_bin, render_table

__all__ = ["Comparison", "compare", "recall_by_bin", "render_table"]
