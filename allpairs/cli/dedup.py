"""``allpairs dedup``: streaming exact near-duplicate removal; the kept ids, or each removed one with its kept twin."""

from typing import List, Optional

import typer

from ..errors import AllPairsError, UsageError
from ..output.files import check_output, open_output
from .._plural import count as count_of
from ._app import Bar, app, err, fail, warn_skipped
from ._render import _mib as mib
from ._options import (MEASURE, MIN_SHINGLES, MISSING_THRESHOLD, NO_HEADER, NO_NORMALIZE, OUTPUT, PATHS, QUIET,
                       RECORD_KINDS, SHINGLE, SPARK, VERBATIM_CELLS, Format, Measure, PanelCommand, check_table_output,
                       input_kind, input_options, output_format, read_input, refuse, refuse_one_document,
                       refuse_output_of_input, refuse_unused_input_options, spark_input_kind, verbatim_cells)


@app.command("dedup", cls=PanelCommand,
             short_help="Keep each document only if no kept one reaches the threshold with it.")
@input_options
def dedup_command(
    ctx: typer.Context,
    paths: List[str] = PATHS,
    threshold: Optional[str] = typer.Option(None, "--threshold", "-t", metavar="T", show_default=False, help="Required: a document is removed when a kept one reaches this similarity with it. Read exactly (0.8 is 4/5)."),
    measure: Measure = MEASURE, shingle: Optional[str] = SHINGLE, no_normalize: bool = NO_NORMALIZE,
    min_shingles: int = MIN_SHINGLES,
    removed: bool = typer.Option(False, "--removed", rich_help_panel=OUTPUT, help="Write each removed document instead: its id, the id of the kept document it duplicates (the most similar, the earliest among equals), the similarity."),
    fmt: Format = typer.Option(Format.tsv, "--format", "-f", rich_help_panel=OUTPUT, show_default=False, help="tsv, csv, jsonl or parquet (default: a table's kept rows in its own format, else tsv); with --removed, all but tsv add the overlap and both sizes. Carried columns follow."),
    output: Optional[str] = typer.Option(None, "--output", "-o", metavar="FILE", rich_help_panel=OUTPUT, show_default=False, help="Write to FILE (atomically) instead of stdout."),
    count: bool = typer.Option(False, "--count", rich_help_panel=OUTPUT, help="Print only the number of documents kept."),
    no_header: bool = NO_HEADER, verbatim: bool = VERBATIM_CELLS, quiet: bool = QUIET,
    engine: str = typer.Option("local", "--engine", metavar="local|spark", rich_help_panel=SPARK, help="spark: Apache Spark, the same rows kept; writes them (all their columns; --removed: the local table) as a Parquet dataset (-o DIR) or counts."),
    master: Optional[str] = typer.Option(None, "--master", metavar="URL", rich_help_panel=SPARK, help="Spark: the master URL, e.g. local[*] (default), spark://host:7077."),
    **inputs,
) -> None:
    """Keep each document, in input order, only if no kept document reaches THRESHOLD with it;
    print the kept rows of a table whole, as they came (--keep-col: the id and those columns),
    else the kept ids and carried columns.

    Exact: every document is compared with every kept one it could reach.
    A document with no shingle is kept (nothing reaches it) and counted on stderr.
    """
    from ..index import dedup  # here, not at the top: only this command needs it
    from ..index.output import write_ids, write_records, write_rows

    if engine not in ("local", "spark"):
        raise typer.BadParameter(f"--engine is local or spark, got {engine!r}")
    try:  # options this run would not read, refused alike on either engine (--keep-all of --lines, --count's -o)
        refuse_unused_input_options(ctx)
        if count:
            refuse(ctx, ("output", "fmt", "removed", "no_header", "verbatim"), "with --count")
    except AllPairsError as e:
        fail(e)
    if engine == "spark":
        return _spark_dedup(ctx, paths, threshold, measure.value, shingle, no_normalize, min_shingles, removed, fmt,
                            output, count, no_header, quiet, master, inputs)
    if master:
        raise typer.BadParameter("--master goes with --engine spark")
    ctx.with_resource(verbatim_cells(verbatim))
    bar = Bar(not quiet)
    try:
        if threshold is None:
            raise UsageError(MISSING_THRESHOLD)
        # A table's kept rows go out whole, unless --keep-col asks for the compact form, or --removed for pairs;
        # in the table's own format (a CSV as CSV, JSON Lines as JSON Lines) unless --format or -o names one.
        whole = input_kind(ctx) in RECORD_KINDS and not inputs["keep_col"] and not removed
        fmt = output_format(ctx, fmt, output, own=input_kind(ctx) if whole else None)
        check_table_output(ctx, fmt, output)
        refuse_output_of_input(ctx, None if count else output)
        plan = check_output(None if count else output)  # refuse an output that cannot be written before the work
        try:
            corpus = read_input(ctx, keep_all=whole or inputs["keep_all"])
            refuse_one_document(corpus)
            res = dedup(corpus, threshold, measure=measure.value, shingle=shingle, normalize=not no_normalize,
                        min_shingles=min_shingles, progress=bar)
        finally:
            bar.close()
        if count:
            typer.echo(len(res.kept))
        else:
            with open_output(output, plan) as out:
                if removed:
                    write_rows(out, fmt.value, ("removed", "kept"), res.removed.tolist(), res.duplicate_of.tolist(),
                               res.rule.row, res.overlap.tolist(), res.removed_size.tolist(), res.kept_size.tolist(),
                               left_ids=res.ids, right_ids=res.ids, left_columns=res.columns,
                               right_columns=res.columns, header=not no_header)
                elif res.header is not None:
                    # Rows as they came: a table read without a header is written without one (its numbered
                    # header, 1 2 3, was a row of data to the next run with --no-input-header).
                    headerless = inputs["no_input_header"] or inputs["headerless"]
                    write_records(out, res.header, res.id_column, res.ids, res.kept.tolist(), res.columns, fmt.value,
                                  header=not (no_header or headerless), rows=res.rows,
                                  # TSV read literally goes back so: a backslash escaped would double each pass.
                                  literal=input_kind(ctx) == "tsv" and not inputs["quotechar"])
                else:
                    write_ids(out, res.ids, res.kept.tolist(), fmt.value, columns=res.columns, header=not no_header)
        if not quiet:
            s = res.stats
            warn_skipped(s)
            dropped = f" ({s.dropped:,} more dropped by --min-bytes/--min-shingles)" if s.dropped else ""
            err.print(f"allpairs: {count_of(s.documents, 'document')}, {len(s.skipped):,} skipped{dropped}; "
                      f"{res.shingle} shingles; {len(res.kept):,} kept, {len(res.removed):,} removed at {res.rule}")
            for note in s.notes:
                err.print(f"allpairs: {note}")
            err.print("allpairs: time " + ", ".join(f"{k} {v:.2f}s" for k, v in s.seconds.items())
                      + f"; peak memory {mib(s.peak_memory)}")
    except AllPairsError as e:
        fail(e)


def _spark_dedup(ctx, paths, threshold, measure, shingle, no_normalize, min_shingles, removed, fmt, output, count,
                 no_header, quiet, master, inputs) -> None:
    """``dedup --engine spark``: the same rows kept, on Spark, written as a Parquet dataset (imports Spark only here)."""
    local_only = [flag for flag, used in (("--no-header", no_header), ("--verbatim-cells", ctx.params["verbatim"]),
                                          ("--csv", inputs["csv"]),
                                          ("--tsv", inputs["tsv"]), ("--delimiter", inputs["delimiter"] is not None),
                                          ("--keep-col", bool(inputs["keep_col"])),
                                          ("--hidden", inputs["hidden"]), ("--no-ignore", inputs["no_ignore"]),
                                          ("--format " + fmt.value, fmt not in (Format.tsv, Format.parquet)),
                                          ("several --text-col", len(inputs["text_col"]) > 1))
                  if used]
    if local_only:
        raise typer.BadParameter(f"{', '.join(local_only)} not available with --engine spark (it writes every "
                                 "column of the rows as Parquet)")
    kind = spark_input_kind(paths, inputs)
    pq = inputs["parquet"]
    id_col, text_col = inputs["id_col"], (inputs["text_col"] or [None])[0]
    try:
        from ..engines.spark.run_dedup import run_dedup

        res = run_dedup(paths[0], threshold, kind=kind, output=output, removed=removed,
                        count=count, master=master, include=inputs["include"], exclude=inputs["exclude"],
                        min_bytes=inputs["min_bytes"], id_field=id_col or "id", text_field=text_col or "text",
                        id_col=id_col if pq else None, text_col=text_col if pq else None,
                        tokens_col=inputs["tokens_col"], shingle=shingle, measure=measure,
                        normalize=not no_normalize, min_shingles=min_shingles, quiet=quiet,
                        keep_all=inputs["keep_all"])
    except AllPairsError as e:
        fail(e)
    if count:
        typer.echo(res.kept)
    if quiet:
        return
    skipped = sum(res.skipped.values())
    where = f"; {'removed' if removed else 'kept'} rows written to {res.output}" if res.output else ""
    err.print(f"allpairs: spark {res.master}: {count_of(res.documents, 'document')}, {skipped:,} skipped; "
              f"{res.shingle} shingles; {res.kept:,} kept, {res.removed:,} removed at {measure} >= {res.threshold}"
              f"{where}")
    for note in res.notes:
        err.print(f"allpairs: {note}")
    err.print(f"allpairs: {count_of(res.components, 'component')} of the pairs, the largest of {res.largest:,} "
              f"pairs; {count_of(res.rounds, 'large-star/small-star round')}")
    err.print("allpairs: time " + ", ".join(f"{k} {v:.2f}s" for k, v in res.seconds.items()))
