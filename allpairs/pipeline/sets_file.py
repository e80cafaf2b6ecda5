"""A corpus's shingle sets written as a ``--sets`` file, for other tools (and the C yardstick).

Stages 1 and 2 only: every document of the corpus with a shingle becomes one
line of its distinct shingle keys (see :func:`allpairs.shingles.format_sets`),
in the order :func:`allpairs.join` numbers the documents; a document without
one is skipped, as a join skips it. ``allpairs join --sets`` on the file finds
the same pairs as ``allpairs join`` on the corpus, the documents named by line
number; the ids file written beside it (``--ids``) maps the lines back.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import BinaryIO, Callable

import numpy as np

from ..corpus import Corpus
from ..errors import EmptyCorpusError
from .front import corpus_keys
from ..output.tables import write_id_list
from ..shingles import ShingleSpec, format_sets


@dataclass
class SetsFileStats:
    """What :func:`write_sets` wrote: documents (lines), keys, the shingle, bytes and seconds; the
    documents skipped for want of a shingle, and what the summary should say (notes)."""

    documents: int
    keys: int
    shingle: str
    bytes: int
    seconds: float
    skipped: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def write_sets(corpus: Corpus, out: BinaryIO, *, shingle: ShingleSpec | str | None = None, normalize: bool = True,
               progress: Callable[[str, int, int], None] | None = None,
               ids: BinaryIO | None = None) -> SetsFileStats:
    """Write one line of distinct shingle keys per document of ``corpus`` that has a shingle to ``out``.

    A document without a shingle is skipped, as a join skips it (and as the
    reader skipped binary or undecodable files): no line, counted in the
    statistics. So line ``i`` is the ``i``-th document with a shingle, and
    ``ids``, when given, gets the id of each line's document, line for line
    (TSV-escaped), which maps the lines back to the documents.

    Parameters
    ----------
    corpus : Corpus
        Texts (shingled by ``shingle``, default as for a join) or sets (their
        tokens hashed; ``shingle`` must then be None).
    out, ids : binary streams
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
        raise EmptyCorpusError(corpus.empty_message())
    notes = list(corpus.notes)
    indptr, keys, label = corpus_keys(corpus, shingle, normalize=normalize, progress=progress, notes=notes)
    counts = np.diff(indptr)
    has = counts > 0
    skipped = [(corpus.ids[d], "no shingle") for d in np.flatnonzero(~has).tolist()]
    indptr = np.concatenate([[0], indptr[1:][has]]).astype(np.int64)  # a document without keys spans none
    written = 0
    for piece in format_sets(indptr, keys):
        out.write(piece)
        written += len(piece)
    if ids is not None:
        write_id_list(ids, [corpus.ids[d] for d in np.flatnonzero(has).tolist()])
    return SetsFileStats(documents=int(has.sum()), keys=int(len(keys)), shingle=label, bytes=written,
                         seconds=time.perf_counter() - t0, skipped=skipped, notes=notes)
