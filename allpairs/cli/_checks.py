"""The command line's checks of what it was given that need no typer: shared by the typer commands
(:mod:`._options` names them there) and the fast path of a plain join (:mod:`._fast`), so that both refuse
the same input with the same words. Each raises :class:`~allpairs.errors.UsageError` (one line, exit 2)."""
from __future__ import annotations

import os

from .._kernels.jit import MAX_JOBS
from ..corpus import Corpus
from ..corpus.read import one_document_hint
from ..errors import UsageError
from ..output.files import format_of_name

#: --memory's default: what the pairs may take before they are spilled.
MEMORY = "256M"


def refuse_jobs(jobs: int) -> None:
    """Refuse a thread count outside 0..MAX_JOBS, before any input is read."""
    if not 0 <= jobs <= MAX_JOBS:
        raise UsageError(f"--jobs {jobs:,} is outside 0 to {MAX_JOBS}; give 0 (one thread per core) "
                         f"or 1 to {MAX_JOBS} threads")


def refuse_output_of_input(outputs, read) -> None:
    """Refuse, before any work, a file to be written (``outputs``; None and '-' are stdout) that is one of
    the files ``read`` (the same file by device and inode: through a symbolic or hard link too), which
    writing would replace."""
    for out in outputs:
        if out is None or os.fsencode(out) == b"-":
            continue
        for path in read:
            if os.fsencode(path) == b"-":
                continue
            try:
                same = os.path.samefile(out, path)
            except OSError:  # one of them does not exist (yet): not the same file
                continue
            if same:
                also = "" if os.fspath(out) == os.fspath(path) else f" ({os.fspath(path)})"
                raise UsageError(f"{os.fspath(out)} is also an input{also}; writing it would replace what is "
                                 "read: give the output another name")


def format_named(output) -> str | None:
    """The format -o's extension names (``.tsv .csv .jsonl .parquet``, and kin), if any; None for stdout.
    A compressed file's ending (``.gz``) is a usage error: see :func:`allpairs.output.files.format_of_name`."""
    if output is None or str(output) == "-":
        return None
    return format_of_name(output)


def refuse_one_document(corpus: Corpus) -> None:
    """A self-join or dedup of one file read whole finds nothing: say what the file looks like instead."""
    hint = one_document_hint(corpus)
    if hint is not None:
        raise UsageError(hint)


def spill_directory(plan) -> str | bool:
    """Where pairs past --memory are spilled: beside the output file, else in TMPDIR (stdout, a device)."""
    if plan is None or plan.special:
        return True
    return os.fsdecode(os.path.dirname(plan.path) or b".")
