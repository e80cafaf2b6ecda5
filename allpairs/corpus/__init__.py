"""Stage 1: the readers, documents from a directory tree, a file of lines, a file of sets, JSON Lines or a table.

``read.py`` is the entry (:func:`read_corpus`: an input kind's checks and
reader) and reads lines and sets; ``model.py`` holds :class:`Corpus`;
``tree.py`` reads directory trees and files, choosing them by ``walk.py``
(hidden names, ignore files) and ``globs.py`` (``--include``/``--exclude``);
``records.py`` reads JSON Lines and holds what every record reader shares;
``tables.py`` reads CSV, TSV and Parquet, a row a document;
``linefile.py`` reads a line-oriented file in chunks into one UTF-8 buffer,
which the line readers and the shingle kernels share.
"""
from .globs import matches
from .model import Corpus
from .read import read_corpus, read_lines, read_sets
from .records import read_jsonl
from .tree import read_directory
from .tables import read_table

__all__ = ["Corpus", "matches", "read_corpus", "read_directory", "read_jsonl", "read_lines", "read_sets", "read_table"]
