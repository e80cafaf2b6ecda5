"""How the pictures are made and written: matplotlib imported on first use and drawn through
:class:`matplotlib.figure.Figure` objects (never pyplot, so no global state of the caller's matplotlib
changes), rendered in memory, then written together as every allpairs output is
(:mod:`allpairs.output.files`); what every picture shares: titles, counts, the similarity colours, labels."""
from __future__ import annotations

import io
import math
import os
import textwrap
from pathlib import Path

import numpy as np

from .._plural import count
from ..errors import UsageError, require_extra
from ..output.files import OutputPlan, check_output, open_outputs


#: File suffixes the pictures can be written as, and matplotlib's name of each format.
FORMATS = {".png": "png", ".svg": "svg"}


#: Pairs LSH missed: dashed, in a colour the similarity colour map does not use.
MISSED_COLOUR = "#d62728"


_DPI = 150


def picture_format(path: str | os.PathLike) -> str:
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


def figure_class():
    """matplotlib's Figure, imported on first use."""
    return require_extra("matplotlib.figure", "drawing").Figure


def render(figures: list[tuple[object, Path, str]]) -> list[tuple[Path, memoryview]]:
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


def write_figures(figures: list[tuple[object, Path, str]]) -> list[Path]:
    """Render every figure in memory, then write them all.

    A rendering failure (or Ctrl-C) touches no file; the files are renamed
    into place together, so either all pictures are written or none is.
    """
    plans = [check_output(path, role="picture") for _, path, _ in figures]
    return write_rendered(render(figures), plans)


def set_title(fig, ax, text: str, fontsize: float = 9.5) -> None:
    """Set the axes' title, each line wrapped at spaces to fit the figure's width (a long shingle
    spec or count would otherwise run past the figure's edge and be cut off)."""
    # About 0.6 em a character in matplotlib's default sans-serif, with a margin.
    width = max(20, int(fig.get_figwidth() * 72 / (fontsize * 0.66)))
    lines = [wrapped for line in text.split("\n")
             for wrapped in textwrap.wrap(line, width, break_long_words=False, break_on_hyphens=False) or [""]]
    ax.set_title("\n".join(lines), fontsize=fontsize)


def set_pairs(n: int) -> str:
    """``n`` pairs of distinct sets, in words: what the chords and cluster edges count."""
    return count(n, "pair") + " of distinct sets"


def share(part: int, whole: int) -> str:
    if not whole:
        return "n/a"
    pct = 100 * part / whole
    return f"{pct:.2g}%" if pct < 1 else f"{pct:.1f}%"


def percent(x: float) -> str:
    return "n/a" if x is None or math.isnan(x) else f"{100 * x:.1f}%"


def similarity_colours():
    """The colour map of true similarity: viridis reversed and cut short of its palest yellow."""
    import matplotlib
    from matplotlib.colors import ListedColormap

    return ListedColormap(matplotlib.colormaps["viridis_r"](np.linspace(0.12, 1.0, 256)))


def similarity_bar(fig, ax, norm, cmap, t: float) -> None:
    from matplotlib.cm import ScalarMappable

    bar = fig.colorbar(ScalarMappable(norm=norm, cmap=cmap), ax=ax, shrink=0.6, pad=0.01, aspect=30)
    bar.set_label("true Jaccard similarity of the pair")
    bar.ax.axhline(t, color="black", lw=1.5)
    bar.ax.text(-0.25, t, "t", transform=bar.ax.get_yaxis_transform(), ha="right", va="center", fontsize=9)


def shortened(texts: list[str], width: int) -> list[str]:
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


def labels(c, docs, width: int = 22) -> list[str]:
    """The documents' names in a picture: each line's text (for --lines) or id, shortened together
    (:func:`shortened`), with ×k for k copies."""
    texts = []
    for doc in docs:
        text = str(c.labels[doc] if c.labels is not None else c.ids[doc])
        texts.append(text.encode("unicode_escape").decode("ascii") if not text.isprintable() else text)
    copies = [int(c.copies[doc]) if c.copies is not None else 1 for doc in docs]
    return [f"{text} ×{k}" if k > 1 else text for text, k in zip(shortened(texts, width), copies)]
