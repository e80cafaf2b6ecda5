"""A carried column with its types: each document's value as text (what TSV and CSV write, and what every
other use of a carried column reads), and as the input typed it (what JSON Lines and Parquet write).

A JSON Lines field's values are numbers, booleans, lists, objects, strings or null (an absent field is
null); a Parquet column's have its Arrow type. :class:`Carried` is the list of texts itself, so that
indexing it, ``len`` and iteration are a list's, plus one byte a value saying what the text is (a string,
a JSON value's text, or nothing) and, for a Parquet input, the Arrow column. From these:
:meth:`Carried.json_texts` gives each value as JSON text (a string quoted, a number as a number, null as
null; what a JSON Lines writer pre-encodes once a document), :meth:`Carried.arrow` one Arrow array over
every document (the input's own column, or the JSON values typed as Arrow infers them over all
documents: one type for every row group of a Parquet file written in pieces).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from .escape import json_field, json_raw

#: What a value's text is: the string itself, the JSON text of a value (number, boolean, list, object), or
#: "" for nothing (null, an absent field).
STRING, JSON, NULL = 0, 1, 2


def _json_kind(value) -> int:
    if value is None or (isinstance(value, float) and (value != value or value in (float("inf"), float("-inf")))):
        return NULL  # NaN and infinities have no JSON: null, as pandas writes them
    if isinstance(value, (str, bytes, bytearray)) or callable(getattr(value, "isoformat", None)):
        return STRING  # a date or time is carried as its ISO 8601 text, bytes as base64: a string in JSON
    return JSON


class Carried(list):
    """The texts of a carried column, one a document (the list itself), with their types.

    ``kinds`` holds :data:`STRING`, :data:`JSON` or :data:`NULL` for each text (by default every text a
    string); ``source`` is the Arrow column a Parquet input gave (None for JSON Lines values), row ``d``
    being document ``d``.
    """

    def __init__(self, texts: Sequence[str] = (), kinds: bytes | bytearray | None = None, source=None):
        super().__init__(texts)
        self.kinds = bytearray(kinds) if kinds is not None else bytearray(len(self))  # default: strings
        if len(self.kinds) != len(self):
            raise ValueError(f"{len(self.kinds):,} kinds for {len(self):,} texts")
        self.source = source
        self._arrow = None

    def append_value(self, text: str, value) -> None:
        """One more document: its value's text (as :func:`~allpairs.corpus.records.cell_text` makes it) and
        the value, whose type decides its kind."""
        self.append(text)
        self.kinds.append(_json_kind(value))

    def pad(self, n: int) -> None:
        """``n`` more documents with nothing (a field absent from them)."""
        self.extend([""] * n)
        self.kinds.extend(bytes([NULL]) * n)

    def json_texts(self) -> list[str]:
        """Each value as JSON text, escaped as :func:`~allpairs.output.escape.json_field` escapes a string."""
        def one(text: str, kind: int) -> str:
            if kind == STRING:
                return json_field(text)
            if kind == NULL:
                return "null"
            if "NaN" in text or "Infinity" in text:  # maybe a float JSON has no value for, inside a list
                text = finite_json(text)
            # As json_field: characters valid raw in JSON that line splitters cut at or terminals act on;
            # inside a JSON value's text they can only sit in a string, where \\uXXXX says the same.
            raw = json_raw()
            return raw.sub(lambda m: f"\\u{ord(m.group()):04x}", text) if raw.search(text) else text
        return [one(t, k) for t, k in zip(self, self.kinds)]

    def values(self) -> list:
        """Each value as Python holds it: the Parquet column's values as pyarrow gives them, else JSON's
        (str, int, float, bool, list, dict, None)."""
        import json

        if self.source is not None:
            return self.source.to_pylist()
        return [t if k == STRING else None if k == NULL else json.loads(t) for t, k in zip(self, self.kinds)]

    def arrow(self, pa):
        """One Arrow array of every document's value: the Parquet input's column as it came, else the values
        typed as Arrow infers them (a field whose values no one type holds as strings, each value's JSON
        text). Made once."""
        if self._arrow is None:
            if self.source is not None:
                src = self.source
                self._arrow = src.combine_chunks() if hasattr(src, "combine_chunks") else src
            else:
                self._arrow = json_column(self.values(), pa)
        return self._arrow

    def take(self, pa, docs: Sequence[int]):
        """The Arrow values of the documents ``docs`` (positions), in that order."""
        return self.arrow(pa).take(pa.array(np.asarray(docs, np.int64), pa.int64()))


def finite_json(text: str) -> str:
    """A JSON value's text with NaN and infinities (which Python writes, and no JSON reader takes) as null."""
    import json

    def finite(v):
        if isinstance(v, float) and (v != v or v in (float("inf"), float("-inf"))):
            return None
        if isinstance(v, list):
            return [finite(x) for x in v]
        if isinstance(v, dict):
            return {k: finite(x) for k, x in v.items()}
        return v
    return json.dumps(finite(json.loads(text)), ensure_ascii=False)


def json_column(values: list, pa):
    """A JSON field's values as one Arrow column, typed as Arrow infers them; a field whose values no one
    type holds (a number here, text there) as strings, each value's JSON text (nulls stay null)."""
    import json

    try:
        return pa.array(values)
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        return pa.array([v if v is None or isinstance(v, str) else json.dumps(v, ensure_ascii=False)
                         for v in values], pa.string())


def concat(parts: Sequence[tuple[Sequence[str] | None, int]]) -> Sequence[str]:
    """The columns of several inputs one after the other, ``(column or None, documents)`` each (None: the
    input has no such column, nothing for each of its documents): a :class:`Carried` when every part that
    has the column is one, keeping the Arrow source where all parts have one of the same type, else the
    texts ("" for nothing)."""
    present = [c for c, _ in parts if c is not None]
    if not present or not all(isinstance(c, Carried) for c in present):
        out: list[str] = []
        for c, n in parts:
            out.extend(c if c is not None else [""] * n)
        return out
    joined = Carried()
    for c, n in parts:
        if c is None:
            joined.pad(n)
        else:
            joined.extend(c)
            joined.kinds.extend(c.kinds)
    sources = [None if c is None else c.source for c, _ in parts]
    if all(s is not None for s in sources) and len({str(s.type) for s in sources}) == 1:
        import pyarrow as pa  # loaded already: the sources are its arrays

        joined.source = pa.chunked_array([chunk for s in sources for chunk in
                                          (s.chunks if hasattr(s, "chunks") else [s])], sources[0].type)
    return joined


__all__ = ["Carried", "STRING", "JSON", "NULL", "concat", "json_column"]
