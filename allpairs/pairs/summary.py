"""Stage 6, for people: a result summed up in a few lines for ``repr`` and in a small table for notebooks.

A notebook shows ``repr(res)`` (or ``res._repr_html_()``) for the last value
of a cell: the whole list of a 50,000-title result was 650,563 characters.
The summary states the counts and the settings and shows the first few rows;
the rest stays a method away (``to_pandas()``, ``pairs[i]``, iteration).
"""
from __future__ import annotations

from typing import Sequence

#: Rows a summary shows.
SHOWN = 5


def summary_text(title: str, header: Sequence[str], rows: Sequence[Sequence], total: int, ids: int = 2) -> str:
    """``title`` on the first line, then ``header`` and ``rows`` aligned in columns (the first ``ids``
    columns, ids, by ``repr``: ``'7'`` is not ``7``), then how many rows of ``total`` are not shown."""
    cells = [list(header)] + [[repr(v) if c < ids else str(v) for c, v in enumerate(row)] for row in rows]
    widths = [max(len(r[c]) for r in cells) for c in range(len(header))]
    lines = [title] + ["  " + "  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in cells] \
        if rows else [title]
    if total > len(rows):
        lines.append(f"  ... {total - len(rows):,} more")
    return "\n".join(lines)


class Summarised:
    """``repr`` and a notebook's HTML view from the class's ``_summary()``: (title, column names, the
    first rows, the number of rows); the first ``ID_COLUMNS`` columns hold ids."""

    ID_COLUMNS = 2

    def _summary(self) -> tuple[str, tuple[str, ...], list[tuple], int]:
        raise NotImplementedError

    def __repr__(self) -> str:
        return summary_text(*self._summary(), ids=self.ID_COLUMNS)

    def _repr_html_(self) -> str:
        return summary_html(*self._summary())


def summary_html(title: str, header: Sequence[str], rows: Sequence[Sequence], total: int) -> str:
    """The same as :func:`summary_text` as an HTML table, every value escaped."""
    import html  # here, not at the top: only a notebook asks for HTML

    def row(tag: str, values) -> str:
        return "<tr>" + "".join(f"<{tag}>{html.escape(str(v))}</{tag}>" for v in values) + "</tr>"

    body = "".join(row("td", r) for r in rows)
    more = (f"<tr><td colspan='{len(header)}'>… {total - len(rows):,} more</td></tr>" if total > len(rows) else "")
    table = f"<table><thead>{row('th', header)}</thead><tbody>{body}{more}</tbody></table>" if rows else ""
    return f"<div><p>{html.escape(title)}</p>{table}</div>"
