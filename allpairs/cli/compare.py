"""``allpairs compare``: the exact and the LSH join on the same sets, recall and cost side by side."""
from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import typer

from ..errors import AllPairsError
from ..report import compare as run_compare, render_table
from ._app import Bar, app, err, fail, warn_skipped
from ._options import (BANDS, BITS, ENCODING, EXCLUDE, ID_FIELD, INCLUDE, JOBS, JSONL, LINES, MAX_BUCKET, MIN_BYTES,
                       MIN_SHINGLES, NO_NORMALIZE, NUM_PERM, PATH, QUIET, RECALL, ROWS, SEED, SETS, SHINGLE,
                       TEXT_FIELD, THRESHOLD, check_jobs, read_input)


@app.command("compare")
def compare_command(
    path: str = PATH, threshold: str = THRESHOLD, lines: bool = LINES, sets: bool = SETS, jsonl: bool = JSONL,
    shingle: Optional[str] = SHINGLE, no_normalize: bool = NO_NORMALIZE, include: List[str] = INCLUDE,
    exclude: List[str] = EXCLUDE, min_bytes: int = MIN_BYTES, min_shingles: int = MIN_SHINGLES,
    encoding: str = ENCODING, id_field: str = ID_FIELD, text_field: str = TEXT_FIELD,
    num_perm: int = NUM_PERM, bands: Optional[int] = BANDS, rows: Optional[int] = ROWS, recall: float = RECALL,
    seed: int = SEED, bits: Optional[int] = BITS, max_bucket: Optional[int] = MAX_BUCKET,
    json_out: bool = typer.Option(False, "--json", help="Print the comparison as JSON instead of a table."),
    plot: Optional[Path] = typer.Option(None, "--plot", help="Draw the S-curve with the observed recall per band to FILE (.png or .svg), and the LSH candidates as chords on a circle to FILE-chords.png/.svg."),
    jobs: int = JOBS, quiet: bool = QUIET,
) -> None:
    """Run the exact join and the LSH join on the same shingle sets and compare recall and cost.

    Prints all pairs, pairs with J >= THRESHOLD, LSH candidates and their share
    of all pairs, pairs LSH found, recall overall and per similarity band beside
    the S-curve's prediction, and the time and peak memory of each stage.
    """
    check_jobs(jobs)
    bar = Bar(not quiet)
    try:
        if plot is not None:
            from .plot import check_plot_path

            check_plot_path(plot)  # refuse a bad file name before the work, not after
        try:
            corpus = read_input(path, lines, sets, jsonl, include, exclude, min_bytes, encoding, id_field, text_field)
            c = run_compare(corpus, threshold, shingle=shingle, normalize=not no_normalize,
                            min_shingles=min_shingles, jobs=jobs or None, num_perm=num_perm, bands=bands,
                            rows=rows, recall=recall, seed=seed, bits=bits, max_bucket=max_bucket, progress=bar)
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
        if plot is not None:
            from .plot import plot_comparison

            for written in plot_comparison(c, plot):
                if not quiet:
                    err.print(f"allpairs: wrote {written}")
    except AllPairsError as e:
        fail(e)
