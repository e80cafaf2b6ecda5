"""A corpus's shingle sets written as a ``--sets`` file, for other tools (and the C yardstick).

Stages 1 and 2 only: every document of the corpus becomes one line of its
distinct shingle keys (see :func:`allpairs.shingles.format_sets`), in the
order :func:`allpairs.join` numbers the documents, so line ``i`` is document
``i`` and ``allpairs join --sets`` on the file finds the same pairs as
``allpairs join`` on the corpus.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import BinaryIO, Callable

from .corpus import Corpus
from .errors import EmptyCorpusError
from .join import corpus_keys
from .shingles import ShingleSpec, format_sets


@dataclass
class SetsFileStats:
    """What :func:`write_sets` wrote: documents (lines), keys, the shingle, bytes and seconds."""

    documents: int
    keys: int
    shingle: str
    bytes: int
    seconds: float


def write_sets(corpus: Corpus, out: BinaryIO, *, shingle: ShingleSpec | str | None = None, normalize: bool = True,
               progress: Callable[[str, int, int], None] | None = None) -> SetsFileStats:
    """Write one line of distinct shingle keys per document of ``corpus`` to the binary stream ``out``.

    Parameters
    ----------
    corpus : Corpus
        Texts (shingled by ``shingle``, default as for a join) or sets (their
        tokens hashed; ``shingle`` must then be None).
    out : binary stream
    shingle, normalize
        As for :func:`allpairs.join`.
    progress : callable(stage, done, total), optional

    Raises
    ------
    EmptyCorpusError
        When the corpus has no document.
    UsageError
        For a bad shingle spec, or a shingle given for sets.
    """
    t0 = time.perf_counter()
    if len(corpus) == 0:
        raise EmptyCorpusError("the corpus is empty: no document was read"
                               + (f" ({len(corpus.skipped)} files skipped)" if corpus.skipped else ""))
    indptr, keys, label = corpus_keys(corpus, shingle, normalize=normalize, progress=progress)
    written = 0
    for piece in format_sets(indptr, keys):
        out.write(piece)
        written += len(piece)
    return SetsFileStats(documents=len(corpus), keys=int(len(keys)), shingle=label, bytes=written,
                         seconds=time.perf_counter() - t0)
