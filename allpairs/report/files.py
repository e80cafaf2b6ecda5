"""The files of ``allpairs compare``: the pairs LSH missed (``--missed``) and the pictures (``--plot``).

They are checked together before the comparison (:func:`check_files`) and
written together after it (:func:`write_files`), through
:mod:`allpairs.output.files` as every allpairs output is: temporary files
beside the targets, renamed into place at once, so that a failure or a signal
leaves every old file as it was and no partial one. The pictures are rendered
in memory first; matplotlib is imported only when there is a picture.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UsageError
from ..pairs import PairWriter
from ..output.files import OutputPlan, check_output, format_of_name, open_outputs

__all__ = ["MISSED_FORMATS", "FilePlans", "check_files", "missed_format", "write_files", "write_missed"]

#: The formats of a ``--missed`` file, named by its suffix as ``join -o`` names them; any other suffix (or
#: none) is TSV, as ``join`` writes.
MISSED_FORMATS = ("tsv", "csv", "jsonl")


def missed_format(path: str | os.PathLike) -> str:
    """``tsv``, ``csv`` or ``jsonl`` as the file's name ends (:func:`allpairs.output.files.format_of_name`),
    else ``tsv``.

    Raises
    ------
    UsageError
        For a ``.parquet`` name, or a compressed file's (``.gz``): a text file under either would mislead.
    """
    fmt = format_of_name(path) or "tsv"
    if fmt not in MISSED_FORMATS:
        raise UsageError(f"--missed {os.fsdecode(path)}: the missed pairs are written as TSV, CSV or JSON Lines "
                         "(.tsv, .csv, .jsonl), not Parquet")
    return fmt


@dataclass
class FilePlans:
    """What :func:`check_files` found writable: the targets and their plans, in writing order."""

    missed: str | os.PathLike | None = None
    plot: str | os.PathLike | None = None
    plans: list[OutputPlan | None] = field(default_factory=list)


def check_files(missed: str | os.PathLike | None = None, plot: str | os.PathLike | None = None) -> FilePlans:
    """Refuse now, before any work, what :func:`write_files` would refuse after it.

    ``missed`` may not be stdout ('-': stdout carries the table) nor one of
    the pictures; for ``plot`` see :func:`allpairs.report.plot.check_plot_path`
    (a suffix other than .png or .svg and a missing matplotlib are usage
    errors). A directory, a missing directory or a read-only file is an
    :class:`~allpairs.errors.OutputError`.
    """
    plans: list[OutputPlan | None] = []
    if missed is not None:
        if os.fsencode(missed) in (b"", b"-"):
            raise UsageError("--missed needs a file name: standard output carries the comparison")
        missed_format(missed)  # a name of another format is refused now, not after the comparison
        plans.append(check_output(missed))
    if plot is not None:
        from .plot import check_plot_path

        pictures = check_plot_path(plot)
        same = os.path.realpath(plans[0].path) if missed is not None and not plans[0].special else None
        if same is not None and any(os.path.realpath(p.path) == same for p in pictures):
            raise UsageError(f"--missed {os.fsdecode(missed)} is also a picture of --plot; give another name")
        plans += pictures
    return FilePlans(missed, plot, plans)


def write_missed(comparison, out, fmt: str = "tsv") -> int:
    """Write the pairs of documents with J >= t that LSH missed to the binary stream ``out``, as
    ``allpairs join`` writes pairs (ids, exact similarity, carried columns); return how many."""
    writer = PairWriter(comparison.ids, fmt, columns=comparison.columns)
    return writer.write(comparison.missed_pairs, out)


def write_files(comparison, files: FilePlans) -> list[Path]:
    """Write the files :func:`check_files` planned, all together; return their paths.

    The pictures are rendered before any file is opened, so a drawing failure
    touches no file.
    """
    pictures = []
    if files.plot is not None:
        from .plot import render_comparison

        pictures = render_comparison(comparison, files.plot)
    targets = ([files.missed] if files.missed is not None else []) + [path for path, _ in pictures]
    with open_outputs(targets, files.plans) as sinks:
        if files.missed is not None:
            write_missed(comparison, sinks[0], missed_format(files.missed))
        for sink, (_, data) in zip(sinks[len(sinks) - len(pictures):], pictures):
            sink.write(data)
    return [Path(os.fsdecode(t)) for t in targets]
