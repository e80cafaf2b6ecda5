"""Writing query matches and dedup results: TSV (default), CSV or JSON Lines, one line each.

The similarity is the measure's exact value truncated (never rounded up) to 6
decimals, as :mod:`allpairs.pairs` prints it; overlap prints its whole count.
Ids are escaped as in :mod:`allpairs.pairs`.
"""
from __future__ import annotations

from typing import BinaryIO, Sequence

from ..errors import UsageError
from ..measures import Measure
from ..pairs.result import DECIMALS, FORMATS, _csv_field, _json_field, _tsv_field

_ESCAPE = {"tsv": _tsv_field, "csv": _csv_field, "jsonl": _json_field}


def similarity_text(row: Measure, overlap: int, size_x: int, size_y: int) -> str:
    """The similarity truncated to 6 decimals (overlap: the count)."""
    if row.integer_threshold:
        return str(overlap)
    v = row.truncated(overlap, size_x, size_y, DECIMALS)
    return f"{v // 10**DECIMALS}.{v % 10**DECIMALS:0{DECIMALS}d}"


def write_rows(out: BinaryIO, fmt: str, names: tuple[str, str], left: Sequence[str], right: Sequence[str],
               row: Measure, overlap: Sequence[int], left_size: Sequence[int], right_size: Sequence[int]) -> int:
    """Write one line per (left, right) pair with the similarity (and, for CSV/JSON Lines, overlap and sizes)."""
    if fmt not in FORMATS:
        raise UsageError(f"unknown output format {fmt!r}; choose one of {', '.join(FORMATS)}")
    esc = _ESCAPE[fmt]
    a, b = names
    lines = []
    if fmt == "csv":
        lines.append(f"{a},{b},similarity,overlap,{a}_size,{b}_size")
    for l_id, r_id, o, x, y in zip(left, right, overlap, left_size, right_size):
        sim = similarity_text(row, o, x, y)
        if fmt == "tsv":
            lines.append(f"{esc(l_id)}\t{esc(r_id)}\t{sim}")
        elif fmt == "csv":
            lines.append(f"{esc(l_id)},{esc(r_id)},{sim},{o},{x},{y}")
        else:
            lines.append(f'{{"{a}": {esc(l_id)}, "{b}": {esc(r_id)}, "similarity": {sim}, "overlap": {o}, '
                         f'"{a}_size": {x}, "{b}_size": {y}}}')
    if lines:
        out.write(("\n".join(lines) + "\n").encode("utf-8", "surrogateescape"))
    return len(lines) - (fmt == "csv")


def write_ids(out: BinaryIO, ids: Sequence[str]) -> int:
    """One id a line (TSV escaping: a tab or newline inside an id cannot break the line)."""
    if ids:
        out.write(("\n".join(_tsv_field(str(i)) for i in ids) + "\n").encode("utf-8", "surrogateescape"))
    return len(ids)
