"""Pairs as a table: the pair columns beside the carried ones, in every table format."""
from __future__ import annotations

from typing import BinaryIO, Sequence

import numpy as np

from ..output.tables import Column, write_table


def write_pairs_table(pairs, ids: Sequence, out: BinaryIO, measure, *, columns: dict[str, Sequence[str]] | None = None,
                      fmt: str = "parquet") -> int:
    """The pairs as a table in ``fmt`` (Parquet; the text formats go through the compiled
    :class:`~allpairs.pairs.result.PairWriter`): left, right, the similarity (float64) or estimate,
    overlap, both sizes, then ``left_NAME``, ``right_NAME`` of each carried column."""
    cols = pairs._columns(None, measure)
    left = np.asarray(cols.pop("left"), np.int64).tolist()
    right = (np.asarray(cols.pop("right"), np.int64) + (pairs.n_left or 0)).tolist()
    table = [Column("left", [ids[d] for d in left]), Column("right", [ids[d] for d in right])]
    table += [Column(name, values, "float" if values.dtype.kind == "f" else "int") for name, values in cols.items()]
    for name, values in (columns or {}).items():
        table += [Column(f"left_{name}", [values[d] for d in left]), Column(f"right_{name}", [values[d] for d in right])]
    return write_table(out, fmt, table)
