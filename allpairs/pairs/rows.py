"""Pairs as a table: the pair columns beside the carried ones, in every table format."""
from __future__ import annotations

import itertools
from typing import BinaryIO, Callable, Iterator, Sequence

import numpy as np

from ..output.carried import Carried
from ..output.tables import ROW_GROUP, Column, id_column, pyarrow_modules, write_parquet_groups, write_table


def write_pairs_table(pairs, ids: Sequence, out: BinaryIO, measure, *, columns: dict[str, Sequence[str]] | None = None,
                      fmt: str = "parquet", progress: Callable[..., None] | None = None) -> int:
    """The pairs as a table in ``fmt`` (Parquet; the text formats go through the compiled
    :class:`~allpairs.pairs.result.PairWriter`): left, right, the similarity (float64) or estimate,
    overlap, both sizes, then ``left_NAME``, ``right_NAME`` of each carried column (a
    :class:`~allpairs.output.carried.Carried` one with its type: the input's Arrow type, or its JSON
    values' as Arrow infers them over every document).

    Parquet is written a row group at a time (:func:`~allpairs.output.tables.write_parquet_groups`, the
    bytes of one ``write_table``), so that only a row group's pairs are held as Python values;
    ``progress(stage, done, total, detail)`` is told the pairs written after each."""
    if fmt != "parquet":
        return write_table(out, fmt, _pair_columns(pairs, pairs._columns(None, measure), ids, columns))
    groups = (_pair_columns(pairs, pairs._columns_of(group, None, measure), ids, columns)
              for group in _row_groups(pairs, ROW_GROUP))
    first = next(groups, None)
    if first is None:  # no pair: the empty table's file
        first = _pair_columns(pairs, pairs._columns_of([], None, measure), ids, columns)
    tick = None if progress is None else (lambda n: progress("write", n, len(pairs), f"{n:,} pairs"))
    return write_parquet_groups(out, itertools.chain([first], groups), tick)


def _row_groups(pairs, size: int) -> Iterator[list]:
    """The pairs' chunks regrouped into lists of chunks of exactly ``size`` pairs (the last fewer)."""
    group, n = [], 0
    for c in pairs.chunks():
        lo = 0
        while lo < len(c):
            take = min(size - n, len(c) - lo)
            group.append(c if (lo, take) == (0, len(c)) else c.slice(lo, lo + take))
            n += take
            lo += take
            if n == size:
                yield group
                group, n = [], 0
    if group:
        yield group


def _pair_columns(pairs, cols: dict, ids: Sequence, columns: dict[str, Sequence[str]] | None) -> list[Column]:
    """The table's columns from :meth:`~allpairs.pairs.result.Pairs._columns_of`: ids, then the pair
    columns, then the carried ones."""
    left = np.asarray(cols.pop("left"), np.int64).tolist()
    right = (np.asarray(cols.pop("right"), np.int64) + (pairs.n_left or 0)).tolist()
    table = [id_column("left", ids, left), id_column("right", ids, right)]
    table += [Column(name, values, "float" if values.dtype.kind == "f" else "int") for name, values in cols.items()]
    for name, values in (columns or {}).items():
        if isinstance(values, Carried):  # the column's own Arrow type, taken by document
            pa, _ = pyarrow_modules()
            table += [Column(f"left_{name}", values.take(pa, left), "arrow"),
                      Column(f"right_{name}", values.take(pa, right), "arrow")]
        else:
            table += [Column(f"left_{name}", [values[d] for d in left]),
                      Column(f"right_{name}", [values[d] for d in right])]
    return table
