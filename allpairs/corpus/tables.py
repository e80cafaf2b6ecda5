"""Stage 1 for tables: CSV, TSV and Parquet, a row a document.

A row's text is one column, or several joined by a space (``--text-col``,
repeatable); its id is the ``--id-col`` column, by default the ``id`` column
when there is one, else the row number (1 for the first row after the
header); ``--keep-col`` columns are carried into every output beside the id.

CSV is read as Python's :mod:`csv` module reads it (the ``excel`` dialect):
quoted fields may hold the delimiter, line breaks and quotes written twice;
``delimiter`` (``;``, ``|``: the name csvkit and sqlite-utils give the option)
reads a CSV split by another character than the comma.
TSV is read literally, as the IANA text/tab-separated-values format defines
it: a line a record, fields split at tabs, a quote an ordinary character (an
inch mark, a quoted title); ``quotechar='"'`` reads quoted TSV as CSV is read
(the name csvkit and sqlite-utils give the option). The first row is the
header unless ``header=False``, when columns are named by number from 1. A
malformed quote, a row with more or fewer fields than the header, a NUL
byte, a column named twice and an id given twice are errors naming the line.
Parquet is read by pyarrow (the ``parquet`` extra), locally; a column of
lists of strings can be joined as sets (``tokens_col``); ids are strings or
integers, texts strings (dictionary-encoded ones too), as everywhere.
"""
from __future__ import annotations

import csv
import io
import json
import os
from typing import Sequence

from ..errors import InputError, UsageError, require_extra
from .model import Corpus
from ..output.carried import Carried
from ..output.tables import column_labels
from .records import Records, cell_text, fields_of
from .linefile import MAX_LINE_BYTES, ArrowTokenSets, read_line_file, stdin_bytes

#: The delimiter of each table kind, and the quote character it is read with by default (None: no quoting).
DELIMITERS = {"csv": ",", "tsv": "\t"}
QUOTECHARS = {"csv": '"', "tsv": None}


def read_table(path: str | os.PathLike, kind: str = "csv", *, id_col: str | None = None,
               text_cols: str | Sequence[str] | None = None, keep: str | Sequence[str] = (), header: bool = True,
               tokens_col: str | None = None, encoding: str = "utf-8", quotechar: str | None = None,
               keep_all: bool = False, delimiter: str | None = None) -> Corpus:
    """A CSV, TSV or Parquet file ('-': stdin), each row a document; see the module docstring.

    Parameters
    ----------
    kind : "csv", "tsv" or "parquet"
    id_col : str, optional
        The id column; default ``id`` when the table has one, else row numbers.
    text_cols : str or list of str, optional
        The text column(s), joined by a space; default ``text``, or the only
        column of a table of one column.
    keep : str or list of str
        Columns carried into the output.
    header : bool
        CSV/TSV: the first row names the columns (else they are 1, 2, ...).
    tokens_col : str, optional
        Parquet: a column of lists of strings, joined as sets (no text column then).
    quotechar : str, optional
        CSV/TSV: the character that quotes a field; default ``"`` for CSV and
        none for TSV (fields read literally).
    delimiter : str, optional
        CSV: the character between fields; default ``,`` (``;`` for a
        spreadsheet saved where the comma is the decimal mark).
    keep_all : bool
        Carry every column but the id (``keep`` empty then); the corpus's
        ``header`` names them all in the table's order, so that a row can be
        written back as it came.

    Raises
    ------
    InputError
        Malformed CSV, a row of the wrong width, an id given twice, a Parquet
        file that cannot be read.
    UsageError
        A column named that the header lacks (the message lists the columns
        there are), a JSON Lines file read as CSV, pyarrow missing for Parquet
        (the message names the extra).
    """
    text_cols = [text_cols] if isinstance(text_cols, str) else list(text_cols or [])
    keep = [keep] if isinstance(keep, str) else list(keep)  # one name, not its letters
    if delimiter is not None and kind != "csv":
        why = "a TSV is split at tabs" if kind == "tsv" else "Parquet has no delimiter"
        raise UsageError(f"{{{{delimiter}}}} goes with {{{{kind=csv}}}}; {why}", param="delimiter")
    if kind == "parquet":
        if quotechar is not None:
            raise UsageError("{{quotechar}} goes with {{kind=csv}} and {{kind=tsv}}; Parquet has no quoting",
                             param="quotechar")
        return _read_parquet(path, id_col, text_cols, keep, tokens_col, keep_all)
    if kind not in DELIMITERS:
        raise UsageError(f"unknown table kind {kind!r}; choose csv, tsv or parquet")
    sep = DELIMITERS[kind] if delimiter is None else delimiter
    if len(sep) != 1 or sep.isalnum() or sep in "\r\n.\"":
        raise UsageError(f"{{{{delimiter}}}} {sep!r} is not one character that can split a row; give one such as "
                         "';' or '|' (not a letter, a digit, '.', a quote or a line break)", param="delimiter")
    if quotechar is not None and (len(quotechar) != 1 or quotechar in "\t\r\n" + sep):
        raise UsageError(f"{{{{quotechar}}}} {quotechar!r} is not one character that can quote a field; "
                         "give one such as '\"'", param="quotechar")
    quote = QUOTECHARS[kind] if quotechar is None else quotechar
    # The csv module ends a line at a lone "\r" too; literal TSV at "\n" only (a file of "\r" ends refused).
    lines = read_line_file(path, encoding, cr_ends=quote is not None)
    name, bom = lines.name, lines.bom
    text = lines.data.decode("utf-8", "surrogatepass")
    del lines
    if csv.field_size_limit() < MAX_LINE_BYTES:
        csv.field_size_limit(MAX_LINE_BYTES)  # a field as long as a line may be
    if quote is None:  # literal: a line a record, no character special but the tab
        rows = _literal_rows(text, sep)
    else:
        reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep, quotechar=quote, doublequote=True,
                            strict=True)
        rows = _rows(reader, name, kind)
    columns = None
    if header:
        for line, row in rows:
            if row:  # blank lines before the header are no rows
                columns = row
                break
        _refuse_json_lines(text, name, kind)
        if columns is None:
            return Corpus(ids=[], texts=[], kind=kind, notes=[f"{name} has no header row"])
    width = len(columns) if columns is not None else None
    sample: list[str] = []  # a one-column table's first cells: is it split by another delimiter?
    records: Records | None = None
    by_row = False
    n = 0
    repeats = []  # lines that repeat the header: tables joined by cat, each line then read as a document
    for line, row in rows:
        if not row:  # a blank line: a row of one empty field in a table of one column (an empty title), else none
            if width != 1:
                continue
            row = [""]
        where = f"{name}:{line}"
        if width is None:  # no header: the first row says how wide the table is
            width = len(row)
            columns = [str(k + 1) for k in range(width)]
        if records is None:
            pick = _pick(columns, name, header, id_col, text_cols, keep, keep_all, kind, sep)
            by_row = pick.id is None
            records = Records([pick.labels[c] for c in pick.keep])
        if len(row) != width:
            what = "the header has" if header else "the first row has"
            held = {",": "a comma", "\t": "a tab", ";": "a semicolon", "|": "a bar"}.get(sep, repr(sep))
            fix = (f"quote a field that holds {held} or a line break"
                   if quote is not None else "a field of literal TSV holds no tab; read quoted TSV with "
                   "--quotechar '\"'")
            if width == 1 and header:  # a header of one column: split by another delimiter (a ';' export)?
                _refuse_other_delimiter(f"{where}: {len(row)} fields, {what} 1", kind, sep, columns[0], [])
            raise InputError(f"{where}: {len(row)} fields, {what} {width}; {fix}")
        if header and row == columns:
            repeats.append(line)
        n += 1
        if header and width == 1 and len(sample) < _SAMPLE:
            sample.append(row[0])
        doc_id = str(n) if by_row else row[pick.id]
        records.add(where, line, doc_id, " ".join(row[c] for c in pick.texts), [row[c] for c in pick.keep])
    if records is None:
        if columns is not None:  # a bad column name is refused all the same
            _pick(columns, name, header, id_col, text_cols, keep, False, kind, sep)
        return Corpus(ids=[], texts=[], kind=kind)
    if sample:
        _refuse_other_delimiter(name, kind, sep, columns[0], sample)
    notes = [f"ids are row numbers: {name} has no 'id' column (--id-col names one)"] if by_row and header else []
    if repeats:
        notes.append(f"{name}:{repeats[0]}: the row repeats the header{_more(len(repeats) - 1, 'other')}, and is "
                     "read as a document: were tables joined with their headers? drop the repeats")
    corpus = records.corpus(kind, notes)
    corpus.id_column = None if by_row else columns[pick.id]
    corpus.header = list(columns) if keep_all else None
    if kind == "csv":  # written back as it was read: its delimiter, quotes, line ends and byte-order mark
        end = text.find("\n")
        corpus.dialect = (sep, quote, "\r\n" if end > 0 and text[end - 1] == "\r" else "\n", bom)
    return corpus


#: Rows of a one-column table looked at for another delimiter.
_SAMPLE = 100


def _pick(columns, name: str, header: bool, id_col, text_cols, keep, keep_all: bool, kind: str,
          sep: str) -> "_Columns":
    """:class:`_Columns` of the header; a column named but missing from a header of one column that another
    delimiter splits into the named ones (a ';' export read as CSV) says to read it with that delimiter."""
    try:
        return _Columns(columns, name, header, id_col, text_cols, keep, keep_all)
    except UsageError:
        if header and len(columns) == 1:
            _refuse_other_delimiter(f"{name}: the column named is not in its header", kind, sep, columns[0], [])
        raise


def _refuse_other_delimiter(name: str, kind: str, sep_read: str, head: str, cells: list[str]) -> None:
    """A table read as one column whose header and first rows each hold another delimiter as many times (a
    TSV read as CSV, a CSV read as TSV, a spreadsheet's ';'-separated CSV): each line would be one text,
    its id and every column in it, and the ids row numbers."""
    uneven = not cells  # no rows given: a row of another width than the header's was met, ``name`` says where
    cells = [cell for cell in cells if cell]  # a blank line: an empty row
    for sep, what in (("\t", "tabs"), (",", "commas"), (";", "semicolons"), ("|", "bars")):
        k = head.count(sep)
        if sep == sep_read or not k or not (cells or uneven) or any(cell.count(sep) != k for cell in cells):
            continue
        held = f"{k} {what if k > 1 else what[:-1]}"
        where = (f"{name} ({head!r}, {held})" if uneven else
                 f"{name}: its header ({head!r}) and its rows each hold {held}, so the table would be read as one "
                 "column: each line one text, every field in it, ids row numbers")
        if sep == "\t":
            raise UsageError(f"{where}: read it with {{{{kind=tsv}}}}", param="kind")
        if kind == "tsv":
            fix = f"{{{{kind=csv}}}}" + ("" if sep == "," else f" and {{{{delimiter={sep}}}}}")
            raise UsageError(f"{where}: read it with {fix}", param="kind")
        fix = "without {{delimiter}} (a CSV is split at commas)" if sep == "," else f"with {{{{delimiter={sep}}}}}"
        raise UsageError(f"{where}: read it {fix}", param="delimiter")


def _more(n: int, what: str) -> str:
    return f" (as do {n:,} {what}{'s' if n > 1 else ''})" if n else ""


def _refuse_json_lines(text: str, name: str, kind: str) -> None:
    """A file of JSON objects read as a table: its first record would be taken for the header."""
    first = text[:1 << 20].lstrip("\ufeff \t\r\n").split("\n", 1)[0].strip()
    if first.startswith("{") and first.endswith("}"):
        try:
            is_object = isinstance(json.loads(first), dict)
        except ValueError:
            is_object = False
        if is_object:
            raise UsageError(f"{name} looks like JSON Lines (its first line is a JSON object), not "
                             f"{kind.upper()}; read it with {{{{kind=jsonl}}}}", param="kind")


def _rows(reader, name: str, kind: str):
    """(line the record starts on, fields) of each record, a blank line's none; malformed CSV as an
    InputError."""
    while True:
        start = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as e:
            raise InputError(f"{name}:{start}: not valid {kind.upper()} ({e}); a quoted field ends with a quote "
                             "before the delimiter, and a quote inside one is written twice") from None
        yield start, row


def _literal_rows(text: str, sep: str):
    """(line, fields) of each line of a literal TSV, a blank line's none: a line ends at "\n" (a "\r" before
    it is the CRLF's), as for ``--lines``; a lone "\r" is a character of its field, which the csv module
    would take for the end of the row, splitting it in two (two titles of a one-column table)."""
    start, line, end = 0, 0, len(text)
    while start < end:
        stop = text.find("\n", start)
        stop = end if stop < 0 else stop
        row = text[start:stop - 1 if stop > start and text[stop - 1] == "\r" else stop]
        line += 1
        yield line, row.split(sep) if row else []
        start = stop + 1


class _Columns:
    """Positions of the id, text and kept columns in a header (or in numbered columns)."""

    def __init__(self, columns: Sequence[str], name: str, header: bool, id_col, text_cols, keep,
                 keep_all: bool = False) -> None:
        self.names = list(columns)
        self.labels = column_labels(self.names)  # unnamed columns (``id,text,,``) by number: carried apart
        self.where = name
        self.header = header
        if not text_cols:
            text_cols = ["text"] if "text" in self.names or len(self.names) != 1 else [self.names[0]]
        self.texts = [self.find(c, "text_cols") for c in text_cols]
        self.keep = [self.find(c, "keep") for c in keep]
        if id_col is not None:
            self.id = self.find(id_col, "id_col")
        else:  # the id column by default; two of them are refused as when named
            self.id = self.find("id", "id_col") if header and "id" in self.names else None
        if keep_all:  # every column but the id, in the table's order
            self.keep = [k for k in range(len(self.names)) if k != self.id]
            for k in self.keep:  # a name twice is refused, as for --keep-col: one of them was dropped silently
                if self.labels[k] == self.names[k]:  # unless empty: a spreadsheet's unnamed columns, by number
                    self.find(self.names[k], "keep_all")
                elif self.labels[k] in self.names:
                    raise InputError(f"{self.where}: column {k + 1} has no name, and is carried as {self.labels[k]!r}, "
                                     f"as column {self.names.index(self.labels[k]) + 1} is named; rename one")

    def find(self, column: str, param: str) -> int:
        """The position of ``column``, named by the parameter ``param``."""
        if column not in self.names:
            if self.header:
                raise UsageError(f"{self.where}: no column {column!r} (its header has {fields_of(self.names)}); "
                                 f"name one with {{{{{param}}}}}", param=param)
            raise UsageError(f"{self.where}: no column {column!r}: without a header, columns are numbered 1 to "
                             f"{len(self.names)}; name one by number with {{{{{param}}}}}", param=param)
        at = [k for k, c in enumerate(self.names) if c == column]
        if len(at) > 1:
            raise InputError(f"{self.where}: column {column!r} appears {len(at)} times in the header "
                             f"(columns {', '.join(str(k + 1) for k in at)}); rename one")
        return at[0]


def _types():
    import pyarrow as pa

    return pa.types


def is_text(typ) -> bool:
    """Whether a pyarrow type holds strings: string, large string, or a dictionary of them (a pandas
    categorical)."""
    t = _types()
    if t.is_dictionary(typ):
        typ = typ.value_type
    return t.is_string(typ) or t.is_large_string(typ) or getattr(t, "is_string_view", lambda _: False)(typ)


def is_id(typ) -> bool:
    """Whether a pyarrow type holds ids as everywhere else: strings or integers (dictionary-encoded too)."""
    t = _types()
    if t.is_dictionary(typ):
        typ = typ.value_type
    return is_text(typ) or t.is_integer(typ)


def is_token_lists(typ) -> bool:
    t = _types()
    return t.is_list(typ) or t.is_large_list(typ)


def _carried(values: list) -> Carried:
    """A Parquet column's values carried: their texts (:func:`~allpairs.corpus.records.cell_text`) and types."""
    column = Carried()
    for v in values:
        column.append_value(cell_text(v), v)
    return column


def _pyarrow():
    """pyarrow.parquet, or a one-line error naming the extra that installs it."""
    return require_extra("pyarrow.parquet", "{{kind=parquet}}")


def _read_parquet(path, id_col, text_cols, keep, tokens_col, keep_all=False) -> Corpus:
    pq = _pyarrow()
    import pyarrow as pa

    name = "<stdin>" if str(path) == "-" else os.fspath(path)
    if str(path) != "-" and not os.path.exists(path):
        raise UsageError(f"{path}: no such file or directory")
    try:
        if str(path) == "-":
            source = pa.BufferReader(stdin_bytes().read())
            schema = pq.read_schema(source)
        else:  # a file, or a directory of them (a dataset, as Spark writes it)
            source = os.fspath(path)
            schema = pq.ParquetDataset(source).schema if os.path.isdir(source) else pq.read_schema(source)
    except (OSError, pa.ArrowException) as e:
        raise InputError(f"{name}: cannot read as Parquet ({str(e).splitlines()[0]})") from None
    names = list(schema.names)
    if tokens_col is not None and text_cols:
        raise UsageError("give {{text_cols}} or {{tokens_col}}, not both", param="tokens_col")
    pick = _Columns(names, name, True, id_col, [tokens_col] if tokens_col else text_cols, keep, keep_all)
    unnamed = [k + 1 for k in pick.keep if pick.labels[k] != names[k]]
    if unnamed:  # Arrow columns go by name: one of two unnamed ones would be lost
        raise InputError(f"{name}: columns {', '.join(map(str, unnamed))} have no name; name them, or leave them out")
    wanted = sorted({*pick.texts, *pick.keep, *([pick.id] if pick.id is not None else [])})
    try:
        table = pq.read_table(source, columns=[names[k] for k in wanted])
    except (OSError, pa.ArrowException) as e:
        raise InputError(f"{name}: cannot read as Parquet ({str(e).splitlines()[0]})") from None
    column = {k: table.column(names[k]) for k in wanted}
    for k in pick.texts:
        typ = column[k].type
        if not (is_token_lists(typ) if tokens_col else is_text(typ)):
            raise InputError(f"{name}: column {names[k]!r} holds {typ}, not "
                             f"{'lists of strings' if tokens_col else 'strings'}")
    if pick.id is not None and not is_id(column[pick.id].type):
        raise InputError(f"{name}: column {names[pick.id]!r} holds {column[pick.id].type}; ids are strings or "
                         f"integers: cast it (CAST({names[pick.id]} AS VARCHAR), or in pandas "
                         f".astype(str)) or name another column with {{{{id_col}}}}", param="id_col")
    arrow_only = set(pick.texts) - {*pick.keep, pick.id} if tokens_col else set()  # token lists: below
    values = {k: column[k].to_pylist() for k in wanted if k not in arrow_only}
    n = table.num_rows
    texts = [] if tokens_col else [values[k] for k in pick.texts]
    joined = [""] * n if tokens_col else [" ".join(t[r] or "" for t in texts) for r in range(n)]
    notes = [f"ids are row numbers: {name} has no 'id' column (--id-col names one)"] if pick.id is None else []
    if pick.id is None:  # row numbers: unique, nothing to check, no Python object per row but the id
        corpus = Corpus(ids=[str(k + 1) for k in range(n)], texts=joined,
                        columns={names[k]: _carried(values[k]) for k in pick.keep},
                        kind="parquet", notes=notes)
    else:
        records = Records([names[k] for k in pick.keep], unit="row", typed=True)
        for r, doc_id in enumerate(values[pick.id]):
            if doc_id is None:
                raise InputError(f"{name}: row {r + 1:,}: the id is null")
            records.add(f"{name}: row {r + 1:,}", r + 1, doc_id if isinstance(doc_id, str) else str(int(doc_id)),
                        joined[r], [values[k][r] for k in pick.keep], doc_id)
        corpus = records.corpus("parquet", notes)
        if isinstance(corpus.ids, Carried):  # integer ids: Parquet output writes the column's own type
            corpus.ids.source = column[pick.id]
    for k in pick.keep:  # the Arrow column too: Parquet output writes it with its type
        corpus.columns[names[k]].source = column[k]
    corpus.id_column = None if pick.id is None else names[pick.id]
    corpus.header = names if keep_all else None
    if keep_all:  # every column was read: the rows with their types, to be written back as they came
        corpus.rows = table
    if tokens_col:  # held as Arrow holds them and hashed from its buffers: no Python string per token
        corpus.texts = None
        corpus.sets = ArrowTokenSets(column[pick.texts[0]])
    return corpus
