"""Writing query matches and dedup results as tables: TSV (default), CSV, JSON Lines or Parquet, a row each.

The similarity is the measure's exact value truncated (never rounded up) to 6
decimals, as :mod:`allpairs.pairs` prints it; overlap prints its whole count.
Ids are escaped as in :mod:`allpairs.pairs`; TSV and CSV start with a header
row unless ``header`` is False (see :mod:`allpairs.output.tables`).
"""
from __future__ import annotations

from typing import BinaryIO, Sequence

from ..errors import UsageError
from ..measures import Measure
from ..pairs.result import similarity_floats, similarity_texts
from ..output.tables import Column, carried, column_labels, write_source_rows, write_table
from ..output.tables import id_column as column_of_ids  # write_records has a parameter named id_column


#: The columns of a match row beside the carried ones (CSV, JSON Lines and Parquet write them all).
MATCH_COLUMNS = ("query", "indexed", "similarity", "overlap", "query_size", "indexed_size")


def refuse_carried_names(side: str, names) -> None:
    """A usage error for a carried column that a match row would write under the name of one of its own
    (``size`` as ``indexed_size``, beside the set sizes): refused when the index is built, since every
    query in CSV, JSON Lines or Parquet would fail."""
    for name in names:
        if f"{side}_{name}" in MATCH_COLUMNS:
            raise UsageError(f"the index would carry a column named {name!r}, which queries would write as "
                             f"'{side}_{name}' beside the column of the set sizes; rename it in the input, or "
                             "carry only other columns ({{keep}})", param="keep")


def write_rows(out: BinaryIO, fmt: str, names: tuple[str, str], left: Sequence[int], right: Sequence[int],
               row: Measure, overlap: Sequence[int], left_size: Sequence[int], right_size: Sequence[int], *,
               left_ids: Sequence[str], right_ids: Sequence[str], left_columns: dict | None = None,
               right_columns: dict | None = None, header: bool = True) -> int:
    """One row per (left, right) pair of documents (positions into ``left_ids`` and ``right_ids``), the
    columns of :func:`pair_rows`."""
    return write_table(out, fmt, pair_rows(fmt, names, left, right, row, overlap, left_size, right_size,
                                           left_ids=left_ids, right_ids=right_ids, left_columns=left_columns,
                                           right_columns=right_columns), header=header)


def pair_rows(fmt: str, names: tuple[str, str], left: Sequence[int], right: Sequence[int], row: Measure,
              overlap: Sequence[int], left_size: Sequence[int], right_size: Sequence[int], *,
              left_ids: Sequence[str], right_ids: Sequence[str], left_columns: dict | None = None,
              right_columns: dict | None = None) -> list[Column]:
    """The columns of a table of (left, right) pairs of documents: both ids and the similarity (text
    truncated to 6 decimals; in Parquet the float nearest it, as ``join`` writes it); CSV, JSON Lines and
    Parquet add the overlap and both sizes; then each side's carried columns, as
    ``NAME_COLUMN`` with the side's name (``query_text``, ``indexed_text``)."""
    a, b = names
    if row.integer_threshold:
        sims = Column("similarity", similarity_texts(row, overlap, left_size, right_size), "int")
    elif fmt == "parquet":
        sims = Column("similarity", similarity_floats(row, overlap, left_size, right_size).tolist(), "float")
    else:
        sims = Column("similarity", similarity_texts(row, overlap, left_size, right_size), "number")
    table = [column_of_ids(a, left_ids, left), column_of_ids(b, right_ids, right), sims]
    if fmt != "tsv":
        table += [Column("overlap", overlap, "int"), Column(f"{a}_size", left_size, "int"),
                  Column(f"{b}_size", right_size, "int")]
    for name in dict.fromkeys([*(left_columns or {}), *(right_columns or {})]):
        for side, docs, cols in ((a, left, left_columns), (b, right, right_columns)):
            if name in (cols or {}):
                table += carried(f"{side}_", {name: cols[name]}, docs)
    return table


def write_ids(out: BinaryIO, ids: Sequence[str], docs: Sequence[int], fmt: str = "tsv", *,
              columns: dict | None = None, header: bool = True) -> int:
    """A row per document ``docs`` (positions into ``ids``): its id and its carried columns."""
    return write_table(out, fmt, [column_of_ids("id", ids, docs), *carried("", columns or {}, docs)],
                       header=header)


def write_records(out: BinaryIO, names: Sequence[str], id_column: str | None, ids: Sequence[str], docs: Sequence[int],
                  columns: dict, fmt: str = "tsv", *, header: bool = True, rows=None, literal: bool = False) -> int:
    """A row per document ``docs`` (positions) as the input had it: every column of ``names`` in that order,
    under its own name, the id column (``id_column``) holding the ids, the others from ``columns``; with
    the input's ``rows`` (:attr:`Corpus.rows`), JSON Lines and Parquet get each row with its types
    (:func:`~allpairs.output.tables.write_source_rows`); ``literal``, a TSV read literally: TSV cells as
    they came, not escaped (a backslash stays one; see :func:`~allpairs.output.tables.write_table`)."""
    if rows is not None:
        written = write_source_rows(out, fmt, rows, docs)
        if written is not None:
            return written
    labels = column_labels(names)  # a spreadsheet's unnamed columns: by number, but in TSV and CSV's header
    return write_table(out, fmt, [column_of_ids(name, ids, docs) if name == id_column else
                                  Column(label, [columns[label][d] for d in docs])
                                  for name, label in zip(names, labels)], header=header, literal=literal,
                       header_names=names)
