"""The S-curve picture: ``P(s) = 1 - (1 - s^r)^b`` (Leskovec, Rajaraman, Ullman, *Mining of Massive
Datasets*, ch. 3.4.2) with the observed recall of every similarity bin as a point."""
from __future__ import annotations

import math
import os
import textwrap
from pathlib import Path

import numpy as np

from .._plural import banding, count
from .comparison import FLAT, banding_notes, curve_banding
from .draw import figure_class, percent, picture_format, set_title, share, write_figures


def scurve_figure(c):
    Figure = figure_class()
    from matplotlib.transforms import blended_transform_factory

    info = c.lsh
    b, r = info.bands, info.rows
    t = float(c.threshold.fraction)
    fig = Figure(figsize=(8, 5.4), layout="constrained")
    ax = fig.add_subplot()

    # The curve, and where it rises: the threshold asked for and the banding's knee.
    s = np.linspace(0.0, 1.0, 501)
    ax.plot(s, info.predicted(s), color="C0", lw=2, zorder=2,
            label=f"S-curve $P(s) = 1 - (1 - s^{{{r}}})^{{{b}}}$")
    ax.axvline(t, color="0.25", ls="--", lw=1, zorder=1, label=f"threshold t = {t:g}, P(t) = {info.predicted(t):.3f}")
    filled = [x for x in c.bins if x.exact]
    if filled and min(x.predicted for x in filled) >= FLAT:  # every bin at 1: draw a banding that would show more
        b2, r2 = curve_banding(t, info.num_perm)
        ax.plot(s, 1 - (1 - s ** r2) ** b2, color="0.45", ls="--", lw=1.2, zorder=2,
                label=f"{banding(b2, r2)} (-b {b2} -r {r2}): knee near t")
    knee = (1.0 / b) ** (1.0 / r)
    ax.plot([knee], [info.predicted(knee)], marker="D", ms=7, color="C1", ls="none", zorder=4,
            label=f"knee $(1/b)^{{1/r}}$ = {knee:.3f}")

    # Per bin: the observed recall with ±1 binomial standard error, and the S-curve's own
    # prediction for the pairs in that bin (mean P(s) over them) as a bar across the bin.
    trans = blended_transform_factory(ax.transData, ax.transAxes)
    shown_pred = shown_obs = False
    for k, bin_ in enumerate(c.bins):
        if k % 2 == 0:
            ax.axvspan(bin_.lo, bin_.hi, color="0.94", lw=0, zorder=0)
        if not bin_.exact:
            ax.text((bin_.lo + bin_.hi) / 2, 0.025, "none", transform=trans, ha="center", fontsize=7,
                    color="0.45")
            continue
        mid = (bin_.lo + bin_.hi) / 2
        p = bin_.found / bin_.exact
        se = math.sqrt(p * (1 - p) / bin_.exact)
        ax.hlines(bin_.predicted, bin_.lo, bin_.hi, color="C0", lw=1, ls=":", zorder=3,
                  label=None if shown_pred else "S-curve's mean P(s) over the bin's pairs")
        ax.errorbar([mid], [p], yerr=[se], fmt="o", color="C3", ms=6, capsize=4, elinewidth=1.2, zorder=5,
                    label=None if shown_obs else "observed recall per similarity bin (±1 binomial s.e.)")
        shown_pred = shown_obs = True
        ax.text(mid, 0.025, f"{bin_.found:,}/{bin_.exact:,}", transform=trans, ha="center", fontsize=7,
                color="0.2")
    if c.bins:
        ax.text(c.bins[0].lo, 0.075, " found/pairs of documents per bin", transform=trans, ha="left", fontsize=7,
                color="0.45")

    ax.set_xlim(0, 1)
    ax.set_ylim(-0.02, 1.06)
    ax.set_xlabel("Jaccard similarity s of a pair")
    notes = banding_notes(c)
    if notes:  # what the banding predicts, and why a bin strays: under the axis, wrapped to its width
        width = int(fig.get_figwidth() * 72 / (8 * 0.55))
        text = "\n".join(line for note in notes for line in textwrap.wrap("• " + note, width))
        ax.text(0.0, -0.12, text, transform=ax.transAxes, ha="left", va="top", fontsize=8, color="0.2")
    ax.set_ylabel("probability of becoming a candidate / recall")
    ax.grid(True, color="0.85", lw=0.6, zorder=0)
    ax.set_axisbelow(True)
    # Upper left is empty below the curve's rise; for a low threshold the bin points are there,
    # and the lower right (above the bin counts) is empty instead.
    if t >= 0.45:
        ax.legend(loc="upper left", fontsize=8, framealpha=0.9)
    else:
        ax.legend(loc="lower right", bbox_to_anchor=(1.0, 0.1), fontsize=8, framealpha=0.9)
    seed = f", seed {info.seed}" + (f", {info.bits}-bit values" if info.bits else "")
    set_title(fig, ax,
           f"LSH {b} bands × {r} rows, K = {info.num_perm}{seed}; {c.shingle} shingles, t = {t:g}\n"
           f"{count(c.exact_pairs, 'pair')} of documents with J ≥ {t:g}, {c.lsh_pairs:,} found: recall {percent(c.recall)} "
           f"(S-curve predicts {percent(c.predicted_recall)})\n{count(c.lsh_candidates, 'candidate pair')} of "
           f"distinct sets verified ({share(c.lsh_candidates, c.all_set_pairs)} of the {c.all_set_pairs:,}); "
           f"{c.joined:,} documents joined of {c.documents:,} read")
    return fig


def plot_scurve(comparison, path: str | os.PathLike) -> Path:
    """Draw the S-curve of the comparison's banding with the observed recall per similarity bin.

    The curve ``P(s) = 1 - (1 - s^r)^b`` over s in [0, 1]; the threshold as a
    dashed vertical line; the knee ``(1/b)^(1/r)`` as a diamond. For every
    similarity bin of ``comparison.bins`` (t–0.6, 0.6–0.7, …): the observed
    recall as a point at the bin's midpoint with an error bar of ±1 binomial
    standard error ``sqrt(p(1 - p)/n)`` (p the observed recall, n the bin's
    pairs; it takes pairs as independent, and near-copies of one document
    collide together, so across seeds the points scatter wider), the S-curve's mean P(s) over the bin's pairs as a dotted bar
    across the bin (the fair thing to compare the point with: the curve
    changes within a bin), and ``found/pairs`` written under the bin. The
    title gives b × r, K, the seed and the totals.

    Parameters
    ----------
    comparison : allpairs.report.Comparison
    path : str or PathLike
        Ends in ``.png`` or ``.svg``, which chooses the format.

    Returns
    -------
    Path
        The file written.

    Raises
    ------
    UsageError
        Another suffix, or matplotlib not installed.
    OutputError
        ``path`` a directory or read-only, its directory missing or not
        writable, a full disk (the message names the file).
    """
    fmt = picture_format(path)
    return write_figures([(scurve_figure(comparison), Path(path), fmt)])[0]
