"""``allpairs index build|add|query``: a saved index, grown without rebuilding, queried at any higher threshold."""

from contextlib import nullcontext
from pathlib import Path
from typing import List, Optional

import typer

from .._plural import count as count_of
from ..errors import AllPairsError, UsageError
from ..output.files import check_output, open_output
from ._app import Bar, app, err, fail, warn_skipped
from ._render import _mib as mib
from ._checks import MEMORY
from ._options import (JOBS, MEASURE, MIN_SHINGLES, NO_HEADER, NO_NORMALIZE, OUTPUT, PATHS, PERFORMANCE, QUIET,
                       SHINGLE, SHINGLES, VERBATIM_CELLS, Format, Measure, PanelCommand, check_jobs, check_memory,
                       check_table_output, input_kind, input_options, output_format, read_input, refuse,
                       refuse_output_of_input, refuse_unused_input_options, verbatim_cells)

index_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None,
                        help="A saved similarity index: build it once, add documents, query it.")
app.add_typer(index_app, name="index")

QUERY_MEMORY = typer.Option(MEMORY, "--memory", metavar="SIZE", rich_help_panel=PERFORMANCE,
                            help="Memory the matches may take at once (K, M, G: powers of 1024): they are written a "
                                 "block of queries at a time, in the same order: the same output.")

INDEX = typer.Argument(..., metavar="INDEX", show_default=False, help="The index file (from 'allpairs index build').")


def _dropped(stats, index) -> str:
    """The documents left out for having fewer shingles than the index's --min-shingles, in words."""
    return (f" ({stats.dropped:,} more dropped: fewer than {index.min_shingles} shingles, the index's "
            "--min-shingles)" if stats.dropped else "")


def _times(stats) -> str:
    return ", ".join(f"{k} {v:.2f}s" for k, v in stats.seconds.items())


@index_app.command("build", cls=PanelCommand)
@input_options
def build_command(
    ctx: typer.Context,
    paths: List[str] = PATHS,
    threshold: str = typer.Option(..., "--threshold", "-t", metavar="T", help="The lowest threshold the index will answer (queries at it or above are exact). Read exactly (0.7 is 7/10)."),
    output: Path = typer.Option(..., "--output", "-o", metavar="FILE", rich_help_panel=OUTPUT, help="The index file to write (atomically)."),
    measure: Measure = MEASURE, shingle: Optional[str] = SHINGLE, no_normalize: bool = NO_NORMALIZE,
    min_shingles: int = MIN_SHINGLES, quiet: bool = QUIET,
    **inputs,
) -> None:
    """Index the documents for similarity queries at THRESHOLD or above, into one file.

    The file holds the shingle settings, the global token order, every set and
    the prefix index; queries and added documents are shingled the same way.
    """
    from ..index.files import build_file  # here, not at the top: the other commands need none of the index

    bar = Bar(not quiet)
    try:
        refuse_unused_input_options(ctx)
        refuse_output_of_input(ctx, output)
        plan = check_output(output, role="index")  # refuse an index that cannot be written before the work
        try:
            corpus = read_input(ctx)
            run = build_file(corpus, threshold, output, measure=measure.value, shingle=shingle,
                             normalize=not no_normalize, min_shingles=min_shingles, progress=bar, plan=plan)
        finally:
            bar.close()
        if not quiet:
            s, ix = run.stats, run.index
            warn_skipped(s)
            err.print(f"allpairs: {count_of(s.documents, 'document')}, {len(s.skipped):,} skipped, {ix.num_docs:,} "
                      f"indexed{_dropped(s, ix)}; {ix.label} shingles: {s.distinct_shingles:,} distinct; "
                      f"{count_of(ix.num_sets, 'distinct set')}")
            for note in s.notes:
                err.print(f"allpairs: {note}")
            err.print(f"allpairs: index for {ix.rule}: {count_of(len(ix.postings.post), 'posting')}; wrote {run.path} "
                      f"({count_of(run.size, 'byte')})")
            err.print(f"allpairs: time {_times(s)}; peak memory {mib(s.peak_memory)}")
    except AllPairsError as e:
        fail(e)


@index_app.command("add", cls=PanelCommand)
@input_options
def add_command(
    ctx: typer.Context,
    index: Path = INDEX, paths: List[str] = PATHS,
    replace: bool = typer.Option(False, "--replace", help="A document whose id the index holds replaces the old one: that one is removed and the new one added last, so the index answers as a fresh build of the final documents would."),
    skip_existing: bool = typer.Option(False, "--skip-existing", help="A document whose id the index holds is skipped (and counted); the old one stays."),
    quiet: bool = QUIET,
    **inputs,
) -> None:
    """Add the documents to INDEX without rebuilding it (shingled as the index says); INDEX is
    replaced atomically, and locked meanwhile: a second run adding to it waits for the first.

    An id the index holds already is refused (nothing is added) unless
    --replace or --skip-existing says otherwise. Line ids (--lines, --sets,
    records without ids) continue after the index's largest line id.
    """
    from ..index.files import add_file, carried_columns, check_index_file

    def waiting() -> None:
        if not quiet:
            err.print(f"allpairs: waiting for another run to finish with {index}")

    try:
        refuse_unused_input_options(ctx)
        if replace and skip_existing:
            raise UsageError("--replace and --skip-existing exclude each other; give one")
        refuse_output_of_input(ctx, index)
        check_index_file(index, update=True)  # a FIFO, device or read-only index is refused before the work
        keep = carried_columns(index, input_kind(ctx), ctx.params["keep_col"])
        if keep is not None:
            ctx.params["keep_col"] = keep
        corpus = read_input(ctx)
        run = add_file(index, corpus, on_wait=waiting,
                       existing="replace" if replace else "skip" if skip_existing else "error")
        if not quiet:
            s = run.stats
            warn_skipped(s)
            for note in s.notes:
                err.print(f"allpairs: {note}")
            err.print(f"allpairs: added {run.added:,} of {count_of(s.documents, 'document')}{_dropped(s, run.index)}; "
                      f"the index holds "
                      f"{run.index.num_docs:,} ({count_of(run.index.num_sets, 'set')}); wrote {run.path} "
                      f"({count_of(run.size, 'byte')})")
            err.print(f"allpairs: time {_times(s)}; peak memory {mib(s.peak_memory)}")
    except AllPairsError as e:
        fail(e)


@index_app.command("query", cls=PanelCommand)
@input_options
def query_command(
    ctx: typer.Context,
    index: Path = INDEX,
    paths: List[str] = typer.Argument(..., metavar="PATH...", show_default=False, help="The queries: directories (every file below a query) and files, read as one corpus; or one file with --lines/--sets/--jsonl ('-' for stdin)."),
    threshold: Optional[str] = typer.Option(None, "--threshold", "-t", metavar="T", show_default=False, help="Answer at this threshold, at or above the index's (default: the index's)."),
    shingle: Optional[str] = typer.Option(None, "--shingle", "-s", metavar="KIND:N", rich_help_panel=SHINGLES, show_default=False, help="Checked against the index's shingle settings (queries are always shingled as the index was)."),
    no_normalize: bool = typer.Option(False, "--no-normalize", rich_help_panel=SHINGLES, help="Checked against the index: an error unless it was built with --no-normalize."),
    fmt: Format = typer.Option(Format.tsv, "--format", "-f", rich_help_panel=OUTPUT, help="tsv: query id, indexed id, similarity. csv, jsonl and parquet add the overlap and both sizes. Carried columns follow: the queries' and those the index keeps (--lines, --keep-col at build)."),
    output: Optional[str] = typer.Option(None, "--output", "-o", metavar="FILE", rich_help_panel=OUTPUT, show_default=False, help="Write the matches to FILE (atomically) instead of stdout."),
    count: bool = typer.Option(False, "--count", rich_help_panel=OUTPUT, help="Print only the number of matches; no --output or --format."),
    top: Optional[int] = typer.Option(None, "--top", metavar="K", show_default=False, help="Only each query's K best matches, best first, ties by indexed document (Jaccard, cosine and dice indexes)."),
    no_header: bool = NO_HEADER, verbatim: bool = VERBATIM_CELLS, jobs: int = JOBS, memory: str = QUERY_MEMORY,
    quiet: bool = QUIET,
    **inputs,
) -> None:
    """Print every indexed document reaching the threshold with each query document: query id,
    indexed id, similarity (truncated to 6 decimals), sorted by query then indexed document in
    index order, not by similarity (--top K: each query's K best, best first).

    A query shingle the index has never seen counts in the query's size and
    matches nothing, so the answer is exact.
    """
    from ..index.files import check_index_file, query_file

    check_jobs(jobs)
    budget = check_memory(memory)
    ctx.with_resource(verbatim_cells(verbatim))
    try:
        refuse_unused_input_options(ctx)
        if count:
            refuse(ctx, ("output", "fmt", "no_header", "verbatim"), "with --count")
        if not count:
            fmt = output_format(ctx, fmt, output)
        check_table_output(ctx, fmt, output)
        refuse_output_of_input(ctx, None if count else output, inputs=[index])
        plan = check_output(None if count else output)  # refuse an output that cannot be written before the work
        check_index_file(index)  # and an index that cannot be read (a FIFO would block)
        corpus = read_input(ctx)
        bar = Bar(not quiet)
        try:
            with nullcontext() if count else open_output(output, plan) as out:
                matches, stats = query_file(index, corpus, threshold, shingle=shingle,
                                            normalize=False if no_normalize else None, jobs=jobs or None, top=top,
                                            progress=bar, count=count, out=out, fmt=fmt.value,
                                            header=not no_header, memory=budget)
        finally:
            bar.close()
        if count:
            typer.echo(len(matches))
        if not quiet:
            warn_skipped(stats)
            ix = matches.index
            err.print(f"allpairs: {count_of(len(corpus), 'query', 'queries')} against {count_of(ix.num_docs, 'document')} "
                      f"at {matches.rule}: {count_of(len(matches), 'match', 'matches')}")
            err.print(f"allpairs: time {_times(stats)}; peak memory {mib(stats.peak_memory)}")
    except AllPairsError as e:
        fail(e)
