"""Stage 1: the readers, documents from a directory tree, a file of lines, a file of sets, or JSON Lines.

``documents.py`` holds :class:`Corpus` and every reader; ``linefile.py`` reads
a line-oriented file in chunks into one UTF-8 buffer, which the ``--lines``,
``--sets`` and ``--jsonl`` readers and the shingle kernels share.
"""
from .documents import Corpus, matches, read_corpus, read_directory, read_jsonl, read_lines, read_sets

__all__ = ["Corpus", "matches", "read_corpus", "read_directory", "read_jsonl", "read_lines", "read_sets"]
