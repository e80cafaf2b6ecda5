"""The fast path of a plain join (:func:`allpairs.cli.plain_join`): ``allpairs join PATH --sets -t T``,
with ``-q``, ``--count`` or ``-o FILE``, ``-j N``, run without typer.

typer and click cost ~20 ms of every run, more than the whole join of a small ``--sets`` file (issue 34,
item 3). For these options :func:`run` makes the calls ``join``'s typer command (:mod:`.join`) makes, in
its order, through the same functions (:mod:`._checks`, :mod:`._render`), and ends the run as the typer
group does (:class:`._app.Group`); every refusal of the typer command that these options cannot reach is
left out. tests/test_cli_fast.py runs both on the same command lines, bad ones too, and compares their
stdout, stderr and exit status.
"""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING, NoReturn

from ..corpus import read_corpus
from ..errors import AllPairsError
from ..output.escape import verbatim_cells
from ..output.files import check_output
from ..output.spill import parse_memory
from ..pipeline import join
from ..shingles import hash_set_pieces
from ._checks import (MEMORY, format_named, refuse_jobs, refuse_one_document, refuse_output_of_input,
                      spill_directory)
from ._render import Bar, BrokenPipe, broken_pipe, failed, refused, write_join

if TYPE_CHECKING:
    from . import PlainJoin


def _join_keys(pieces, size_hint=None):
    """:func:`~allpairs.shingles.hash_set_pieces` with keys for an exact join only (``join_keys``)."""
    return hash_set_pieces(pieces, size_hint, join_keys=True)


def run(plain: PlainJoin) -> NoReturn:
    """Run the plain join and end as :class:`._app.Group` ends a run: a closed pipe quiet (141), exhausted
    memory or an I/O error the library did not name in one line (1)."""
    try:
        try:
            code = _join(plain)
        except OSError as e:
            if broken_pipe(e):
                raise BrokenPipe() from None
            raise
        if sys.stdout is not None:
            sys.stdout.flush()
    except (MemoryError, OSError) as e:
        code = failed(e)
    sys.exit(code)


def _join(p: PlainJoin) -> int:
    """``join``'s typer command (:func:`.join.join_command`) for these options; its exit status."""
    output = None if p.count else p.output
    with verbatim_cells(False):
        try:
            refuse_jobs(p.jobs)
            budget = parse_memory(MEMORY)
        except AllPairsError as e:
            return refused(e)
        bar = Bar(not p.quiet)
        try:
            fmt = format_named(output) or "tsv"
            refuse_output_of_input([output], [p.path])
            plan = check_output(output)
            try:
                # Keys private to this exact join (a whole-number token keyed by its value): the typer
                # command's keys, hashed, give the same pairs.
                corpus = read_corpus([p.path], "sets", hash_pieces=_join_keys,
                                     protect=[] if p.output is None else [p.output])
                refuse_one_document(corpus)
                res = join(corpus, p.threshold, jobs=p.jobs or None, progress=bar, memory=budget, count=p.count,
                           spill=None if p.count else spill_directory(plan))
            finally:
                bar.close()
            write_join(res, output, plan, count=p.count, fmt=fmt, quiet=p.quiet, bar=bar)
        except AllPairsError as e:
            return refused(e)
    return 0
