"""``allpairs compare``: the exact and the LSH join on the same sets, recall and cost side by side."""

import json
from pathlib import Path
from typing import List, Optional

import typer

from ..errors import AllPairsError
from ..output.files import check_output
from ._app import Bar, app, err, fail, warn_skipped
from ._options import (VERBATIM_CELLS, verbatim_cells, BANDS, BITS, JOBS, MAX_BUCKET, MEMORY, MIN_SHINGLES, NO_NORMALIZE,
                       NUM_PERM, OUTPUT, PATHS, QUIET, RECALL, ROWS, SEED, SHINGLE, THRESHOLD, PanelCommand,
                       check_jobs, check_memory, input_options, read_input, refuse, refuse_output_of_input,
                       refuse_unused_input_options, refuse_unused_lsh_options, spill_directory)


@app.command("compare", cls=PanelCommand,
             short_help="Run the exact and the LSH join on the same sets; compare recall and cost.")
@input_options
def compare_command(
    ctx: typer.Context,
    paths: List[str] = PATHS, threshold: str = THRESHOLD,
    shingle: Optional[str] = SHINGLE, no_normalize: bool = NO_NORMALIZE, min_shingles: int = MIN_SHINGLES,
    json_out: bool = typer.Option(False, "--json", rich_help_panel=OUTPUT,
                                  help="Print the comparison as JSON instead of a table, numbers as numbers "
                                       "(every key in docs/compare.md)."),
    missed: Optional[str] = typer.Option(None, "--missed", metavar="FILE", rich_help_panel=OUTPUT,
                                          show_default=False,
                                          help="Write the pairs of documents with J >= t that LSH missed to FILE, "
                                               "as join writes pairs (ids, exact similarity): TSV, or CSV or JSON "
                                               "Lines for a FILE ending in .csv or .jsonl."),
    plot: Optional[Path] = typer.Option(None, "--plot", metavar="FILE", rich_help_panel=OUTPUT, show_default=False,
                                        help="Draw the S-curve with the observed recall per bin to FILE (.png or "
                                             ".svg), and the LSH candidates and missed pairs to FILE-chords.png."),
    verbatim: bool = VERBATIM_CELLS, quiet: bool = QUIET,
    num_perm: int = NUM_PERM, bands: Optional[int] = BANDS, rows: Optional[int] = ROWS, recall: float = RECALL,
    seed: int = SEED, bits: Optional[int] = BITS, max_bucket: Optional[int] = MAX_BUCKET,
    jobs: int = JOBS, memory: str = MEMORY,
    **inputs,
) -> None:
    """Run the exact join and the LSH join on the same shingle sets and compare recall and cost.

    Prints the pairs with J >= THRESHOLD and how many LSH missed, the
    candidates each method verified, recall per similarity bin beside the
    S-curve's prediction, and each method's time and peak memory; --missed
    FILE writes the pairs LSH missed; --plot FILE draws the S-curve.
    """
    from ..report import compare as run_compare, render_table  # here, not at the top: only compare needs it
    from ..report.draw import chords_path
    from ..report.files import check_files, missed_format, write_files

    check_jobs(jobs)
    ctx.with_resource(verbatim_cells(verbatim))
    budget = check_memory(memory)
    bar = Bar(not quiet)
    try:
        refuse_unused_input_options(ctx)
        refuse_unused_lsh_options(ctx, True, bands, rows)
        chords = [] if plot is None else [chords_path(plot)]  # --plot FILE writes FILE-chords too
        # None: the report, on stdout
        refuse_output_of_input(ctx, None, *(f for f in (missed, plot) if f is not None), *chords)
        check_output(None)  # a closed stdout is refused before the work
        # A bad file name, or --plot without matplotlib, is refused before the work, not after.
        files = check_files(missed, plot)
        if missed is None or missed_format(missed) != "csv":
            refuse(ctx, ("verbatim",), "without --missed FILE.csv: only CSV cells get a ' before a formula")
        try:
            corpus = read_input(ctx, writes=chords)
            c = run_compare(corpus, threshold, shingle=shingle, normalize=not no_normalize,
                            min_shingles=min_shingles, jobs=jobs or None, num_perm=num_perm, bands=bands,
                            rows=rows, recall=recall, seed=seed, bits=bits, max_bucket=max_bucket, progress=bar,
                            # Missed pairs past --memory go to runs beside --missed; the exact pairs are kept
                            # only for the pictures.
                            memory=budget, spill=spill_directory(files.plans[0] if missed is not None else None),
                            keep_pairs=plot is not None)
        finally:
            bar.close()
        if not quiet:
            warn_skipped(c.stats)
            for note in c.stats.notes:
                err.print(f"allpairs: {note}")
        if json_out:
            typer.echo(json.dumps(c.as_dict(), indent=2))
        else:
            typer.echo(render_table(c), nl=False)
        try:
            for written in write_files(c, files):
                if not quiet:
                    err.print(f"allpairs: wrote {written}")
        finally:
            close = getattr(c.missed_pairs, "close", None)
            if close is not None:
                close()  # spilled runs
    except AllPairsError as e:
        fail(e)
