"""How a field is written in each format: TSV escapes, CSV quoting, JSON strings, and the UTF-8 bytes of a
field (a non-UTF-8 file name's own bytes back). One rule per format, for every command and engine."""
from __future__ import annotations

import contextlib
import contextvars
import functools
import io
import re


@functools.cache  # compiled on first use, not on the import of every run (~1.4 M instructions each)
def _control() -> re.Pattern:
    """Control characters (C0, DEL, C1) and the Unicode line separators: escaped in TSV so that no field
    breaks a line (for any line splitter) or reaches a terminal as a command."""
    return re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\\\\]")

_NAMED = {"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"}

#: Lone surrogates that are not a byte of a non-UTF-8 file name (those are
#: U+DC80..U+DCFF, Python's surrogateescape): they come from JSON ("\\ud800").
@functools.cache  # compiled on first use (rare), not on the import of every run
def _lone_surrogate() -> re.Pattern:
    return re.compile("[\ud800-\udc7f\udd00-\udfff]")


def tsv_field(value: str) -> str:
    """Backslash, tab, newline, CR as \\\\, \\t, \\n, \\r; other control characters as \\xNN,
    U+2028 and U+2029 as \\u2028 and \\u2029."""
    control = _control()
    if not control.search(value):
        return value
    return control.sub(lambda m: _NAMED.get(m.group(), _hex(ord(m.group()))), value)


def _hex(code: int) -> str:
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


#: First characters that make a spreadsheet read a CSV cell as a formula (OWASP, "CSV Injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")

#: Whether CSV cells are written verbatim, formula starts and all (:func:`verbatim_cells`); by default not.
_VERBATIM = contextvars.ContextVar("allpairs_csv_verbatim", default=False)


@contextlib.contextmanager
def verbatim_cells(on: bool = True):
    """Within the block, CSV output writes cells that start with = + - @ tab or CR as they are.

    By default every CSV writer puts a ``'`` before such a cell, as OWASP
    advises against CSV injection: an id or carried cell scraped or submitted
    as ``=HYPERLINK(...)`` must not become a live formula when the file is
    opened in a spreadsheet. TSV, JSON Lines and Parquet are never changed.
    """
    token = _VERBATIM.set(on)
    try:
        yield
    finally:
        _VERBATIM.reset(token)


@functools.cache  # compiled on first use, as _control
def _plain_number() -> re.Pattern:
    """A cell a spreadsheet reads as a number, not a formula (``-2``, ``+1.5``, ``-3e-4``): written as it is,
    so that an id or carried number -2 comes back -2, not '-2 (``-2+3`` is a formula and gets its ``'``)."""
    return re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


#: The delimiter, quote character, line end and byte-order mark of CSV output (:func:`csv_dialect`).
_DIALECT = contextvars.ContextVar("allpairs_csv_dialect", default=(",", '"', "\n", False))


@contextlib.contextmanager
def csv_dialect(delimiter: str = ",", quotechar: str = '"', line_end: str = "\n", bom: bool = False):
    """Within the block, CSV output separates cells with ``delimiter``, quotes them with ``quotechar``, ends
    its lines with ``line_end`` and, with ``bom``, starts its header row with a byte-order mark: a table
    read from a spreadsheet (';' between cells, CRLF, a UTF-8 mark) is written back so."""
    token = _DIALECT.set((delimiter, quotechar, line_end, bom))
    try:
        yield
    finally:
        _DIALECT.reset(token)


def csv_delimiter() -> str:
    """The delimiter between CSV cells (:func:`csv_dialect`)."""
    return _DIALECT.get()[0]


def csv_line_end() -> str:
    """The end of a CSV line (:func:`csv_dialect`)."""
    return _DIALECT.get()[2]


def csv_header_start() -> str:
    """What a CSV header row starts with: the byte-order mark, where the input had one (:func:`csv_dialect`;
    never before a row of data, so that a table written without its header can be appended to another)."""
    return "\ufeff" if _DIALECT.get()[3] else ""


def csv_field(value: str) -> str:
    """Quoted as Python's csv module quotes, with the delimiter and quote character of :func:`csv_dialect`;
    a ``'`` before a formula start (:func:`verbatim_cells`), not before a plain number."""
    if not value:  # nothing, as a spreadsheet writes an empty cell (the writer would quote it: "")
        return value
    if value.startswith(FORMULA_STARTS) and not _VERBATIM.get() and not _plain_number().fullmatch(value):
        value = "'" + value
    delimiter, quotechar = _DIALECT.get()[:2]
    if delimiter not in value and quotechar not in value and "\r" not in value and "\n" not in value:
        return value  # nothing the writer would quote (QUOTE_MINIMAL): as it writes it, without a writer a cell
    # The writer quotes fields holding its line terminator, so keep "\r\n"
    # (quoting any CR or LF) and take it off again.
    import csv  # here: a run that writes no CSV (a count, TSV) does not load it

    buf = io.StringIO()
    csv.writer(buf, delimiter=delimiter, quotechar=quotechar, lineterminator="\r\n").writerow([value])
    return buf.getvalue()[:-2]


@functools.cache  # compiled on first use, as _control
def json_raw() -> re.Pattern:
    """DEL, C1 controls and U+2028/U+2029: valid raw in a JSON string, escaped as JSON escapes C0."""
    return re.compile("[\x7f-\x9f\u2028\u2029]")


def json_field(value: str) -> str:
    """A JSON string; a file name's undecodable bytes as the text \\xNN and any other lone surrogate as the
    text \\uXXXX, as in Parquet (:func:`printable`): JSON text is UTF-8, and a ``"\\udce9"`` escape would
    decode to a lone surrogate, which no strict reader (allpairs' own included) takes."""
    # What json.dumps(value, ensure_ascii=False) returns for a str, without an encoder made per call
    # (imported here: a run that writes no JSON does not load json).
    from json.encoder import encode_basestring

    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        value = printable(value)
    # DEL, C1 controls and U+2028/U+2029 are valid raw in a JSON string, but line splitters
    # cut a record at some of them and terminals act on others: escape them as JSON does C0.
    return json_raw().sub(lambda m: f"\\u{ord(m.group()):04x}", encode_basestring(value))


def utf8(value: str) -> bytes:
    """UTF-8 bytes of a field; a file name that is not UTF-8 (surrogate escapes) gets its
    original bytes back, as ls and find print it; any other lone surrogate is written as
    the text \\uXXXX."""
    try:
        return value.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return _lone_surrogate().sub(lambda m: f"\\u{ord(m.group()):04x}", value).encode("utf-8", "surrogateescape")


def printable(value: str) -> str:
    """``value`` as valid Unicode, for formats whose strings must be UTF-8 (JSON Lines, Parquet): a non-UTF-8
    file name's bytes as the text \\xNN (a\\xff.txt and a\\xfe.txt stay two ids, where U+FFFD would make them
    one), any other lone surrogate as the text \\uXXXX (:func:`utf8`)."""
    return utf8(value).decode("utf-8", "backslashreplace")


#: Around a decimal's digits while :func:`json_text` encodes it (a NUL, which JSON escapes, on each side), so
#: that the quotes json.dumps puts around what ``default`` returns can be taken off.
_DECIMAL = "\x00allpairs-decimal\x00"


def bytes_text(value: bytes) -> str:
    """Bytes (a Parquet binary value) as text: base64 (RFC 4648, padded), as Spark and BigQuery write bytes
    in JSON; a string of them in JSON Lines, the text in TSV and CSV."""
    import base64  # here: only a run that writes bytes as text loads it

    return base64.b64encode(value).decode("ascii")


def json_default(value):
    """JSON of what JSON has no type for (``json.dumps(..., default=json_default)``): dates and times as
    ISO 8601, bytes as base64 (:func:`bytes_text`), a finite decimal as its digits between marks
    :func:`json_text` unquotes (a number), a NaN or infinite one as null, anything else by ``str``."""
    if isinstance(value, (bytes, bytearray)):
        return bytes_text(value)
    iso = getattr(value, "isoformat", None)
    if callable(iso):
        return iso()
    if type(value).__name__ == "Decimal" and hasattr(value, "is_finite"):
        return _DECIMAL + str(value) + _DECIMAL if value.is_finite() else None
    return str(value)


@functools.cache
def _marked_decimal() -> re.Pattern:
    import json

    mark = re.escape(json.dumps(_DECIMAL)[1:-1])
    return re.compile(f'"{mark}([^"\\\\]*){mark}"')


def json_text(value) -> str:
    """``value`` as JSON text (non-ASCII as it is), with :func:`json_default` for what JSON has no type for:
    a decimal (a Parquet decimal column's value) is a number, as its digits, not a string of them."""
    import json  # here: a run that writes no JSON does not load it

    text = json.dumps(value, ensure_ascii=False, default=json_default)
    return _marked_decimal().sub(r"\1", text) if "allpairs-decimal" in text else text
