"""Stage 6, rows out: tables of named columns written as TSV, CSV, JSON Lines or Parquet.

Every output that is a table (pairs and their carried columns, cluster
membership, dedup's kept and removed documents, index matches) goes through
one of two writers: :class:`~allpairs.pairs.result.PairWriter` (compiled, for
millions of pairs) or :func:`write_table` here. Both write a header row on
TSV and CSV unless told not to; TSV escapes a field's tab, line break,
backslash and other control characters (``\\t``, ``\\n``, ``\\\\``, ``\\xNN``),
CSV quotes by the rules of Python's :mod:`csv` module, JSON Lines writes one
object a row (numbers as numbers), Parquet needs pyarrow and writes typed
columns (text as strings, counts as int64, similarities as float64). A
carried column of JSON Lines or Parquet input (:mod:`allpairs.output.carried`)
keeps the input's types in JSON Lines and Parquet, and is text in TSV and CSV.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import BinaryIO, Callable, Iterable, Sequence

import numpy as np

from ..errors import UsageError, require_extra
from .carried import Carried, finite_json, json_column
from .escape import (csv_delimiter, csv_field, csv_header_start, csv_line_end, json_field, json_text, printable,
                     tsv_field, utf8)

#: Formats of tables; Parquet is binary and needs pyarrow.
TABLE_FORMATS = ("tsv", "csv", "jsonl", "parquet")

#: Rows rendered per write.
_BATCH = 1 << 14


@dataclass
class Column:
    """One column of a table: its name, its values, and what they are.

    ``kind`` is "text" (strings, escaped for the format), "int" (whole
    numbers), "number" (decimal text such as "0.777777", written as it is and
    as a float64 in Parquet), "float" (floats), "carried" (``values`` a
    :class:`Rows` of a carried column: text in TSV and CSV, typed values in
    JSON Lines and Parquet) or "arrow" (an Arrow array, Parquet only).
    """

    name: str
    values: Sequence
    kind: str = "text"


class Rows:
    """The values of a :class:`~allpairs.output.carried.Carried` column at the documents ``docs`` (positions):
    what a table writer slices and writes, as text, JSON text or Arrow values by format."""

    def __init__(self, column: Carried, docs: Sequence[int]):
        self.column, self.docs = column, docs

    def __len__(self) -> int:
        return len(self.docs)

    def __getitem__(self, key: slice) -> Rows:
        return Rows(self.column, self.docs[key])

    def texts(self) -> list[str]:
        return [self.column[d] for d in self.docs]

    def json_texts(self) -> list[str]:
        return Carried([self.column[d] for d in self.docs], bytes(self.column.kinds[d] for d in self.docs)).json_texts()

    def arrow(self, pa):
        return self.column.take(pa, self.docs)


def carried(prefix: str, columns: dict[str, Sequence[str]], docs: Sequence[int]) -> list[Column]:
    """The carried columns of the documents ``docs`` (positions), named ``prefix + name``; a
    :class:`~allpairs.output.carried.Carried` column keeps its types (JSON Lines and Parquet write them)."""
    return [Column(prefix + name, Rows(values, docs), "carried") if isinstance(values, Carried) else
            Column(prefix + name, [values[d] for d in docs]) for name, values in columns.items()]


def id_column(name: str, ids: Sequence[str], docs: Sequence[int]) -> Column:
    """The ids of the documents ``docs`` (positions) as the column ``name``: text, or, where the input's ids
    were integers (``ids`` a :class:`~allpairs.output.carried.Carried`), integers in JSON Lines and Parquet."""
    if isinstance(ids, Carried):
        return Column(name, Rows(ids, docs), "carried")
    if isinstance(ids, (list, tuple)) or len(docs) < 1024:
        return Column(name, [ids[d] for d in docs])
    # Ids read one by one (an index's, decoded from its bytes): each distinct document's once.
    distinct, where = np.unique(np.asarray(docs, np.int64), return_inverse=True)
    names = [ids[d] for d in distinct.tolist()]
    return Column(name, [names[k] for k in where.tolist()])


def _escape(fmt: str, literal: bool = False):
    return literal_tsv_field if literal and fmt == "tsv" else {"tsv": tsv_field, "csv": csv_field,
                                                              "jsonl": json_field}[fmt]


def literal_tsv_field(value: str) -> str:
    """A cell of IANA's TSV, as it is: what a TSV read literally gave (no tab, no "\n": backslashes and a
    lone "\r" all stay, so the row reads back the same); a cell holding a tab or a "\n" (never read so), or
    ending with "\r" (a CRLF to the reader), escaped as :func:`tsv_field` escapes it, since it would change
    the row."""
    return tsv_field(value) if "\t" in value or "\n" in value or value.endswith("\r") else value


def _cell(value, kind: str, esc) -> str:
    if kind == "text":
        return esc(str(value))
    if kind == "float":
        return repr(float(value))
    return str(value)


def _escaped(values, esc) -> list[str]:
    """``esc(str(v))`` of each value, each distinct text escaped once (ids repeat down a table of pairs or
    matches); only texts are looked up, so that 1, 1.0 and True, equal as keys, stay "1", "1.0", "True"."""
    done: dict[str, str] = {}
    out = []
    for v in values:
        if type(v) is str:
            e = done.get(v)
            if e is None:
                e = done[v] = esc(v)
            out.append(e)
        else:
            out.append(esc(str(v)))
    return out


def _cells(values, kind: str, fmt: str, esc) -> list[str]:
    if kind == "text":
        return _escaped(values, esc)
    if kind in ("int", "number"):
        return list(map(str, values))
    if kind != "carried":
        return [_cell(v, kind, esc) for v in values]
    return values.json_texts() if fmt == "jsonl" else [esc(t) for t in values.texts()]


def header_line(fmt: str, names: Sequence[str], literal: bool = False) -> str:
    """The header row of a TSV or CSV table ("" for the other formats), with its line end (``literal``: as
    :func:`write_table`)."""
    if fmt not in ("tsv", "csv"):
        return ""
    esc = _escape(fmt, literal)
    if fmt == "tsv":
        return "\t".join(esc(n) for n in names) + "\n"
    return csv_header_start() + _row(csv_delimiter().join(esc(n) for n in names), fmt, len(names)) + csv_line_end()


def _row(line: str, fmt: str, width: int) -> str:
    """A line of a table; in CSV a row of one empty cell quoted (``""``), which a blank line is not."""
    return '""' if not line and fmt == "csv" and width == 1 else line


def column_labels(names: Sequence[str]) -> list[str]:
    """A name for each column of a header, unique where the header's are: a name the header gives two
    columns or more only if it is empty (a spreadsheet's unnamed columns, ``id,text,,``), each such column
    then named by its number from 1 (as a table without a header names every column)."""
    unnamed = names.count("") > 1
    return [str(k + 1) if unnamed and not name else name for k, name in enumerate(names)]


def check_format(fmt: str, formats: Sequence[str] = TABLE_FORMATS) -> None:
    if fmt not in formats:
        raise UsageError(f"unknown output format {fmt!r}; choose one of {', '.join(formats)}")


def refuse_names_twice(names: Sequence[str]) -> None:
    """A usage error for a table with two columns of one name (a carried ``size`` beside the pair's
    ``left_size``): every format would lose one of them, Parquet silently."""
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise UsageError(f"the output would have two columns named {twice[0]!r}; carry the column under another "
                         "name or leave it out")


def write_table(out: BinaryIO, fmt: str, columns: Sequence[Column], *, header: bool = True,
                progress: Callable[[int, int], None] | None = None, literal: bool = False,
                header_names: Sequence[str] | None = None) -> int:
    """Write the rows of ``columns`` (all of one length) to the binary stream ``out``; return the rows written.

    TSV and CSV start with a header row of the column names unless ``header`` is False. ``progress(done,
    total)`` is told the rows written after each batch. ``literal``: TSV cells and names are written as
    they are (:func:`literal_tsv_field`), for the rows of a TSV read literally written back.
    ``header_names``: the TSV or CSV header row where it is not the columns' names (a table's own header,
    whose unnamed columns are named by :func:`column_labels` in the other formats).
    """
    check_format(fmt)
    names = [c.name for c in columns]
    refuse_names_twice(names)
    n = len(columns[0].values) if columns else 0
    if fmt == "parquet":
        _write_parquet(out, columns)
        return n
    if header and fmt in ("tsv", "csv"):
        out.write(utf8(header_line(fmt, names if header_names is None else header_names, literal)))
    esc = _escape(fmt, literal)
    if fmt == "jsonl":
        keys = [json_field(c.name) + ": " for c in columns]
    sep = "\t" if fmt == "tsv" else csv_delimiter()
    end = csv_line_end() if fmt == "csv" else "\n"
    for lo in range(0, n, _BATCH):
        hi = min(lo + _BATCH, n)
        cells = [_cells(c.values[lo:hi], c.kind, fmt, esc) for c in columns]
        if fmt == "jsonl":
            lines = ["{" + ", ".join(k + v for k, v in zip(keys, row)) + "}" for row in zip(*cells)]
        else:
            lines = [_row(sep.join(row), fmt, len(columns)) for row in zip(*cells)]
        out.write(utf8(end.join(lines) + end))
        if progress is not None:
            progress(hi, n)
    return n


def write_source_rows(out: BinaryIO, fmt: str, rows, docs: Sequence[int]) -> int | None:
    """The input's rows ``docs`` (positions) written back with their types, or None where ``fmt`` cannot hold
    them so (TSV and CSV are text: the caller writes the carried text).

    ``rows`` is a JSON Lines file's record lines, written back to JSON Lines byte for byte, or to Parquet as
    Arrow types them (every record's fields; one that holds a number in one record and text in another as
    text); or a Parquet table, written to Parquet with its schema (types, nulls, nested lists) or to JSON
    Lines an object a row, numbers as numbers, lists as arrays, nulls as null, dates as ISO 8601."""
    if fmt not in ("jsonl", "parquet"):
        return None
    import json  # here: a run that writes no such rows does not load it

    if isinstance(rows, list):  # JSON Lines records
        if fmt == "jsonl":
            for lo in range(0, len(docs), _BATCH):
                out.write(utf8("".join(rows[d] + "\n" for d in docs[lo:lo + _BATCH])))
            return len(docs)
        pa, _ = pyarrow_modules()
        objs = [json.loads(rows[d]) for d in docs]
        fields = dict.fromkeys(k for obj in objs for k in obj)  # every record's fields, not the first's only
        _write_arrow(out, pa.table({k: json_column([obj.get(k) for obj in objs], pa) for k in fields}))
        return len(docs)
    pa, _ = pyarrow_modules()
    picked = rows.take(pa.array(np.asarray(docs, np.int64)))
    if fmt == "parquet":
        _write_arrow(out, picked)
        return len(docs)
    for batch in picked.to_batches(_BATCH):
        lines = (json_text(r) for r in batch.to_pylist())
        # NaN and infinities, which Python writes and no JSON reader takes, as null (as carried columns do).
        out.write(utf8("".join((finite_json(line) if "NaN" in line or "Infinity" in line else line) + "\n"
                               for line in lines)))
    return len(docs)


def write_id_list(out: BinaryIO, ids: Sequence) -> int:
    """One id a line, TSV-escaped (a tab or line break inside an id cannot break the line), no header:
    a list that names the lines of another file, line for line."""
    if ids:
        out.write(utf8("\n".join(tsv_field(str(i)) for i in ids) + "\n"))
    return len(ids)


def pyarrow_modules():
    """(pyarrow, pyarrow.parquet), or a one-line error naming the extra that installs them."""
    return require_extra("pyarrow", "Parquet"), require_extra("pyarrow.parquet", "Parquet")


def _arrow(values: Sequence, kind: str, pa):
    if kind in ("carried", "arrow"):  # a carried column's own types; Arrow values as they are
        return values.arrow(pa) if kind == "carried" else values
    if kind == "text":
        # Parquet strings are UTF-8: a file name's undecodable bytes as the text \xNN, as in JSON Lines.
        return pa.array([printable(str(v)) for v in values], pa.string())
    if kind == "int":
        return pa.array(np.asarray(values, np.int64))
    return pa.array(np.asarray([float(v) for v in values] if kind == "number" else values, np.float64))


def write_parquet_groups(out: BinaryIO, groups: Iterable[Sequence[Column]],
                         progress: Callable[[int], None] | None = None) -> int:
    """A Parquet file of one row group per item of ``groups`` (each the table's columns for its rows), written
    to ``out`` as it goes: the bytes ``pyarrow.parquet.write_table`` gives for the whole table when every
    group but the last has :data:`ROW_GROUP` rows. ``progress(rows)`` after each group; returns the rows."""
    pa, pq = pyarrow_modules()
    writer = None
    sink = _Forward(out)
    n = 0
    for columns in groups:
        if writer is None:
            refuse_names_twice([c.name for c in columns])  # a dict of columns would keep the last of a name
        table = pa.table({c.name: _arrow(c.values, c.kind, pa) for c in columns})
        if writer is None:
            writer = pq.ParquetWriter(sink, table.schema)
        writer.write_table(table)
        n += table.num_rows
        if progress is not None:
            progress(n)
    if writer is not None:
        writer.close()
    return n


#: Rows of a Parquet row group: pyarrow's default (``write_table`` cuts a table into groups of this many).
ROW_GROUP = 1 << 20


def write_parquet_slices(out: BinaryIO, slices: Iterable[Sequence[Column]]) -> int:
    """A Parquet file of the rows of ``slices`` (consecutive pieces of one table, of any number of rows, at least
    one piece): the bytes :func:`write_table` gives for the whole table. Each piece becomes Arrow arrays as it
    comes and they are regrouped into row groups of :data:`ROW_GROUP` rows (:func:`write_parquet_groups`), so
    that a row group is held as Arrow arrays, never as Python values; returns the rows."""
    pa, _ = pyarrow_modules()

    def groups():
        names, first, pieces, held, made = None, [], [], 0, 0
        for columns in slices:
            arrays = [_arrow(c.values, c.kind, pa) for c in columns]
            if names is None:
                names, first = [c.name for c in columns], arrays  # an empty table's file has their schema
            rows = len(arrays[0]) if arrays else 0
            lo = 0
            while lo < rows:
                take = min(ROW_GROUP - held, rows - lo)
                pieces.append([a.slice(lo, take) for a in arrays])
                held, lo = held + take, lo + take
                if held == ROW_GROUP:
                    yield _group(names, pieces, pa)
                    pieces, held, made = [], 0, made + 1
        if pieces or not made:
            yield _group(names, pieces or [first], pa)

    return write_parquet_groups(out, groups())


def _group(names: list[str], pieces: list[list], pa) -> list[Column]:
    """One row group's columns from its pieces (one list of Arrow arrays each), chunked, not copied."""
    return [Column(name, pa.chunked_array([p[k] for p in pieces]), "arrow") for k, name in enumerate(names)]


class _Forward:
    """A file for pyarrow's writer that hands each write on to ``out`` (a stream that only writes)."""

    closed = False

    def __init__(self, out: BinaryIO):
        self.out = out
        self.position = 0

    def write(self, data) -> int:
        self.out.write(bytes(data))
        self.position += len(data)
        return len(data)

    def tell(self) -> int:
        return self.position

    def flush(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True


def _write_parquet(out: BinaryIO, columns: Sequence[Column]) -> None:
    pa, _ = pyarrow_modules()
    _write_arrow(out, pa.table({c.name: _arrow(c.values, c.kind, pa) for c in columns}))


def _write_arrow(out: BinaryIO, table) -> None:
    """An Arrow table as one Parquet file, to the stream ``out``."""
    pa, pq = pyarrow_modules()
    buf = pa.BufferOutputStream()
    pq.write_table(table, buf)
    out.write(buf.getvalue().to_pybytes())
