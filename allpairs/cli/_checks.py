"""The command line's checks of what it was given that need no typer: shared by the typer commands
(:mod:`._options` names them there) and the fast path of a plain join (:mod:`._fast`), so that both refuse
the same input with the same words. Each raises :class:`~allpairs.errors.UsageError` (one line, exit 2)."""
from __future__ import annotations

import os
import stat
import sys

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
    writing would replace. A '-' read is the file on stdin (``< FILE``), and stdout the file it is
    redirected to (``>> FILE``), when they are regular files: as ``cat`` refuses ``cat x >> x``."""
    for out in outputs:
        stdout = out is None or os.fsencode(out) == b"-"
        out_st = _standard_file(sys.stdout, 1) if stdout else _stat(out)
        if out_st is None:
            continue
        for path in read:
            stdin = os.fsencode(path) == b"-"
            st = _standard_file(sys.stdin, 0) if stdin else _stat(path)
            if st is None or (st.st_dev, st.st_ino) != (out_st.st_dev, out_st.st_ino):
                continue
            if stdout:
                what = "the file on standard input" if stdin else f"{os.fspath(path)}, an input"
                raise UsageError(f"standard output is redirected to {what}; writing there would change what is "
                                 "read: redirect it to another file")
            also = (" (standard input)" if stdin else
                    "" if os.fspath(out) == os.fspath(path) else f" ({os.fspath(path)})")
            raise UsageError(f"{os.fspath(out)} is also an input{also}; writing it would replace what is "
                             "read: give the output another name")


def _stat(path) -> os.stat_result | None:
    try:
        return os.stat(path)
    except (OSError, ValueError):  # it does not exist (yet): not the same file as any
        return None


def _standard_file(stream, fd: int) -> os.stat_result | None:
    """The regular file on standard stream ``fd`` (a redirection), None for a pipe, a terminal, or a
    stream a test runner has put in its place."""
    try:
        if getattr(stream, "buffer", stream).fileno() != fd:
            return None
        st = os.fstat(fd)
    except (OSError, ValueError, AttributeError):
        return None
    return st if stat.S_ISREG(st.st_mode) else None


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
