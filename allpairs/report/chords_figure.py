"""The chord picture: the documents on a circle in input order, one chord per LSH candidate coloured
by true similarity, a dashed red chord per pair LSH missed, directory arcs around."""
from __future__ import annotations

import math

import numpy as np

from .._plural import banding, count
from .draw import (MISSED_COLOUR, figure_class, labels, set_pairs, set_title, shortened, similarity_bar,
                   similarity_colours)


#: At most this many chords are drawn (the most similar candidates); the subtitle counts the rest.
MAX_CHORDS = 20_000


#: Directory arcs are drawn around the circle only for at most this many runs of one top-level directory.
MAX_GROUPS = 60


#: Without directory arcs, a circle of at most this many documents is drawn with every document labelled;
#: a larger one would be an unreadable hairball, and the largest clusters are drawn instead.
MAX_LABELLED = 40


def _top_groups(c, docs) -> list[tuple[str, int, int]]:
    """Runs of consecutive documents in one group: (name, start, stop) over ``docs``.

    A document's group is the PATH it was read from when several were given
    (``c.roots``), else the first component of its id (one root's top-level
    directories); a file named on its own, or an id with no directory, has none ("").
    """
    runs: list[tuple[str, int, int]] = []
    for i, doc in enumerate(docs):
        root = c.roots[doc].rstrip("/") if c.roots is not None else ""
        name = str(c.ids[doc])
        head = root or (name.split("/", 1)[0] if "/" in name else "")
        if runs and runs[-1][0] == head:
            runs[-1] = (head, runs[-1][1], i + 1)
        else:
            runs.append((head, i, i + 1))
    return runs


def _joined(c) -> tuple[np.ndarray, np.ndarray]:
    """The joined documents (indices into ``c.ids``) and each document's place among them (-1 if not joined)."""
    n = len(c.ids)
    mask = np.ones(n, bool) if c.doc_joined is None else np.asarray(c.doc_joined, bool)
    docs = np.flatnonzero(mask)
    place = np.full(max(n, 1), -1, np.int64)
    place[docs] = np.arange(len(docs))
    return docs, place


def chords_readable(c) -> bool:
    """Whether the chord circle can be read: its documents fall into directory arcs, or are few enough to label."""
    docs, _ = _joined(c)
    runs = _top_groups(c, docs)
    return (2 <= len(runs) <= MAX_GROUPS and all(name for name, _, _ in runs)) or len(docs) <= MAX_LABELLED


def chords_figure(c, max_chords: int):
    Figure = figure_class()
    from matplotlib.collections import LineCollection
    from matplotlib.colors import Normalize

    docs, place = _joined(c)
    ids = [c.ids[d] for d in docs]
    left = place[np.asarray(c.candidate_left_doc, dtype=np.int64)]
    right = place[np.asarray(c.candidate_right_doc, dtype=np.int64)]
    sim = np.asarray(c.candidate_similarity, dtype=np.float64)
    verified = np.asarray(c.candidate_verified, dtype=bool)
    missed = np.zeros(0, bool) if c.true_found is None else ~np.asarray(c.true_found, bool)
    miss_left = place[np.asarray(c.true_left_doc, dtype=np.int64)[missed]] if len(missed) else np.zeros(0, np.int64)
    miss_right = place[np.asarray(c.true_right_doc, dtype=np.int64)[missed]] if len(missed) else np.zeros(0, np.int64)
    n = max(len(ids), 1)
    t = float(c.threshold.fraction)

    # Documents clockwise from the top, in input order (for a directory: path order).
    angle = np.pi / 2 - 2 * np.pi * np.arange(n) / n
    xy = np.column_stack([np.cos(angle), np.sin(angle)])

    # Keep the most similar candidates, then draw from least to most similar so the best lie on top.
    total = len(sim)
    order = np.argsort(-sim, kind="stable")[:max_chords]
    order = order[np.argsort(sim[order], kind="stable")]
    left_out = total - len(order)

    runs = _top_groups(c, docs)
    arcs = 2 <= len(runs) <= MAX_GROUPS and all(name for name, _, _ in runs)
    named = not arcs and len(ids) <= MAX_LABELLED
    reach = 1.65 if arcs or named else 1.06  # room for labels of 22 characters around the circle

    fig = Figure(figsize=(9.2, 8.6), layout="compressed")
    ax = fig.add_subplot()
    ax.set_aspect("equal")
    ax.set_axis_off()
    lo = math.floor(10 * min(float(sim.min()) if total else t, t)) / 10
    norm = Normalize(vmin=lo, vmax=1.0)
    cmap = similarity_colours()

    # A chord is a quadratic Bézier curve whose control point lies between the chord's midpoint and
    # the centre: far-apart documents are joined nearly straight, neighbours by a shallow loop.
    u = np.linspace(0.0, 1.0, 24)[None, :, None]

    def curves(a_idx, b_idx):
        a, b = xy[a_idx][:, None, :], xy[b_idx][:, None, :]
        ctrl = 0.35 * (a + b) / 2
        return (1 - u) ** 2 * a + 2 * (1 - u) * u * ctrl + u ** 2 * b

    styles = ((~verified[order], 0.6, 0.6, 2, f"J < {t:g}: candidate rejected by verification"),
              (verified[order], 1.4, 0.9, 3, f"J ≥ {t:g}: found"))
    for mask, width, alpha, z, label in styles:
        pick = order[mask]
        if not len(pick):
            continue
        colours = cmap(norm(sim[pick]))
        colours[:, 3] = alpha
        lines = LineCollection(curves(left[pick], right[pick]), colors=colours, linewidths=width, zorder=z,
                               capstyle="round", label=f"{label} ({set_pairs(len(pick))})")
        lines.set_rasterized(len(pick) > 2000)  # an SVG of thousands of curves is slow to open
        ax.add_collection(lines)
    if len(miss_left):
        # What LSH missed, on top: the point of validating recall.
        lines = LineCollection(curves(miss_left, miss_right), colors=MISSED_COLOUR, linewidths=1.3,
                               linestyles=(0, (3, 2)), zorder=5,
                               label=f"J ≥ {t:g}: missed by LSH ({set_pairs(len(miss_left))})")
        lines.set_rasterized(len(miss_left) > 2000)
        ax.add_collection(lines)

    ring = np.linspace(0.0, 2 * np.pi, 361)
    ax.plot(np.cos(ring), np.sin(ring), color="0.85", lw=0.6, zorder=1)
    dot = 9 if n <= 200 else 4 if n <= 1000 else 1.5
    ax.scatter(xy[:, 0], xy[:, 1], s=dot, color="0.25", lw=0, zorder=6)

    def outside(mid: float, text: str, radius: float) -> None:
        deg = math.degrees(mid) % 360
        flip = 90 < deg < 270  # left half: turn the text so it reads from the circle outwards
        ax.text(radius * math.cos(mid), radius * math.sin(mid), text, rotation=deg - 180 if flip else deg,
                rotation_mode="anchor", ha="right" if flip else "left", va="center", fontsize=7, color="0.3")

    # Top-level directories as arcs outside the circle, named when the arc is long enough to read.
    if arcs:
        step = 2 * np.pi / n
        names = shortened([name for name, _, _ in runs], 22)  # several PATHs: their ends tell them apart
        for k, ((_, start, stop), name) in enumerate(zip(runs, names)):
            a0 = np.pi / 2 - step * (start - 0.5) - step * 0.15
            a1 = np.pi / 2 - step * (stop - 0.5) + step * 0.15
            arc = np.linspace(a0, a1, max(2, int(64 * (stop - start) / n) + 2))
            ax.plot(1.05 * np.cos(arc), 1.05 * np.sin(arc), color="0.35" if k % 2 else "0.65", lw=3,
                    solid_capstyle="butt", zorder=4)
            if (stop - start) / n >= 0.012 or len(runs) <= 12:
                outside((a0 + a1) / 2, f"{name}/ ({stop - start})", 1.09)
    elif named:
        for k, label in enumerate(labels(c, [int(d) for d in docs])):
            outside(float(angle[k]), label, 1.04)
    ax.set_xlim(-reach, reach)
    ax.set_ylim(-reach, reach)
    if total or len(miss_left):
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=2, fontsize=8, frameon=False)
    similarity_bar(fig, ax, norm, cmap, t)

    info = c.lsh
    n_verified = int(verified.sum())
    drawn = ("no candidate to draw" if not total else f"all {total:,} drawn" if not left_out
             else f"the {len(order):,} most similar drawn, {left_out:,} less similar left out")
    set_title(fig, ax,
           f"LSH candidates as chords: {banding(info.bands, info.rows)}, K = {info.num_perm}, "
           f"{c.shingle}, t = {t:g}\n"
           f"{count(len(ids), 'document')} joined (of {c.documents:,} read), clockwise from the top in input order\n"
           f"{count(total, 'candidate pair')} of distinct sets, {n_verified:,} with J ≥ {t:g} (thick): {drawn}\n"
           f"{set_pairs(len(miss_left))} with J ≥ {t:g} missed by LSH (dashed red)")
    return fig
