"""``allpairs join``: every pair of documents at or above a threshold, to stdout or a file."""

import os
from enum import Enum
from typing import List, Optional

import typer

from .._plural import count as count_of
from ..errors import AllPairsError, UsageError
from ..pipeline import join as run_join
from ..output.files import check_output, open_output
from ._app import Bar, app, err, fail, write_join
from ._options import (BANDS, BITS, INPUT, JOBS, LSH, MAX_BUCKET, MEASURE, MEMORY, MIN_SHINGLES, MISSING_THRESHOLD,
                       NO_HEADER, NO_NORMALIZE, NUM_PERM, OUTPUT, PATHS, QUIET, RECALL, ROWS, SEED, SHINGLE, SPARK,
                       VERBATIM_CELLS, Format, Measure, PanelCommand, check_jobs, check_memory, check_table_output,
                       input_options, output_format, read_input, refuse, refuse_one_document, refuse_output_of_input,
                        refuse_unused_input_options, spark_input_kind, spill_directory, verbatim_cells,
                       refuse_unused_lsh_options)


class Method(str, Enum):
    exact = "exact"
    lsh = "lsh"


class Verify(str, Enum):
    exact = "exact"
    estimate = "estimate"


#: The measures --engine spark joins (allpairs.engines.spark.join.JACCARD_ROUTED and SELF_RS, named here so that Spark is
#: not imported); --clusters takes them all.
SPARK_MEASURES = ("jaccard", "cosine", "dice", "containment", "overlap")


class Engine(str, Enum):
    local = "local"
    spark = "spark"


JOIN_THRESHOLD = typer.Option(None, "--threshold", "-t", metavar="T", show_default=False,
                              help="Pairs with similarity >= T, T in (0, 1], read exactly (0.7 is 7/10); for "
                                   "--measure overlap a whole number k of common tokens. Required, except with "
                                   "--top or --neighbors, where it is a floor.")
TOP = typer.Option(None, "--top", metavar="K", show_default=False,
                   help="Only the K pairs of largest similarity, best first, ties by left then right document "
                        "(-t, if given, is a floor). Jaccard, cosine and dice.")
NEIGHBORS = typer.Option(None, "--neighbors", metavar="K", show_default=False,
                         help="Each document's K most similar partners, in input order, best first, ties by the "
                              "partner's order. Without -t, any document sharing a shingle. Jaccard, cosine and "
                              "dice.")
METHOD = typer.Option(Method.exact, "--method", "-m",
                      help="exact: prefix-filter join, every pair. lsh: MinHash + LSH candidates, verified; finds "
                           "a pair of similarity s with probability P(s).")
@app.command("join", cls=PanelCommand, short_help="Print every pair of documents with similarity >= t.")
@input_options
def join_command(
    ctx: typer.Context,
    paths: List[str] = PATHS, threshold: Optional[str] = JOIN_THRESHOLD,
    top: Optional[int] = TOP, neighbors: Optional[int] = NEIGHBORS,
    method: Method = METHOD, measure: Measure = MEASURE,
    against: Optional[str] = typer.Option(None, "--against", metavar="OTHER", rich_help_panel=INPUT,
                                          show_default=False,
                                          help="An R–S join: pairs (a, b) with a from PATH and b from OTHER only, "
                                               "read with the same input options."),
    shingle: Optional[str] = SHINGLE, no_normalize: bool = NO_NORMALIZE, min_shingles: int = MIN_SHINGLES,
    fmt: Format = typer.Option(Format.tsv, "--format", "-f", rich_help_panel=OUTPUT,
                               help="tsv: left, right, similarity. csv, jsonl and parquet add overlap and both set "
                                    "sizes. Carried columns (--lines, --keep-col) follow, as left_NAME, right_NAME."),
    output: Optional[str] = typer.Option(None, "--output", "-o", metavar="FILE", rich_help_panel=OUTPUT,
                                          show_default=False,
                                          help="Write pairs to FILE (atomically) instead of stdout."),
    count: bool = typer.Option(False, "--count", rich_help_panel=OUTPUT,
                               help="Print only the number of pairs (of clusters with --clusters); no --output "
                                    "or --format."),
    clusters: bool = typer.Option(False, "--clusters", rich_help_panel=OUTPUT,
                                  help="Print instead of pairs the groups of documents linked by pairs (connected "
                                       "components of 2 or more), a row a document: id, cluster (numbered from 1, "
                                       "largest first), cluster_size, then carried columns."),
    singletons: bool = typer.Option(False, "--singletons", rich_help_panel=OUTPUT,
                                    help="With --clusters: every other document too, as a cluster of its own."),
    wide: bool = typer.Option(False, "--wide", rich_help_panel=OUTPUT,
                              help="With --clusters: a line a cluster instead, its size then its ids."),
    no_header: bool = NO_HEADER, verbatim: bool = VERBATIM_CELLS,
    quiet: bool = QUIET,
    num_perm: int = NUM_PERM, bands: Optional[int] = BANDS, rows: Optional[int] = ROWS, recall: float = RECALL,
    seed: int = SEED, bits: Optional[int] = BITS, max_bucket: Optional[int] = MAX_BUCKET,
    verify: Verify = typer.Option(Verify.exact, "--verify", rich_help_panel=LSH,
                                  help="exact checks every candidate; estimate keeps the MinHash estimate, marked "
                                       "'~' in TSV and named 'estimate' in CSV/JSON (with --bits 16 or more)."),
    jobs: int = JOBS, memory: str = MEMORY,
    engine: Engine = typer.Option(Engine.local, "--engine", rich_help_panel=SPARK, help="local: this process. spark: Apache Spark (the spark extra, Java 17+); writes a Parquet dataset (-o DIR) or counts."),
    master: Optional[str] = typer.Option(None, "--master", metavar="URL", rich_help_panel=SPARK, help="Spark: the master URL, e.g. local[*] (default), spark://host:7077, yarn. Without it an input under 1 MiB is joined by the local engine."),
    **inputs,
) -> None:
    """Print every pair of documents whose shingle sets have similarity >= THRESHOLD (Jaccard by default).

    Pairs are sorted by left then right document, in input order; left comes
    before right, except for containment (the contained first). The similarity
    is truncated to 6 decimals. --top K prints the K most similar pairs
    instead, --neighbors K each document's K most similar partners.
    """
    check_jobs(jobs)
    ctx.with_resource(verbatim_cells(verbatim))
    budget = check_memory(memory)
    try:
        # Options this run would not read, refused alike on either engine.
        refuse_unused_input_options(ctx)
        refuse_unused_lsh_options(ctx, method is Method.lsh, bands, rows)
        if count:
            refuse(ctx, ("output", "fmt", "no_header", "singletons", "wide", "verbatim"), "with --count, which prints only a number")
        if not clusters:
            refuse(ctx, ("singletons", "wide"), "without --clusters")
        elif wide:
            refuse(ctx, ("singletons", "no_header"), "with --wide, whose lines of varying width are no table")
    except AllPairsError as e:
        fail(e)
    if engine is Engine.spark and against is not None:
        if _spark_against(ctx, paths, against, threshold, method, measure.value, shingle, no_normalize,
                          min_shingles, fmt, output, count, no_header, verbatim, quiet, master, inputs,
                          top=top, neighbors=neighbors, clusters=clusters, verify=verify, jobs=jobs):
            return
        # Small inputs and no --master: joined below by the local engine (its note is printed).
    elif engine is Engine.spark:
        local_only = [flag for flag, used in (("--measure " + measure.value, measure.value not in SPARK_MEASURES),
                                              ("--top", top is not None), ("--neighbors", neighbors is not None),
                                              ("--wide", clusters and wide), ("--no-header", no_header),
                                              ("--verbatim-cells", verbatim),
                                              ("--hidden", inputs["hidden"]),
                                              ("--no-ignore", inputs["no_ignore"]), ("--csv", inputs["csv"]),
                                              ("--tsv", inputs["tsv"]),
                                              ("--delimiter", inputs["delimiter"] is not None),
                                              ("--keep-col with --clusters", clusters and bool(inputs["keep_col"])),
                                              ("--keep-all with --clusters", clusters and inputs["keep_all"]),
                                              ("several --text-col", len(inputs["text_col"]) > 1))
                      if used]
        if local_only:
            raise typer.BadParameter(f"{', '.join(local_only)} not available with --engine spark (threshold joins of "
                                     "one PATH, or --against OTHER; hidden "
                                     "and ignored files left out as by default)")
        if len(paths) != 1:
            raise typer.BadParameter(f"--engine spark reads one PATH, got {len(paths)}")
        if threshold is None:
            raise typer.BadParameter("--engine spark needs a threshold (-t T)")
        # The columns of --parquet, the fields of --jsonl: one option each here, two parameters there.
        id_col, text_col = inputs["id_col"], (inputs["text_col"] or [None])[0]
        pq = inputs["parquet"]
        return _spark(paths[0], threshold, inputs["lines"], inputs["sets"], inputs["jsonl"], pq, shingle,
                      no_normalize, inputs["include"], inputs["exclude"], inputs["min_bytes"], min_shingles,
                      inputs["encoding"], id_col or "id", text_col or "text", id_col if pq else None,
                      text_col if pq else None, inputs["tokens_col"], method, num_perm, bands, rows, recall, seed,
                      bits, max_bucket, verify, fmt, output, count, jobs, quiet, master, measure.value, clusters,
                      singletons, keep=list(inputs["keep_col"]), keep_all=inputs["keep_all"])
    if master:
        raise typer.BadParameter("--master goes with --engine spark")
    bar = Bar(not quiet)
    try:
        if threshold is None and top is None and neighbors is None:
            raise UsageError(f"{MISSING_THRESHOLD}; or give --top K or --neighbors K")
        if count and (top is not None or neighbors is not None):
            raise UsageError(f"--count goes with a threshold join; --{'top' if top is not None else 'neighbors'} "
                             "prints the pairs themselves")
        if not count:
            fmt = output_format(ctx, fmt, output)
        check_table_output(ctx, fmt, output, wide=wide)
        if against is not None and os.fsencode(against) == b"-" and any(os.fsencode(p) == b"-" for p in paths):
            raise UsageError("'-' (stdin) is on both sides of --against, and stdin can be read once; "
                             "give one side as a file")
        # Refuse an output that cannot be written before the work, not after.
        refuse_output_of_input(ctx, None if count else output)
        plan = check_output(None if count else output)
        try:
            corpus = read_input(ctx)
            other = read_input(ctx, against) if against is not None else None
            if other is None:
                refuse_one_document(corpus)
            res = run_join(corpus, threshold, method=method.value, shingle=shingle, normalize=not no_normalize,
                           min_shingles=min_shingles, jobs=jobs or None, num_perm=num_perm, bands=bands,
                           rows=rows, recall=recall, seed=seed, bits=bits, max_bucket=max_bucket,
                           verify=verify.value, measure=measure.value, against=other, clusters=clusters,
                           progress=bar, top=top, neighbors=neighbors, memory=budget,
                           # Clusters need no pairs kept; pairs past --memory go to runs beside -o.
                           count=(count or clusters) and top is None and neighbors is None,
                           spill=spill_directory(plan) if not (count or clusters) else None)
        finally:
            bar.close()
        write_join(res, output, plan, count=count, fmt=fmt.value, quiet=quiet, bar=bar, clusters=clusters,
                   wide=wide, singletons=singletons, no_header=no_header)
    except AllPairsError as e:
        fail(e)


def _spark(path, threshold, lines, sets, jsonl, parquet, shingle, no_normalize, include, exclude, min_bytes,
           min_shingles, encoding, id_field, text_field, id_col, text_col, tokens_col, method, num_perm, bands, rows,
           recall, seed, bits, max_bucket, verify, fmt, output, count, jobs, quiet, master, measure, clusters=False,
           singletons=False, keep=(), keep_all=False) -> None:
    """``join --engine spark``: the same join on Spark, pairs to a Parquet dataset (imports Spark only here)."""
    kinds = [k for k, on in (("lines", lines), ("sets", sets), ("jsonl", jsonl), ("parquet", parquet)) if on]
    if len(kinds) > 1:
        raise typer.BadParameter(f"choose one of --lines, --sets, --jsonl, --parquet (got {', '.join('--' + k for k in kinds)})")
    unsupported = [flag for flag, used in (("--format", fmt is not Format.tsv), ("--verify estimate", verify is Verify.estimate),
                                           ("--jobs", jobs != 0), ("--encoding", encoding.lower() not in ("utf-8", "utf8")))
                   if used]
    if unsupported:
        raise typer.BadParameter(f"{', '.join(unsupported)} do not apply with --engine spark (it writes Parquet, "
                                 "verifies exactly, reads UTF-8 and runs as many tasks as Spark gives it)")
    if clusters:
        return _spark_clusters(path, threshold, kinds[0] if kinds else "directory", shingle, no_normalize, include,
                               exclude, min_bytes, min_shingles, id_field, text_field, id_col, text_col, tokens_col,
                               output, count, quiet, master, measure, singletons)
    try:
        from ..engines.spark.run import run as spark_run

        res = spark_run(path, threshold, kind=kinds[0] if kinds else "directory",
                        output=None if output is None else str(output), count=count, master=master,
                        include=include, exclude=exclude, min_bytes=min_bytes, id_field=id_field,
                        text_field=text_field, id_col=id_col, text_col=text_col, tokens_col=tokens_col,
                        keep=keep, keep_all=keep_all, shingle=shingle, normalize=not no_normalize,
                        min_shingles=min_shingles, method=method.value,
                        num_perm=num_perm, bands=bands, rows=rows, recall=recall, seed=seed, bits=bits,
                        max_bucket=max_bucket, measure=measure, quiet=quiet)
    except AllPairsError as e:
        fail(e)
    if count:
        typer.echo(res.pairs)
    if quiet:
        return
    skipped = sum(res.skipped.values())
    reasons = f" ({', '.join(f'{why}: {n:,}' for why, n in sorted(res.skipped.items()))})" if skipped else ""
    engine = "local engine" if res.master is None else f"spark {res.master}"
    err.print(f"allpairs: {engine}: {count_of(res.documents, 'document')}, {skipped:,} skipped{reasons}, "
              f"{res.joined:,} joined; {res.shingle} shingles; {count_of(res.distinct_sets, 'distinct set')}")
    cand = f"{count_of(res.candidates, 'candidate')}, " if res.candidates is not None else ""
    where = f" written to {res.output}" if res.output else ""
    err.print(f"allpairs: {res.method} join at t = {res.threshold}: {cand}{count_of(res.pairs, 'pair')}{where}")
    for note in res.notes:
        err.print(f"allpairs: {note}")
    err.print("allpairs: time " + ", ".join(f"{k} {v:.2f}s" for k, v in res.seconds.items()))


def _spark_clusters(path, threshold, kind, shingle, no_normalize, include, exclude, min_bytes, min_shingles, id_field,
                    text_field, id_col, text_col, tokens_col, output, count, quiet, master, measure,
                    singletons) -> None:
    """``join --clusters --engine spark``: the cluster table (id, cluster, cluster_size) as a Parquet dataset."""
    try:
        from ..engines.spark.run_dedup import run_dedup

        res = run_dedup(path, threshold, kind=kind, output=None if output is None else str(output), count=count,
                        master=master, include=include, exclude=exclude, min_bytes=min_bytes, id_field=id_field,
                        text_field=text_field, id_col=id_col, text_col=text_col, tokens_col=tokens_col,
                        shingle=shingle, measure=measure, normalize=not no_normalize, min_shingles=min_shingles,
                        quiet=quiet, clusters=True, singletons=singletons)
    except AllPairsError as e:
        fail(e)
    if count:
        typer.echo(res.clusters)
    if quiet:
        return
    where = f"; {res.rows:,} rows written to {res.output}" if res.output else ""
    err.print(f"allpairs: spark {res.master}: {count_of(res.documents, 'document')}; {res.shingle} shingles; "
              f"{count_of(res.clusters, 'cluster')} at {measure} >= {res.threshold}, the largest of "
              f"{res.largest:,}; {count_of(res.rounds, 'large-star/small-star round')}{where}")
    err.print("allpairs: time " + ", ".join(f"{k} {v:.2f}s" for k, v in res.seconds.items()))


def _spark_against(ctx, paths, against, threshold, method, measure, shingle, no_normalize, min_shingles, fmt, output,
                   count, no_header, verbatim, quiet, master, inputs, *, top, neighbors, clusters, verify,
                   jobs) -> bool:
    """``join --against OTHER --engine spark``: the R–S join on Spark, written as the local command writes it
    (the same bytes, in any format, to stdout or -o FILE written beside and renamed at the end). False,
    after a note on stderr, when no --master is given and both inputs are small: the caller joins them
    with the local engine."""
    local_only = [flag for flag, used in (("--method lsh", method is Method.lsh), ("--top", top is not None),
                                          ("--neighbors", neighbors is not None), ("--clusters", clusters),
                                          ("--verify estimate", verify is Verify.estimate), ("--jobs", jobs != 0),
                                          ("--hidden", inputs["hidden"]), ("--no-ignore", inputs["no_ignore"]),
                                          ("--csv", inputs["csv"]), ("--tsv", inputs["tsv"]),
                                          ("--delimiter", inputs["delimiter"] is not None),
                                          ("--keep-all", inputs["keep_all"]),
                                          ("several --text-col", len(inputs["text_col"]) > 1),
                                          ("--encoding", inputs["encoding"].lower() not in ("utf-8", "utf8")))
                  if used]
    if local_only:
        raise typer.BadParameter(f"{', '.join(local_only)} not available with --against --engine spark (an "
                                 "exact threshold join of UTF-8 files, hidden and ignored files left out)")
    kind = spark_input_kind(paths, inputs)
    if master is None:
        from ..engines.spark.run import LOCAL_BELOW
        from ..engines.spark.run_against import small_inputs

        size = small_inputs(paths[0], against, kind)
        if size is not None:
            if not quiet:
                err.print(f"allpairs: {paths[0]} and {against} hold {size:,} bytes (under {LOCAL_BELOW:,}) and no "
                          "--master was given: joined by the local engine, not Spark; give --master local[*] to "
                          "run Spark")
            return False
    ctx.with_resource(verbatim_cells(verbatim))
    try:
        if threshold is None:
            raise UsageError(MISSING_THRESHOLD)
        refuse_unused_input_options(ctx)
        if count:
            refuse(ctx, ("output", "fmt", "no_header", "verbatim"), "with --count, which prints only a number")
        else:
            fmt = output_format(ctx, fmt, output)
        check_table_output(ctx, fmt, output)
        refuse_output_of_input(ctx, None if count else output)
        plan = check_output(None if count else output)
        from ..engines.spark.run_against import run_against

        pq = inputs["parquet"]
        id_col, text_col = inputs["id_col"], (inputs["text_col"] or [None])[0]
        options = dict(kind=kind, master=master, include=inputs["include"],
                       exclude=inputs["exclude"], min_bytes=inputs["min_bytes"], id_field=id_col or "id",
                       text_field=text_col or "text", id_col=id_col if pq else None,
                       text_col=text_col if pq else None, tokens_col=inputs["tokens_col"],
                       keep=list(inputs["keep_col"]), shingle=shingle, measure=measure, normalize=not no_normalize,
                       min_shingles=min_shingles, quiet=quiet)
        if count:
            res = run_against(paths[0], against, threshold, count=True, **options)
            typer.echo(res.pairs)
        else:
            with open_output(output, plan) as out:
                res = run_against(paths[0], against, threshold, out=out, fmt=fmt.value, header=not no_header,
                                  **options)
    except AllPairsError as e:
        fail(e)
    if quiet:
        return True
    skipped = sum(res.skipped.values())
    reasons = f" ({', '.join(f'{why}: {n:,}' for why, n in sorted(res.skipped.items()))})" if skipped else ""
    left, right = res.documents
    where = f" written to {output}" if output is not None and not count else ""
    files = f", {skipped:,} files skipped{reasons}" if skipped else ""
    err.print(f"allpairs: spark {res.master}: {count_of(left, 'document')} against {right:,}{files}; "
              f"{res.shingle} shingles (documents without one are left out)")
    at = f"k = {res.threshold.split('.')[0]}" if measure == "overlap" else f"t = {res.threshold}"
    err.print(f"allpairs: exact {measure} join at {at}: {count_of(res.pairs, 'pair')}{where}")
    err.print("allpairs: time " + ", ".join(f"{k} {v:.2f}s" for k, v in res.seconds.items()))
    return True
