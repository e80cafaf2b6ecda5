"""``allpairs sets``: each document's shingle keys as one ``--sets`` line, for other tools on the same work."""

import os
from typing import List, Optional

import typer

from .._plural import count
from ..errors import AllPairsError, UsageError
from ..pipeline import Stats
from ..output.files import check_output, open_output
from ._app import Bar, app, err, fail, warn_skipped
from ._options import NO_NORMALIZE, OUTPUT, PATHS, QUIET, SHINGLE, PanelCommand, input_options, read_input, \
    refuse, refuse_output_of_input, refuse_unused_input_options
from ._checks import format_named


@app.command("sets", cls=PanelCommand)
@input_options
def sets_command(
    ctx: typer.Context,
    paths: List[str] = PATHS, shingle: Optional[str] = SHINGLE, no_normalize: bool = NO_NORMALIZE,
    output: Optional[str] = typer.Option(None, "--output", "-o", metavar="FILE", rich_help_panel=OUTPUT,
                                          show_default=False,
                                          help="Write the sets to FILE (atomically) instead of stdout."),
    ids: Optional[str] = typer.Option(None, "--ids", metavar="FILE", rich_help_panel=OUTPUT, show_default=False,
                                      help="Write beside them the id of each line's document, line for line."),
    quiet: bool = QUIET,
    **inputs,
) -> None:
    """Write each document's distinct shingle keys as one line of the --sets format.

    Line i is the i-th document with a shingle (paths sorted, or input order);
    keys are 16 hex digits, ascending, space-separated; --ids FILE names the
    document of each line. 'allpairs join --sets' on the file finds the same
    pairs as 'allpairs join' on the same paths.
    """
    from ..pipeline.sets_file import write_sets  # here, not at the top: only this command needs it

    bar = Bar(not quiet)
    try:
        refuse_unused_input_options(ctx)
        refuse(ctx, ("keep_col", "keep_all"), "in a sets file, which holds token sets only")
        # By the file reached (realpath): through a symbolic link the ids replaced the sets, or the sets the ids.
        if ids is not None and output is not None and os.path.realpath(ids) == os.path.realpath(output):
            raise UsageError(f"--ids {ids} is the --output file too; give the ids a file of their own")
        refuse_output_of_input(ctx, output, *([] if ids is None else [ids]))  # None: stdout
        for name in (output, ids):
            format_named(name)  # a compressed file's name (.gz) is refused: the file would be plain text
        plan = check_output(output)  # refuse an output that cannot be written before the work
        ids_plan = check_output(ids) if ids is not None else None
        try:
            corpus = read_input(ctx)
            with open_output(output, plan) as out:
                if ids is None:
                    res = write_sets(corpus, out, shingle=shingle, normalize=not no_normalize, progress=bar)
                else:
                    with open_output(ids, ids_plan) as ids_out:
                        res = write_sets(corpus, out, shingle=shingle, normalize=not no_normalize, progress=bar,
                                         ids=ids_out)
        finally:
            bar.close()
        if not quiet:
            warn_skipped(Stats(skipped=list(corpus.skipped) + res.skipped, input_kind=corpus.kind))
            err.print(f"allpairs: {count(len(corpus) + len(corpus.skipped), 'document')}, "
                      f"{len(corpus.skipped) + len(res.skipped):,} skipped; wrote {count(res.documents, 'set')} of "
                      f"{count(res.keys, 'key')} ({res.shingle}), {count(res.bytes, 'byte')} in {res.seconds:.2f}s"
                      + (f"; ids in {ids}" if ids is not None else ""))
            for note in res.notes:
                err.print(f"allpairs: {note}")
    except AllPairsError as e:
        fail(e)
