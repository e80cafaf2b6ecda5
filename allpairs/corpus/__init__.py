"""Stage 1: the readers, documents from a directory tree, a file of lines, a file of sets, JSON Lines or a table.

``documents.py`` holds :class:`Corpus` and the readers of trees, lines, sets
and JSON Lines; ``tables.py`` reads CSV, TSV and Parquet, a row a document;
``linefile.py`` reads a line-oriented file in chunks into one UTF-8 buffer,
which the line readers and the shingle kernels share.
"""
from .documents import Corpus, matches, read_corpus, read_directory, read_jsonl, read_lines, read_sets
from .tables import read_table

__all__ = ["Corpus", "matches", "read_corpus", "read_directory", "read_jsonl", "read_lines", "read_sets", "read_table"]
