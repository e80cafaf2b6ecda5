"""``allpairs sets``: each document's shingle keys as one ``--sets`` line, for other tools on the same work."""
from __future__ import annotations

from typing import List, Optional

import typer

from ..errors import AllPairsError
from ..join import Stats
from ..pairs.output import check_output, open_output
from ._app import Bar, app, err, fail, warn_skipped
from ._options import (ENCODING, EXCLUDE, HIDDEN, ID_FIELD, INCLUDE, JSONL, LINES, MIN_BYTES, NO_IGNORE, NO_NORMALIZE,
                       OUTPUT, PATHS, QUIET, SETS, SHINGLE, TEXT_FIELD, PanelCommand, read_input,
                       refuse_unused_input_options)


@app.command("sets", cls=PanelCommand)
def sets_command(
    ctx: typer.Context,
    paths: List[str] = PATHS, lines: bool = LINES, sets: bool = SETS, jsonl: bool = JSONL,
    shingle: Optional[str] = SHINGLE, no_normalize: bool = NO_NORMALIZE, include: List[str] = INCLUDE,
    exclude: List[str] = EXCLUDE, hidden: bool = HIDDEN, no_ignore: bool = NO_IGNORE, min_bytes: int = MIN_BYTES, encoding: str = ENCODING, id_field: str = ID_FIELD,
    text_field: str = TEXT_FIELD,
    output: Optional[str] = typer.Option(None, "--output", "-o", metavar="FILE", rich_help_panel=OUTPUT,
                                          show_default=False,
                                          help="Write the sets to FILE (atomically) instead of stdout."),
    quiet: bool = QUIET,
) -> None:
    """Write each document's distinct shingle keys as one line of the --sets format.

    Line i is document i (paths sorted, or input order); keys are 16 hex digits,
    ascending, space-separated; a document without a shingle is an empty line.
    'allpairs join --sets' on the file finds the same pairs as 'allpairs join'
    on the same paths, and other tools (e.g. a C set-similarity join) can run on it.
    """
    from ..setsfile import write_sets  # here, not at the top: only this command needs it

    bar = Bar(not quiet)
    try:
        refuse_unused_input_options(ctx, lines, sets, jsonl)
        plan = check_output(output)  # refuse an output that cannot be written before the work
        try:
            corpus = read_input(paths, lines, sets, jsonl, include, exclude, min_bytes, encoding, id_field, text_field,
                                hidden, no_ignore)
            with open_output(output, plan) as out:
                res = write_sets(corpus, out, shingle=shingle, normalize=not no_normalize, progress=bar)
        finally:
            bar.close()
        if not quiet:
            warn_skipped(Stats(skipped=list(corpus.skipped)))
            err.print(f"allpairs: {res.documents:,} documents, {res.keys:,} keys ({res.shingle}); "
                      f"wrote {res.bytes:,} bytes in {res.seconds:.2f}s")
    except AllPairsError as e:
        fail(e)

