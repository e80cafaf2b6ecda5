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

import io
import math
import os
import textwrap
from pathlib import Path

import numpy as np

from .._plural import count
from ..errors import UsageError
from ..output.files import OutputPlan, check_output, open_outputs

__all__ = ["FORMATS", "MAX_CHORDS", "MAX_CLUSTERS", "check_plot_path", "chords_path", "plot_chords", "plot_comparison",
           "plot_scurve", "render_comparison", "write_rendered"]

#: File suffixes the pictures can be written as, and matplotlib's name of each format.
FORMATS = {".png": "png", ".svg": "svg"}

#: At most this many chords are drawn (the most similar candidates); the subtitle counts the rest.
MAX_CHORDS = 20_000

#: Directory arcs are drawn around the circle only for at most this many runs of one top-level directory.
MAX_GROUPS = 60

#: Without directory arcs, a circle of at most this many documents is drawn with every document labelled;
#: a larger one would be an unreadable hairball, and the largest clusters are drawn instead.
MAX_LABELLED = 40

#: The cluster picture draws at most this many clusters, of at most MAX_CLUSTER_NODES documents each.
MAX_CLUSTERS = 12
MAX_CLUSTER_NODES = 14

#: Pairs LSH missed: dashed, in a colour the similarity colour map does not use.
MISSED_COLOUR = "#d62728"

_DPI = 150

#: The cluster picture: each cluster's circle (radius 1) in a square of _CELL units, room for its labels
#: (18 characters at 6 points) around it, drawn at _CELL_INCH inches a unit.
_CELL = 4.6
_CELL_INCH = 0.75
_INSTALL = "drawing needs matplotlib: pip install 'allpairs-join[plot]'"


def _format(path: str | os.PathLike) -> str:
    """matplotlib's format name for the suffix of ``path``, or a UsageError naming the choices."""
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        shown = f"suffix '{suffix}'" if suffix else "no suffix"
        raise UsageError(f"cannot draw {os.fspath(path)}: {shown}; give a file name ending in "
                         + " or ".join(FORMATS))
    return FORMATS[suffix]


def chords_path(path: str | os.PathLike) -> Path:
    """Where :func:`plot_comparison` puts the chord picture: ``-chords`` before the suffix."""
    p = Path(path)
    return p.with_name(f"{p.stem}-chords{p.suffix}")


def check_plot_path(path: str | os.PathLike) -> list[OutputPlan]:
    """Raise now what :func:`plot_comparison` would raise about ``path`` after the work is done.

    For a caller (such as ``allpairs compare --plot``) that wants a bad file
    name, or a missing matplotlib, refused before a long comparison rather
    than after it: an unknown suffix or no matplotlib is a :class:`UsageError`
    (the message names the ``plot`` extra); a directory, a missing or
    unwritable directory, a read-only file an
    :class:`~allpairs.errors.OutputError`. Returns the plans of both files.
    """
    _format(path)
    _figure_class()
    return [check_output(p, role="picture") for p in (path, chords_path(path))]


def _figure_class():
    """matplotlib's Figure, imported on first use."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise UsageError(_INSTALL) from None
    return Figure


def _render(figures: list[tuple[object, Path, str]]) -> list[tuple[Path, memoryview]]:
    """Each figure rendered in memory, with the file it is for."""
    rendered = []
    for fig, path, fmt in figures:
        data = io.BytesIO()
        # SVG without a date stamp: the same comparison gives the same file.
        fig.savefig(data, format=fmt, dpi=_DPI, metadata={"Date": None} if fmt == "svg" else {})
        rendered.append((path, data.getbuffer()))
    return rendered


def write_rendered(files: list[tuple[Path, bytes]], plans: list[OutputPlan | None] | None = None) -> list[Path]:
    """Write pictures rendered in memory, all together (see :func:`allpairs.output.files.open_outputs`)."""
    with open_outputs([path for path, _ in files], plans, role="picture") as sinks:
        for sink, (_, data) in zip(sinks, files):
            sink.write(data)
    return [path for path, _ in files]


def _write(figures: list[tuple[object, Path, str]]) -> list[Path]:
    """Render every figure in memory, then write them all.

    A rendering failure (or Ctrl-C) touches no file; the files are renamed
    into place together, so either all pictures are written or none is.
    """
    plans = [check_output(path, role="picture") for _, path, _ in figures]
    return write_rendered(_render(figures), plans)


def _title(fig, ax, text: str, fontsize: float = 9.5) -> None:
    """Set the axes' title, each line wrapped at spaces to fit the figure's width (a long shingle
    spec or count would otherwise run past the figure's edge and be cut off)."""
    # About 0.6 em a character in matplotlib's default sans-serif, with a margin.
    width = max(20, int(fig.get_figwidth() * 72 / (fontsize * 0.66)))
    lines = [wrapped for line in text.split("\n")
             for wrapped in textwrap.wrap(line, width, break_long_words=False, break_on_hyphens=False) or [""]]
    ax.set_title("\n".join(lines), fontsize=fontsize)


def _set_pairs(n: int) -> str:
    """``n`` pairs of distinct sets, in words: what the chords and cluster edges count."""
    return count(n, "pair") + " of distinct sets"


def _share(part: int, whole: int) -> str:
    if not whole:
        return "n/a"
    pct = 100 * part / whole
    return f"{pct:.2g}%" if pct < 1 else f"{pct:.1f}%"


def _pct(x: float) -> str:
    return "n/a" if x is None or math.isnan(x) else f"{100 * x:.1f}%"


def _scurve_figure(c):
    Figure = _figure_class()
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
    _title(fig, ax,
           f"LSH {b} bands × {r} rows, K = {info.num_perm}{seed}; {c.shingle} shingles, t = {t:g}\n"
           f"{count(c.exact_pairs, 'pair')} of documents with J ≥ {t:g}, {c.lsh_pairs:,} found: recall {_pct(c.recall)} "
           f"(S-curve predicts {_pct(c.predicted_recall)})\n{count(c.lsh_candidates, 'candidate pair')} of "
           f"distinct sets verified ({_share(c.lsh_candidates, c.all_set_pairs)} of the {c.all_set_pairs:,}); "
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
    fmt = _format(path)
    return _write([(_scurve_figure(comparison), Path(path), fmt)])[0]


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


def _similarity_colours():
    """The colour map of true similarity: viridis reversed and cut short of its palest yellow."""
    import matplotlib
    from matplotlib.colors import ListedColormap

    return ListedColormap(matplotlib.colormaps["viridis_r"](np.linspace(0.12, 1.0, 256)))


def _similarity_bar(fig, ax, norm, cmap, t: float) -> None:
    from matplotlib.cm import ScalarMappable

    bar = fig.colorbar(ScalarMappable(norm=norm, cmap=cmap), ax=ax, shrink=0.6, pad=0.01, aspect=30)
    bar.set_label("true Jaccard similarity of the pair")
    bar.ax.axhline(t, color="black", lw=1.5)
    bar.ax.text(-0.25, t, "t", transform=bar.ax.get_yaxis_transform(), ha="right", va="center", fontsize=9)


def _shortened(texts: list[str], width: int) -> list[str]:
    """Each text in at most ``width`` characters, cut where the texts agree so that what tells them apart stays.

    Texts that share their start (the paths of one tree, numbered lines) keep
    their end, from a path component or word on (``…/net/http/server.go``);
    texts that share their end keep their start (``1 apple pie…``).
    """
    if all(len(t) <= width for t in texts):
        return list(texts)
    head = len(os.path.commonprefix(texts))
    tail = len(os.path.commonprefix([t[::-1] for t in texts]))
    out = []
    for text in texts:
        if len(text) <= width:
            out.append(text)
        elif tail > head:
            out.append(text[:width - 1] + "…")
        else:
            end = text[-(width - 1):]
            for sep, skip in (("/", 0), (" ", 1)):  # start at a path component, else at a word
                cut = end.find(sep)
                if 0 <= cut < len(end) - 1:
                    end = end[cut + skip:]
                    break
            out.append("…" + end)
    return out


def _labels(c, docs, width: int = 22) -> list[str]:
    """The documents' names in a picture: each line's text (for --lines) or id, shortened together
    (:func:`_shortened`), with ×k for k copies."""
    texts = []
    for doc in docs:
        text = str(c.labels[doc] if c.labels is not None else c.ids[doc])
        texts.append(text.encode("unicode_escape").decode("ascii") if not text.isprintable() else text)
    copies = [int(c.copies[doc]) if c.copies is not None else 1 for doc in docs]
    return [f"{text} ×{k}" if k > 1 else text for text, k in zip(_shortened(texts, width), copies)]


def chords_readable(c) -> bool:
    """Whether the chord circle can be read: its documents fall into directory arcs, or are few enough to label."""
    docs, _ = _joined(c)
    runs = _top_groups(c, docs)
    return (2 <= len(runs) <= MAX_GROUPS and all(name for name, _, _ in runs)) or len(docs) <= MAX_LABELLED


def _chords_figure(c, max_chords: int):
    Figure = _figure_class()
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
    cmap = _similarity_colours()

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
                               capstyle="round", label=f"{label} ({_set_pairs(len(pick))})")
        lines.set_rasterized(len(pick) > 2000)  # an SVG of thousands of curves is slow to open
        ax.add_collection(lines)
    if len(miss_left):
        # What LSH missed, on top: the point of validating recall.
        lines = LineCollection(curves(miss_left, miss_right), colors=MISSED_COLOUR, linewidths=1.3,
                               linestyles=(0, (3, 2)), zorder=5,
                               label=f"J ≥ {t:g}: missed by LSH ({_set_pairs(len(miss_left))})")
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
        names = _shortened([name for name, _, _ in runs], 22)  # several PATHs: their ends tell them apart
        for k, ((_, start, stop), name) in enumerate(zip(runs, names)):
            a0 = np.pi / 2 - step * (start - 0.5) - step * 0.15
            a1 = np.pi / 2 - step * (stop - 0.5) + step * 0.15
            arc = np.linspace(a0, a1, max(2, int(64 * (stop - start) / n) + 2))
            ax.plot(1.05 * np.cos(arc), 1.05 * np.sin(arc), color="0.35" if k % 2 else "0.65", lw=3,
                    solid_capstyle="butt", zorder=4)
            if (stop - start) / n >= 0.012 or len(runs) <= 12:
                outside((a0 + a1) / 2, f"{name}/ ({stop - start})", 1.09)
    elif named:
        for k, label in enumerate(_labels(c, [int(d) for d in docs])):
            outside(float(angle[k]), label, 1.04)
    ax.set_xlim(-reach, reach)
    ax.set_ylim(-reach, reach)
    if total or len(miss_left):
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=2, fontsize=8, frameon=False)
    _similarity_bar(fig, ax, norm, cmap, t)

    info = c.lsh
    n_verified = int(verified.sum())
    drawn = ("no candidate to draw" if not total else f"all {total:,} drawn" if not left_out
             else f"the {len(order):,} most similar drawn, {left_out:,} less similar left out")
    _title(fig, ax,
           f"LSH candidates as chords: {info.bands} bands × {info.rows} rows, K = {info.num_perm}, "
           f"{c.shingle}, t = {t:g}\n"
           f"{count(len(ids), 'document')} joined (of {c.documents:,} read), clockwise from the top in input order\n"
           f"{count(total, 'candidate pair')} of distinct sets, {n_verified:,} with J ≥ {t:g} (thick): {drawn}\n"
           f"{_set_pairs(len(miss_left))} with J ≥ {t:g} missed by LSH (dashed red)")
    return fig


def _components(left: np.ndarray, right: np.ndarray) -> dict[int, list[int]]:
    """Connected components of the graph with these edges: root -> sorted members."""
    parent: dict[int, int] = {}

    def find(x: int) -> int:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in zip(left.tolist(), right.tolist()):
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    groups: dict[int, list[int]] = {}
    for x in sorted(parent):
        groups.setdefault(find(x), []).append(x)
    return groups


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


def _clusters_figure(c, max_clusters: int = MAX_CLUSTERS):
    """The largest clusters (connected components) of the pairs with J >= t, each document labelled."""
    Figure = _figure_class()
    from matplotlib.collections import LineCollection
    from matplotlib.colors import Normalize

    t = float(c.threshold.fraction)
    left = np.asarray(c.true_left_doc, dtype=np.int64)
    right = np.asarray(c.true_right_doc, dtype=np.int64)
    sim = np.asarray(c.true_similarity, dtype=np.float64)
    found = np.asarray(c.true_found, dtype=bool)
    groups = sorted(_components(left, right).values(), key=lambda g: (-len(g), g[0]))
    shown = groups[:max_clusters]

    cols = min(4, max(1, len(shown)))
    rows = max(1, math.ceil(len(shown) / cols))
    fig = Figure(figsize=(_CELL * _CELL_INCH * cols + 1.6, _CELL * _CELL_INCH * rows + 1.8), layout="compressed")
    ax = fig.add_subplot()
    ax.set_aspect("equal")
    ax.set_axis_off()
    norm = Normalize(vmin=math.floor(10 * t) / 10, vmax=1.0)
    cmap = _similarity_colours()
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
        for d, a, label in zip(keep, ang, _labels(c, keep, 18)):
            deg = math.degrees(a) % 360
            flip = 90 < deg < 270
            ax.text(pos[d][0] + 0.08 * math.cos(a), pos[d][1] + 0.08 * math.sin(a), label,
                    rotation=deg - 180 if flip else deg, rotation_mode="anchor", ha="right" if flip else "left",
                    va="center", fontsize=6, color="0.2", zorder=7)
        pairs_in = int(((np.isin(left, members)) & np.isin(right, members)).sum())
        more = f", {len(keep)} shown" if len(keep) < len(members) else ""
        ax.text(cx, cy - _CELL / 2 + 0.05, f"{count(int(copies[members].sum()), 'document')} "
                f"({count(len(members), 'distinct set')}), {_set_pairs(pairs_in)}{more}", ha="center", fontsize=7,
                color="0.35")
    if segs:
        ax.add_collection(LineCollection(segs, colors=colours, linewidths=1.4, zorder=3,
                                         label=f"J ≥ {t:g}: found ({_set_pairs(len(segs))} drawn)"))
    if miss_segs:
        ax.add_collection(LineCollection(miss_segs, colors=MISSED_COLOUR, linewidths=1.3, linestyles=(0, (3, 2)),
                                         zorder=4, label=f"J ≥ {t:g}: missed by LSH ({_set_pairs(len(miss_segs))} drawn)"))
    if not shown:
        ax.text(0, 0, f"no pair with J ≥ {t:g}: no cluster to draw", ha="center", va="center", fontsize=10)
    ax.set_xlim(-_CELL / 2, _CELL * (cols - 0.5))
    ax.set_ylim(-_CELL * (rows - 0.5) - 0.1, _CELL / 2)
    if segs or miss_segs:
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=2, fontsize=8, frameon=False)
    _similarity_bar(fig, ax, norm, cmap, t)
    info = c.lsh
    in_clusters = int(sum(copies[g].sum() for g in groups))  # a set's copies are in its cluster too
    _title(fig, ax,
           f"The largest clusters of pairs with J ≥ {t:g} ({c.shingle}); LSH {info.bands} bands × {info.rows} "
           f"rows, K = {info.num_perm}\n{len(shown):,} of {count(len(groups), 'cluster')} drawn ({in_clusters:,} "
           f"of the {c.joined:,} documents joined are in one); LSH missed {c.missed:,} of the "
           f"{_set_pairs(len(left))}\n(a circle of {c.joined:,} documents without directories to group them "
           "would be unreadable)")
    return fig


def _candidates_figure(c, max_chords: int):
    """The chord circle where it can be read, else the largest clusters (see :func:`chords_readable`)."""
    return _chords_figure(c, max_chords) if chords_readable(c) else _clusters_figure(c)


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
    fmt = _format(path)
    if isinstance(max_chords, bool) or not isinstance(max_chords, int) or max_chords < 0:
        raise UsageError(f"max_chords must be a whole number of 0 or more, got {max_chords!r}")
    return _write([(_candidates_figure(comparison, max_chords), Path(path), fmt)])[0]


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
    UsageError
        Another suffix, or matplotlib not installed.
    OutputError
        ``path`` a directory or read-only, its directory missing or not
        writable, a full disk (the message names the file).
    """
    plans = check_plot_path(path)
    return write_rendered(render_comparison(comparison, path), plans)


def render_comparison(comparison, path: str | os.PathLike) -> list[tuple[Path, memoryview]]:
    """Both pictures of :func:`plot_comparison`, rendered in memory: ``[(path, data), (chords path, data)]``.

    For a caller that writes them together with other files
    (``allpairs compare --plot FILE --missed FILE``).
    """
    fmt = _format(path)
    target = Path(path)
    return _render([(_scurve_figure(comparison), target, fmt),
                    (_candidates_figure(comparison, MAX_CHORDS), chords_path(target), fmt)])
