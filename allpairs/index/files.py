"""Index files end to end, one call each for the command line: build one, add to one, query one.

Each returns what it did and its :class:`~allpairs.pipeline.Stats` (documents read
and skipped, seconds per stage, peak memory); the file is written as every
allpairs output is (:mod:`allpairs.output.files`): replaced atomically, never
left half-written, a link's target replaced, its mode kept. ``add_file`` holds
an exclusive lock on the index from before it reads it until it has replaced
it, so that two runs adding to one index never lose each other's documents.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field

from typing import BinaryIO, Callable

from ..corpus import Corpus
from ..errors import UsageError
from ..pipeline import Stats, timed, peak_memory
from ..pipeline.stats import with_detail
from ..output.files import OutputPlan, check_output
from ..output.spill import size_text
from .ids import check_added_columns, continue_lines, line_ids_note
from .matches import Matches, write_matches
from .rule import Rule
from .search import SearchIndex
from .store import locked, open_index


def check_index_file(path: str | os.PathLike, *, update: bool = False) -> OutputPlan | None:
    """Refuse now, before any input is read, an INDEX that could not be read (a FIFO, a device,
    a missing file) or, with ``update``, replaced (a read-only file); the plan to write it."""
    os.close(open_index(path))
    return check_output(path, role="index", update=True) if update else None


#: Input kinds whose carried columns are the ones named (``keep``); others carry what they carry (a line).
RECORD_KINDS = ("jsonl", "csv", "tsv", "parquet")


def carried_columns(path: str | os.PathLike, kind: str, keep) -> list[str] | None:
    """The columns to carry from records added to the index in ``path``: those it carries, by default (so
    that none is stored empty), or ``keep`` if given and all carried by the index; None for other input.

    Raises UsageError for a column of ``keep`` that the index does not carry (it would be dropped).
    """
    if kind not in RECORD_KINDS:
        return None
    carried = list(SearchIndex.load(path, check=False).columns)
    unknown = [c for c in keep if c not in carried]
    if unknown:
        raise UsageError(f"the index carries no column {unknown[0]!r} (it carries "
                         f"{', '.join(map(repr, carried)) if carried else 'none'}); build the index with "
                         "{{keep}} to carry it, or leave it out", param="keep")
    return list(keep) if keep else carried


@dataclass
class IndexRun:
    """An index after a build or an add, the file it was written to, and the statistics of the run."""

    index: SearchIndex
    path: str
    size: int = 0
    added: int = 0
    stats: Stats = field(default_factory=Stats)


def build_file(corpus: Corpus, threshold, path: str | os.PathLike, *, measure: str = "jaccard", shingle=None,
               normalize: bool = True, min_shingles: int = 1, progress=None,
               plan: OutputPlan | None = None) -> IndexRun:
    """Index ``corpus`` for queries at ``threshold`` or above and save it to ``path``
    (``plan``: what :func:`~allpairs.output.files.check_output` said of it before the work)."""
    rule = Rule.parse(measure, threshold)  # refuse a bad threshold before reading anything more
    plan = plan or check_output(path, role="index")
    stats = Stats()
    index = SearchIndex._build(corpus, rule, shingle=shingle, normalize=normalize, min_shingles=min_shingles,
                               stats=stats, progress=progress)
    with timed(stats, "save"):
        size = index.save(path, plan=plan, progress=_saving(progress))
    stats.peak_memory = peak_memory()
    return IndexRun(index, str(path), size, index.num_docs, stats)


def _saving(progress):
    """The bytes an index save has written, told to ``progress`` as the stage "save" (None: nothing)."""
    told = with_detail(progress)
    if told is None:
        return None
    return lambda done, total: told("save", done, total, f"{size_text(done)} of {size_text(total)}")


def add_file(path: str | os.PathLike, corpus: Corpus, *, on_wait: Callable[[], None] | None = None,
             existing: str = "error") -> IndexRun:
    """Append the documents of ``corpus`` to the index in ``path`` (shingled as it says) and save it again.

    Line ids (``--lines``, ``--sets``, records without ids) continue after the
    index's largest line id (:func:`~allpairs.index.ids.continue_lines`).
    The index is locked for the whole read-modify-write: another run adding to
    it waits until this one has replaced it, then adds to the new file.
    ``on_wait`` is called once when this run has to wait for another.
    ``existing``: what to do with an id the index holds (:meth:`SearchIndex.add`).
    """
    stats = Stats()
    stats.input_kind = corpus.kind
    with locked(path, on_wait) as fd:
        plan = check_output(path, role="index", update=True)
        with timed(stats, "load"):
            index = SearchIndex.load(path, fd=fd)
        if len(corpus):
            index.check_kind(corpus)  # before the columns: sets into an index of texts lack its line texts too
        check_added_columns(corpus, index)
        note = line_ids_note(corpus, index)
        if note:
            stats.notes.append(note)
        with timed(stats, "add"):
            index.add(continue_lines(corpus, index), existing=existing, stats=stats)
        with timed(stats, "save"):
            size = index.save(path, plan=plan)
    stats.peak_memory = peak_memory()
    return IndexRun(index, str(path), size, stats.joined, stats)


class MatchCount:
    """The number of matches of a query run (:func:`query_file` with ``count``), with the index and rule it was
    answered from; ``len()`` is the number."""

    def __init__(self, count: int, index: SearchIndex, rule: Rule):
        self.count, self.index, self.rule = count, index, rule

    def __len__(self) -> int:
        return self.count


def query_file(path: str | os.PathLike, corpus: Corpus, threshold=None, *, shingle=None, normalize=None,
               jobs: int | None = None, top: int | None = None, progress=None, count: bool = False,
               out: BinaryIO | None = None, fmt: str = "tsv", header: bool = True,
               memory: int | str | None = None) -> tuple[Matches | MatchCount, Stats]:
    """Every document of the index in ``path`` reaching ``threshold`` (default: the index's) with each query
    (only each query's ``top`` best when given); with ``count``, only their number
    (:meth:`SearchIndex.count`: the matches are never all held); with ``out`` (a binary stream), the matches
    written to it in ``fmt`` (``header``: TSV's and CSV's header row) a block of queries at a time, about
    ``memory`` bytes of them held at once (:meth:`SearchIndex.query_blocks`), and their number returned."""
    stats = Stats()
    stats.documents = len(corpus) + len(corpus.skipped)
    stats.skipped = list(corpus.skipped)
    t0 = time.perf_counter()
    index = SearchIndex.load(path)
    stats.seconds["load"] = time.perf_counter() - t0
    with timed(stats, "query"):
        if out is not None:
            blocks = index.query_blocks(corpus, threshold, shingle=shingle, normalize=normalize, jobs=jobs, top=top,
                                        progress=progress, memory=memory)
            matches = MatchCount(write_matches(out, blocks, fmt, header=header), index, index._rule_at(threshold))
        elif count:
            matches = MatchCount(index.count(corpus, threshold, shingle=shingle, normalize=normalize, jobs=jobs,
                                             top=top, progress=progress, memory=memory), index,
                                 index._rule_at(threshold))
        else:
            matches = index.query(corpus, threshold, shingle=shingle, normalize=normalize, jobs=jobs, top=top,
                                  progress=progress)
    stats.pairs = len(matches)
    stats.peak_memory = peak_memory()
    return matches, stats
