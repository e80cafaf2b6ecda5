"""``allpairs dedup``: streaming exact near-duplicate removal; the kept ids, or each removed one with its kept twin."""
from __future__ import annotations

from typing import List, Optional

import typer

from ..errors import AllPairsError
from ..pairs.output import check_output, open_output
from ._app import Bar, _mib as mib, app, err, fail, warn_skipped
from ._options import (ENCODING, EXCLUDE, HIDDEN, ID_FIELD, INCLUDE, JSONL, LINES, MIN_BYTES, MIN_SHINGLES, NO_IGNORE,
                       NO_NORMALIZE, OUTPUT, PATHS, QUIET, SETS, SHINGLE, TEXT_FIELD, Format, PanelCommand, read_input,
                       refuse, refuse_unused_input_options)
from .index import MEASURE


@app.command("dedup", cls=PanelCommand,
             short_help="Keep each document only if no kept one reaches the threshold with it.")
def dedup_command(
    ctx: typer.Context,
    paths: List[str] = PATHS,
    threshold: str = typer.Option(..., "--threshold", "-t", metavar="T", help="A document is removed when a kept one reaches this similarity with it. Read exactly (0.8 is 4/5)."),
    measure: str = MEASURE, lines: bool = LINES, sets: bool = SETS, jsonl: bool = JSONL,
    shingle: Optional[str] = SHINGLE, no_normalize: bool = NO_NORMALIZE, include: List[str] = INCLUDE,
    exclude: List[str] = EXCLUDE, hidden: bool = HIDDEN, no_ignore: bool = NO_IGNORE, min_bytes: int = MIN_BYTES,
    min_shingles: int = MIN_SHINGLES, encoding: str = ENCODING, id_field: str = ID_FIELD, text_field: str = TEXT_FIELD,
    removed: bool = typer.Option(False, "--removed", rich_help_panel=OUTPUT, help="Write each removed document instead: its id, the id of the kept document it duplicates (the most similar, the earliest among equals), the similarity."),
    fmt: Format = typer.Option(Format.tsv, "--format", "-f", rich_help_panel=OUTPUT, help="With --removed: tsv, or csv/jsonl with the overlap and both sizes."),
    output: Optional[str] = typer.Option(None, "--output", "-o", metavar="FILE", rich_help_panel=OUTPUT, show_default=False, help="Write to FILE (atomically) instead of stdout."),
    count: bool = typer.Option(False, "--count", rich_help_panel=OUTPUT, help="Print only the number of documents kept."),
    quiet: bool = QUIET,
) -> None:
    """Read the documents in order and keep each one only if no kept document reaches THRESHOLD
    with it; print the kept ids, one a line.

    Exact: every document is compared with every kept one it could reach, by
    the prefix-filter index. Documents with no shingle are skipped (neither
    kept nor removed) and counted on stderr.
    """
    from ..index import dedup  # here, not at the top: only this command needs it
    from ..index.output import write_ids, write_rows

    bar = Bar(not quiet)
    try:
        refuse_unused_input_options(ctx, lines, sets, jsonl)
        if count:
            refuse(ctx, ("output", "fmt", "removed"), "with --count")
        elif not removed:
            refuse(ctx, ("fmt",), "without --removed (the kept ids are one a line)")
        plan = check_output(None if count else output)  # refuse an output that cannot be written before the work
        try:
            corpus = read_input(paths, lines, sets, jsonl, include, exclude, min_bytes, encoding, id_field, text_field,
                                hidden, no_ignore)
            res = dedup(corpus, threshold, measure=measure, shingle=shingle, normalize=not no_normalize,
                        min_shingles=min_shingles, progress=bar)
        finally:
            bar.close()
        ids = res.ids
        if count:
            typer.echo(len(res.kept))
        else:
            with open_output(output, plan) as out:
                if removed:
                    write_rows(out, fmt.value, ("removed", "kept"), [ids[d] for d in res.removed.tolist()],
                               [ids[d] for d in res.duplicate_of.tolist()], res.rule.row, res.overlap.tolist(),
                               res.removed_size.tolist(), res.kept_size.tolist())
                else:
                    write_ids(out, [ids[d] for d in res.kept.tolist()])
        if not quiet:
            s = res.stats
            warn_skipped(s)
            dropped = f" ({s.dropped:,} more dropped by --min-bytes/--min-shingles)" if s.dropped else ""
            err.print(f"allpairs: {s.documents:,} documents, {len(s.skipped):,} skipped{dropped}; {res.shingle} "
                      f"shingles; {len(res.kept):,} kept, {len(res.removed):,} removed at {res.rule}")
            err.print("allpairs: time " + ", ".join(f"{k} {v:.2f}s" for k, v in s.seconds.items())
                      + f"; peak memory {mib(s.peak_memory)}")
    except AllPairsError as e:
        fail(e)
