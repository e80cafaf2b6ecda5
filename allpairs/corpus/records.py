"""Documents from records: JSON Lines read a record a document, and what every record reader shares
(ids checked unique, fields named in messages, cells as text, columns carried)."""
from __future__ import annotations

import functools
import json
import os
import re
import sys
from typing import Sequence

from ..errors import InputError
from ..output.carried import JSON, STRING, Carried
from ..output.escape import bytes_text, json_text
from .linefile import read_line_file
from .model import Corpus


def fields_of(record: Sequence[str], most: int = 12) -> str:
    """The names of a record's fields (or a table's columns) for a message: the first ``most`` of them."""
    names = [str(k) for k in record]
    more = f", and {len(names) - most:,} more" if len(names) > most else ""
    return ", ".join(names[:most]) + more if names else "none"


def cell_text(value) -> str:
    """A carried value as text, one rule for every input: a string as it is, nothing (None) as "", a date
    or time as ISO 8601 (``2024-05-01T12:30:00``), bytes as base64 (``AP8=``), anything else as its JSON
    (``true``, ``2.5``, ``[1, 2]``)."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray)):
        return bytes_text(value)
    if value is None:
        return ""
    iso = getattr(value, "isoformat", None)
    if callable(iso):
        return iso()
    return json_text(value)


#: A lone surrogate: half of a UTF-16 pair, which no UTF-8 text holds (JSON's "\ud800" escape makes one).
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def refuse_surrogates(value: str, where: str, what: str) -> None:
    """An InputError naming ``where`` if ``value`` holds a lone surrogate, which no output could write
    unambiguously as UTF-8 (so none is ever read)."""
    m = _LONE_SURROGATE.search(value)
    if m:
        raise InputError(f"{where}: {what} holds a lone surrogate \\u{ord(m.group()):04x} (half of a UTF-16 "
                         "pair, not a character; a JSON escape makes one): give the pair or the character")


class Records:
    """Documents read record by record from a table or JSON Lines: ids (given, or numbered), texts and
    carried columns; an id given twice is an error naming the places of both: lines (a table's record
    that spans lines by the line it starts on), or ``unit`` ("row" for Parquet)."""

    def __init__(self, keep: Sequence[str], unit: str = "line", id_name: str = "id", escapes: bool = False,
                 text_names: Sequence[str] = ("text",), typed: bool = False) -> None:
        self.unit = unit
        self.text_names = ", ".join(map(repr, text_names))
        self.id_name = id_name
        self.escapes = escapes  # whether a value may hold a lone surrogate (JSON escapes; UTF-8 text holds none)
        self.ids: list = []
        self.texts: list[str] = []
        # typed (JSON Lines, Parquet): each column a Carried, its values' types kept beside their texts
        self.typed = typed
        self.columns: dict[str, list[str]] = {name: Carried() if typed else [] for name in keep}
        # typed: whether each id was an integer or a string in the input (JSON Lines and Parquet write it back so)
        self.id_kinds = bytearray() if typed else None
        self.seen: dict = {}

    def add(self, where: str, place: int, doc_id, text: str, kept: Sequence, id_value=None) -> None:
        """One document: its id (already a string; ``id_value`` the input's value, an integer or a string),
        text and carried values, found at ``where`` (file:line), the ``place``-th line (or row) of its file.
        A lone surrogate in any of them is refused."""
        if doc_id == "":  # a table's empty cell is its null: it names no document in the output
            raise InputError(f"{where}: the id is empty; every record needs one (fill it in, or drop the record)")
        if doc_id in self.seen:
            raise InputError(f"{where}: id {doc_id!r} already used on {self.unit} {self.seen[doc_id]:,}")
        if self.escapes:
            refuse_surrogates(doc_id, where, f"field {self.id_name!r}")
            refuse_surrogates(text, where, f"the text ({self.text_names})")
        self.seen[doc_id] = place
        self.ids.append(doc_id)
        if self.id_kinds is not None:
            self.id_kinds.append(JSON if isinstance(id_value, int) and not isinstance(id_value, bool) else STRING)
        self.texts.append(text)
        for (name, values), value in zip(self.columns.items(), kept):
            cell = cell_text(value)
            if self.escapes:
                refuse_surrogates(cell, where, f"field {name!r}")
            if self.typed:
                values.append_value(cell, value)
            else:
                values.append(cell)

    def add_column(self, name: str) -> None:
        """Carry one more column, "" (nothing, null) for the documents read before it appeared."""
        if self.typed:
            self.columns[name] = Carried()
            self.columns[name].pad(len(self.ids))
        else:
            self.columns[name] = [""] * len(self.ids)

    def corpus(self, kind: str, notes: list[str]) -> Corpus:
        """The documents read; ids of which some were integers as a :class:`Carried` that says which."""
        ids = Carried(self.ids, self.id_kinds) if self.id_kinds and JSON in self.id_kinds else self.ids
        return Corpus(ids=ids, texts=self.texts, columns=self.columns, kind=kind, notes=notes)


def id_text(value, where: str, name: str) -> str:
    """An id field's value as the id (a string or an integer, as text), else an error naming the field."""
    if not isinstance(value, (str, int)) or isinstance(value, bool):
        raise InputError(f"{where}: field {name!r} holds {json.dumps(value)[:40]}; ids are strings or integers, "
                         "as in every input: write it as a string")
    return str(value)


def jsonl_object(line: str, where: str) -> dict | None:
    """One JSON Lines record as a dict, None for a blank line; ``where`` ("file:line") starts each error."""
    if not line.strip():
        return None
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as e:
        raise InputError(f"{where}: not valid JSON ({e.msg} at column {e.colno})") from None
    except RecursionError:
        raise InputError(f"{where}: JSON nested too deeply to read") from None
    except ValueError:  # an integer of more digits than Python converts
        raise InputError(f"{where}: a number of more than {sys.get_int_max_str_digits()} digits; "
                         "write such an id as a string") from None
    if not isinstance(obj, dict):
        raise InputError(f"{where}: expected a JSON object, got {json_type(obj)}")
    for key in obj:
        if line.count(_quoted(key)) > 1:  # cheap: a field written twice, or its name inside a value
            names = [name for name, _ in json.loads(line, object_pairs_hook=list)]
            twice = next((name for name in names if names.count(name) > 1), None)
            if twice is not None:
                raise InputError(f"{where}: field {twice!r} appears twice in the record; a JSON reader keeps one "
                                 "of them (Python the last) and drops the other: keep one")
            break
    return obj


@functools.lru_cache(maxsize=4096)
def _quoted(key: str) -> str:
    """A field name as JSON writes it (quoted, escaped)."""
    return json.dumps(key, ensure_ascii=False)


def json_type(value) -> str:
    """What JSON calls the type of a decoded value, for messages: ``null``, ``a number``, ``an array``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    kinds = ((str, "a string"), ((int, float), "a number"), (list, "an array"), (dict, "an object"))
    return next((name for kind, name in kinds if isinstance(value, kind)), type(value).__name__)


def jsonl_field(obj: dict, name: str, where: str, param: str):
    """The value of field ``name``, or an error listing the fields the record has and the parameter
    (``param``) that names another."""
    if name not in obj:
        raise InputError(f"{where}: no {name!r} field (the record has {fields_of(obj)}); "
                         f"name the field with {{{{{param}}}}}", param=param)
    return obj[name]


def jsonl_text(obj: dict, names: Sequence[str], where: str) -> str:
    """The text of a record: its text fields, strings, joined by a space."""
    parts = []
    for name in names:
        value = jsonl_field(obj, name, where, "text_field")
        if not isinstance(value, str):
            raise InputError(f"{where}: field {name!r} must be a string, got {json_type(value)}")
        parts.append(value)
    return " ".join(parts)


def jsonl_record(line: str, where: str, id_field: str = "id", text_field: str = "text") -> tuple[str, str] | None:
    """(id, text) of one JSON Lines record, None for a blank line; ``where`` ("file:line") starts each error.

    Raises
    ------
    InputError
        Not JSON, not an object, a field missing (the message lists the
        record's fields), an id that is not a string or an integer, a text
        that is not a string.
    """
    obj = jsonl_object(line, where)
    if obj is None:
        return None
    return id_text(jsonl_field(obj, id_field, where, "id_field"), where, id_field), jsonl_text(obj, [text_field], where)


def read_jsonl(path: str | os.PathLike, *, id_field: str | None = None, text_field: str | Sequence[str] = "text",
               keep: str | Sequence[str] = (), encoding: str = "utf-8", keep_all: bool = False) -> Corpus:
    """JSON Lines: one object per line with a text field (or several, joined by a space); blank lines are ignored.

    Ids are the ``id_field`` of each record; by default the ``id`` field, or,
    when no record has one, the line numbers (from 1, as for ``--lines``; the
    corpus's notes say so): records with and without ids are refused, naming
    a line of each. Ids are strings or integers; a lone surrogate (a JSON
    escape such as ``"\\ud800"``) in an id, a text or a carried field is
    refused, naming the line. ``keep`` names fields carried
    into the output beside each id, each a
    :class:`~allpairs.output.carried.Carried`: as text (a string as it is, a
    missing field or null as "", anything else as JSON) with each value's
    JSON type beside it, for outputs that keep types; the first record must
    have them. A field missing is an error that lists the fields the record has.
    ``keep_all`` carries every field but the id: the first record's, in its
    order, then each field a later record brings ("" for the records before
    it); the corpus's ``header`` lists them all, and its ``rows`` holds each
    record's line as it came.
    """
    lines = read_line_file(path, encoding)
    name = lines.name
    raw: list[str] = []  # keep_all: each record's line as it came, to be written back as it came
    text_fields = [text_field] if isinstance(text_field, str) else list(text_field)
    keep = [keep] if isinstance(keep, str) else list(keep)  # one name, not its letters
    records = Records(keep, id_name=id_field or "id", escapes=True, text_names=text_fields, typed=True)
    by_line = None  # whether ids are line numbers, decided at the first record
    first = 0  # the line of the first record
    for k in range(1, len(lines) + 1):
        where = f"{name}:{k}"
        obj = jsonl_object(lines.line(k - 1), where)
        if obj is None:
            continue
        if by_line is None:
            by_line = id_field is None and "id" not in obj
            first = k
            if keep_all:
                header = [str(f) for f in obj]
                known = set(header)
                keep = [f for f in header if by_line or f != (id_field or "id")]
                records = Records(keep, id_name=id_field or "id", escapes=True, text_names=text_fields, typed=True)
            for field_name in keep:
                jsonl_field(obj, field_name, where, "keep")
        if by_line:
            if "id" in obj:  # ids on some records only: line numbers would drop them silently
                raise InputError(f"{where}: this record has an 'id' field, the first record (line {first:,}) has "
                                 "none; give every record an id, or none")
            doc_id = str(k)
        else:
            if id_field is None and "id" not in obj:
                raise InputError(f"{where}: no 'id' field, the first record (line {first:,}) has one; give every "
                                 "record an id, or none")
            doc_id = id_text(jsonl_field(obj, id_field or "id", where, "id_field"), where, id_field or "id")
        if keep_all and not known.issuperset(obj):
            for f in obj:  # a field the first record lacks: carried too ("" before it), none dropped
                if f not in known:
                    known.add(f)
                    header.append(f)
                    keep.append(f)
                    records.add_column(f)
        # The id as text (not id_value): the Spark engine reads JSON Lines ids as strings, and both engines
        # write the same bytes; a Parquet input's integer ids stay integers on both.
        records.add(where, k, doc_id, jsonl_text(obj, text_fields, where), [obj.get(f) for f in keep])
        if keep_all:
            raw.append(lines.line(k - 1))
    notes = ["ids are line numbers: the records have no 'id' field (--id-col names one)"] if by_line else []
    corpus = records.corpus("jsonl", notes)
    corpus.id_column = None if by_line else (id_field or "id")
    if keep_all and by_line is not None:
        corpus.header = header
        corpus.rows = raw
    return corpus
