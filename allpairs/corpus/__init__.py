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
from __future__ import annotations

from typing import TYPE_CHECKING

from .._exports import lazy_exports

#: Public name -> the module that defines it. Imported on first use, so that reading a file of sets or
#: lines never loads the directory walker, the JSON Lines reader or the table readers.
_EXPORTS = {
    "matches": "globs", "Corpus": "model", "read_corpus": "read", "read_lines": "read", "read_sets": "read",
    "read_jsonl": "records", "read_directory": "tree", "read_table": "tables",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())


if TYPE_CHECKING:  # for type checkers and editors: the same names, imported eagerly
    from .globs import matches
    from .model import Corpus
    from .read import read_corpus, read_lines, read_sets
    from .records import read_jsonl
    from .tree import read_directory
    from .tables import read_table
