"""The cluster picture, drawn where a chord circle cannot be read: the largest clusters of true pairs,
each on a circle of its own with every document labelled, clusters of two a row each."""
from __future__ import annotations

import math

import numpy as np

from .._plural import banding, count
from ..pairs.clusters import linked_groups
from .draw import (MISSED_COLOUR, figure_class, labels, set_pairs, set_title, similarity_bar,
                   similarity_colours)


#: The cluster picture draws at most this many clusters, of at most MAX_CLUSTER_NODES documents each.
MAX_CLUSTERS = 12


MAX_CLUSTER_NODES = 14


#: The cluster picture: each cluster's circle (radius 1) in a square of _CELL units, room for its labels
#: (18 characters at 6 points) around it, drawn at _CELL_INCH inches a unit.
_CELL = 4.6


_CELL_INCH = 0.75


#: The narrowest cluster picture, in inches: room for its three-line title and its legend's two entries.
_MIN_WIDTH = 8.5


def _cluster_order(members: list[int], left: np.ndarray, right: np.ndarray, degree: np.ndarray) -> list[int]:
    """At most MAX_CLUSTER_NODES documents of a cluster, in breadth-first order from its best-connected one,
    so that neighbours sit side by side on its circle and few edges cross."""
    inside = np.isin(left, members)
    nbrs: dict[int, list[int]] = {}
    for a, b in zip(left[inside].tolist(), right[inside].tolist()):
        nbrs.setdefault(a, []).append(b)
        nbrs.setdefault(b, []).append(a)
    start = min(members, key=lambda d: (-degree[d], d))
    order, seen = [start], {start}
    for d in order:
        for e in sorted(nbrs.get(d, ()), key=lambda x: (-degree[x], x)):
            if e not in seen and len(order) < MAX_CLUSTER_NODES:
                seen.add(e)
                order.append(e)
    return order


def clusters_figure(c, max_clusters: int = MAX_CLUSTERS):
    """The largest clusters (connected components) of the pairs with J >= t, each document labelled."""
    Figure = figure_class()
    from matplotlib.collections import LineCollection
    from matplotlib.colors import Normalize

    t = float(c.threshold.fraction)
    left = np.asarray(c.true_left_doc, dtype=np.int64)
    right = np.asarray(c.true_right_doc, dtype=np.int64)
    sim = np.asarray(c.true_similarity, dtype=np.float64)
    found = np.asarray(c.true_found, dtype=bool)
    groups = sorted(linked_groups(left, right).values(), key=lambda g: (-len(g), g[0]))
    # Clusters of two share one panel, a row each; the larger ones get a circle each.
    twos = [g for g in groups if len(g) == 2]
    shown = [g for g in groups if len(g) > 2][:max_clusters - (1 if twos else 0)]
    panels = len(shown) + (1 if twos else 0)

    cols = min(4, max(1, panels))
    rows = max(1, math.ceil(panels / cols))
    # At least _MIN_WIDTH inches: one panel's width wrapped the title to six lines and the legend past both
    # edges, and the compressed layout collapsed the circle (matplotlib warned on stderr, under -q too).
    fig = Figure(figsize=(max(_MIN_WIDTH, _CELL * _CELL_INCH * cols + 1.6), _CELL * _CELL_INCH * rows + 1.8),
                 layout="compressed")
    ax = fig.add_subplot()
    ax.set_aspect("equal")
    ax.set_axis_off()
    norm = Normalize(vmin=math.floor(10 * t) / 10, vmax=1.0)
    cmap = similarity_colours()
    degree = np.bincount(np.concatenate([left, right]), minlength=len(c.ids)) if len(left) else None
    # Each member stands for the documents that share its set.
    copies = np.ones(len(c.ids), np.int64) if c.copies is None else np.maximum(np.asarray(c.copies, np.int64), 1)
    segs, colours, miss_segs = [], [], []
    for k, members in enumerate(shown):
        keep = _cluster_order(members, left, right, degree)
        cx, cy = _CELL * (k % cols), -_CELL * (k // cols)
        ang = np.pi / 2 - 2 * np.pi * np.arange(len(keep)) / len(keep)
        pos = {d: (cx + math.cos(a), cy + math.sin(a)) for d, a in zip(keep, ang)}
        inside = np.isin(left, keep) & np.isin(right, keep)
        for e in np.flatnonzero(inside).tolist():
            seg = [pos[int(left[e])], pos[int(right[e])]]
            if found[e]:
                segs.append(seg)
                colours.append(cmap(norm(sim[e])))
            else:
                miss_segs.append(seg)
        ax.scatter([p[0] for p in pos.values()], [p[1] for p in pos.values()], s=14, color="0.25", lw=0, zorder=6)
        for d, a, label in zip(keep, ang, labels(c, keep, 18)):
            # Level labels, away from the circle: none upside down or cut off at a panel's edge.
            x, y = math.cos(a), math.sin(a)
            ax.text(pos[d][0] + 0.08 * x, pos[d][1] + 0.08 * y, label, ha="left" if x > 0.3 else "right" if x < -0.3
                    else "center", va="bottom" if y > 0.3 else "top" if y < -0.3 else "center", fontsize=6,
                    color="0.2", zorder=7)
        pairs_in = int(((np.isin(left, members)) & np.isin(right, members)).sum())
        more = f", {len(keep)} shown" if len(keep) < len(members) else ""
        ax.text(cx, cy - _CELL / 2 + 0.05, f"{count(int(copies[members].sum()), 'document')} "
                f"({count(len(members), 'distinct set')}), {set_pairs(pairs_in)}{more}", ha="center", fontsize=7,
                color="0.35")
    if twos:
        _pairs_panel(ax, c, twos, len(shown), cols, (left, right, sim, found), (cmap, norm), (segs, colours, miss_segs))
    if segs:
        ax.add_collection(LineCollection(segs, colors=colours, linewidths=1.4, zorder=3,
                                         label=f"J ≥ {t:g}: found ({set_pairs(len(segs))} drawn)"))
    if miss_segs:
        ax.add_collection(LineCollection(miss_segs, colors=MISSED_COLOUR, linewidths=1.3, linestyles=(0, (3, 2)),
                                         zorder=4, label=f"J ≥ {t:g}: missed by LSH ({set_pairs(len(miss_segs))} drawn)"))
    if not panels:
        ax.text(0, 0, f"no pair with J ≥ {t:g}: no cluster to draw", ha="center", va="center", fontsize=10)
    ax.set_xlim(-_CELL / 2, _CELL * (cols - 0.5))
    ax.set_ylim(-_CELL * (rows - 0.5) - 0.1, _CELL / 2)
    if segs or miss_segs:
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=2, fontsize=8, frameon=False)
    similarity_bar(fig, ax, norm, cmap, t)
    info = c.lsh
    in_clusters = int(sum(copies[g].sum() for g in groups))  # a set's copies are in its cluster too
    set_title(fig, ax,
           f"The largest clusters of pairs with J ≥ {t:g} ({c.shingle}); LSH {banding(info.bands, info.rows)}, "
           f"K = {info.num_perm}\n{len(shown) + min(len(twos), MAX_PAIR_ROWS):,} of {count(len(groups), 'cluster')} drawn ({in_clusters:,} "
           f"of the {c.joined:,} documents joined are in one); LSH missed {c.missed:,} of the "
           f"{set_pairs(len(left))}\n(a circle of {c.joined:,} documents without directories to group them "
           "would be unreadable)")
    return fig


#: The panel of two-document clusters lists at most this many, a row each.
MAX_PAIR_ROWS = 14


def _pairs_panel(ax, c, twos, k, cols, pairs, colours, out) -> None:
    """Panel ``k`` of the cluster picture: the clusters of two documents, a short chord each, labels beside."""
    left, right, sim, found = pairs
    cmap, norm = colours
    segs, seg_colours, miss_segs = out
    edge = {(min(a, b), max(a, b)): e for e, (a, b) in enumerate(zip(left.tolist(), right.tolist()))}
    cx, cy = _CELL * (k % cols), -_CELL * (k // cols)
    step = min(0.3, (_CELL - 0.9) / MAX_PAIR_ROWS)
    for row, (a, b) in enumerate(twos[:MAX_PAIR_ROWS]):
        e = edge[(a, b)]
        y = cy + _CELL / 2 - 0.45 - step * row
        seg = [(cx - 0.3, y), (cx + 0.3, y)]
        if found[e]:
            segs.append(seg)
            seg_colours.append(cmap(norm(sim[e])))
        else:
            miss_segs.append(seg)
        name_a, name_b = labels(c, [a, b], 18)
        ax.text(cx - 0.38, y, name_a, ha="right", va="center", fontsize=6, color="0.2")
        ax.text(cx + 0.38, y, name_b, ha="left", va="center", fontsize=6, color="0.2")
    shown = min(len(twos), MAX_PAIR_ROWS)
    more = f", {shown} shown" if shown < len(twos) else ""
    ax.text(cx, cy - _CELL / 2 + 0.05, f"{count(len(twos), 'cluster')} of two distinct sets{more}", ha="center",
            fontsize=7, color="0.35")
