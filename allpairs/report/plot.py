"""Pictures of a :class:`~allpairs.report.Comparison`: the S-curve and the candidates as chords.

:func:`plot_comparison` draws both (``allpairs compare --plot FILE``):

- :func:`plot_scurve`: the LSH S-curve ``P(s) = 1 - (1 - s^r)^b`` (Leskovec,
  Rajaraman, Ullman, *Mining of Massive Datasets*, ch. 3.4.2) with the observed
  recall of every similarity bin as a point, so one sees whether the banding
  found what the curve promised;
- :func:`plot_chords`: the documents on a circle in input order, one chord per
  LSH candidate, coloured by true similarity, and a dashed red chord per pair
  LSH missed, so one sees where in the tree the candidates lie, how many were
  worth checking, and what was lost. Where such a circle cannot be read
  (thousands of documents with no directories to group them, such as the lines
  of a password list) the largest clusters of true pairs are drawn instead,
  each document labelled.

matplotlib is imported inside the functions (``import allpairs`` stays fast and
needs no matplotlib) and used through :class:`matplotlib.figure.Figure`
objects drawn by the Agg and SVG renderers, never through pyplot, so drawing
changes no global state of the caller's matplotlib. Both pictures are rendered
in memory, then written as every allpairs output is (:mod:`allpairs.output.files`):
temporary files beside the targets, renamed into place together (a failure or
a signal leaves both old pictures or both new, never a half-written one), a
link's target replaced, a device or FIFO written through, a mode kept, a
read-only file refused.
"""
from __future__ import annotations

import os
from pathlib import Path

from ..errors import UsageError
from ..output.files import OutputPlan, check_output
from .chords_figure import MAX_CHORDS, chords_figure, chords_readable
from .clusters_figure import MAX_CLUSTERS, clusters_figure
from .draw import FORMATS, chords_path, figure_class, picture_format, render, write_figures, write_rendered
from .scurve_figure import plot_scurve, scurve_figure


__all__ = ["FORMATS", "MAX_CHORDS", "MAX_CLUSTERS", "check_plot_path", "chords_path", "plot_chords", "plot_comparison",
           "plot_scurve", "render_comparison", "write_rendered"]


def check_plot_path(path: str | os.PathLike) -> list[OutputPlan]:
    """Raise now what :func:`plot_comparison` would raise about ``path`` after the work is done.

    For a caller (such as ``allpairs compare --plot``) that wants a bad file
    name, or a missing matplotlib, refused before a long comparison rather
    than after it: an unknown suffix or no matplotlib is a :class:`UsageError`
    (the message names the ``plot`` extra); a directory, a missing or
    unwritable directory, a read-only file an
    :class:`~allpairs.errors.OutputError`. Returns the plans of both files.
    """
    picture_format(path)
    figure_class()
    return [check_output(p, role="picture") for p in (path, chords_path(path))]


def _candidates_figure(c, max_chords: int):
    """The chord circle where it can be read, else the largest clusters (see :func:`chords_readable`)."""
    return chords_figure(c, max_chords) if chords_readable(c) else clusters_figure(c)


def plot_chords(comparison, path: str | os.PathLike, *, max_chords: int = MAX_CHORDS) -> Path:
    """Draw the documents on a circle and a chord for each LSH candidate, coloured by true similarity.

    Documents sit clockwise from the top in input order (for a directory,
    sorted relative paths, so each directory is one arc). Every candidate pair
    of distinct sets (``candidate_left_doc`` ↔ ``candidate_right_doc``: the
    first document of each set) is a curved chord coloured by its true Jaccard
    similarity (colour bar beside, the threshold marked on it); candidates
    with ``J >= t`` are drawn thicker and on top, the others thin and
    translucent. Only the ``max_chords`` most similar candidates are drawn and
    the subtitle says how many were left out. When the ids are paths falling
    into at most :data:`MAX_GROUPS` runs of one top-level directory, each run
    is marked by an arc outside the circle, labelled with its name and size
    when long enough to read.

    Parameters
    ----------
    comparison : allpairs.report.Comparison
    path : str or PathLike
        Ends in ``.png`` or ``.svg``, which chooses the format.
    max_chords : int, default :data:`MAX_CHORDS`

    Returns
    -------
    Path
        The file written.

    Raises
    ------
    UsageError, OutputError
        As :func:`plot_scurve`.
    """
    fmt = picture_format(path)
    if isinstance(max_chords, bool) or not isinstance(max_chords, int) or max_chords < 0:
        raise UsageError(f"max_chords must be a whole number of 0 or more, got {max_chords!r}")
    return write_figures([(_candidates_figure(comparison, max_chords), Path(path), fmt)])[0]


def plot_comparison(comparison, path: str | os.PathLike) -> list[Path]:
    """Draw both pictures of a comparison: the S-curve to ``path``, the chords beside it.

    The S-curve (:func:`plot_scurve`) goes to ``path`` itself and the chord
    picture (:func:`plot_chords`) to ``path`` with ``-chords`` before the
    suffix, in the same format: ``out.png`` gives ``out.png`` and
    ``out-chords.png``. Both are rendered before either is renamed into
    place, so a failure leaves neither.

    Parameters
    ----------
    comparison : allpairs.report.Comparison
    path : str or PathLike
        Ends in ``.png`` or ``.svg``.

    Returns
    -------
    list of Path
        ``[path, chords path]``, the files written.

    Raises
    ------
    UsageError, OutputError
        As :func:`plot_scurve`, for either file.
    """
    plans = check_plot_path(path)
    return write_rendered(render_comparison(comparison, path), plans)


def render_comparison(comparison, path: str | os.PathLike) -> list[tuple[Path, memoryview]]:
    """Both pictures of :func:`plot_comparison`, rendered in memory: ``[(path, data), (chords path, data)]``.

    For a caller that writes them together with other files
    (``allpairs compare --plot FILE --missed FILE``).
    """
    fmt = picture_format(path)
    target = Path(path)
    return render([(scurve_figure(comparison), target, fmt),
                    (_candidates_figure(comparison, MAX_CHORDS), chords_path(target), fmt)])
