"""Stage 1 for line-oriented input: a file read in chunks into one UTF-8 buffer and its line offsets.

The ``--lines``, ``--sets`` and ``--jsonl`` readers in :mod:`allpairs.corpus`
build on :func:`read_line_file`. The file is read and decoded
:data:`CHUNK_BYTES` at a time and kept as one UTF-8 buffer with an int64
offset per line, about one byte per ASCII character instead of a Python
string per line (or per token); :class:`TextLines` and :class:`TokenSets`
give lines and token lists back on demand, and the shingle kernels read the
buffer directly.

Rules: a line ends at ``"\\n"``; one ``"\\r"`` at its end is dropped; a last
line without ``"\\n"`` counts; a UTF-8 byte-order mark at the start of the
file is dropped; a NUL byte is an error (a binary file), and so is a line
longer than :data:`MAX_LINE_BYTES` bytes of UTF-8, so that ``/dev/zero`` or a
file without line ends fails at once instead of filling memory, and so is a
file whose lines end with a lone ``"\r"`` (classic Mac OS), which would be one
line, unless the reader takes a lone ``"\r"`` as a line end (``cr_ends``: the
csv module does).
"""
from __future__ import annotations

import codecs
import errno
import itertools
import os
import stat
import sys
from collections.abc import Iterator, Sequence

import numpy as np

from ..errors import InputError, UsageError

#: The longest line accepted, in bytes of UTF-8 (64 MiB).
MAX_LINE_BYTES = 1 << 26
#: Bytes read from the file at a time.
CHUNK_BYTES = 1 << 24


class LineFile:
    """The lines of one file as one UTF-8 buffer and offsets.

    Attributes
    ----------
    name : str
        The file name for messages (``<stdin>`` for '-').
    data : bytearray
        The file's text in UTF-8 (lone surrogates passed through), line ends included.
    starts : ndarray of int64, shape (n_lines + 1,)
        Line ``i`` is ``data[starts[i]:starts[i + 1]]``, its ``"\\n"`` included.
    bom : bool
        Whether the file began with a byte-order mark (not in ``data``): a spreadsheet's UTF-8 CSV.
    """

    def __init__(self, name: str, data: bytearray, starts: np.ndarray, bom: bool = False) -> None:
        self.name = name
        self.data = data
        self.starts = starts
        self.bom = bom

    def __len__(self) -> int:
        return len(self.starts) - 1

    def line_bytes(self, i: int) -> bytes:
        """Line ``i`` without its line end (``"\\n"`` and one ``"\\r"`` before it)."""
        a, b = int(self.starts[i]), int(self.starts[i + 1])
        data = self.data
        if b > a and data[b - 1] == 10:
            b -= 1
        if b > a and data[b - 1] == 13:
            b -= 1
        return bytes(data[a:b])

    def line(self, i: int) -> str:
        """Line ``i`` as a string, without its line end."""
        return self.line_bytes(i).decode("utf-8", "surrogatepass")

    def buffer(self) -> np.ndarray:
        """The UTF-8 buffer as a uint8 array (no copy)."""
        return np.frombuffer(self.data, dtype=np.uint8)


class _LazyView(Sequence):
    """A read-only sequence whose items are computed on access by ``_item(i)``."""

    _what = "item"

    def _item(self, i: int):
        raise NotImplementedError

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self._item(k) for k in range(*i.indices(len(self)))]
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"{self._what} index out of range")
        return self._item(i)

    def __iter__(self) -> Iterator:
        return (self._item(k) for k in range(len(self)))

    def __eq__(self, other) -> bool:
        if isinstance(other, (list, tuple, _LazyView)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented


class _LineView(_LazyView):
    """A read-only sequence computed line by line from a :class:`LineFile`."""

    _what = "line"

    def __init__(self, lines: LineFile) -> None:
        self.lines = lines

    def __len__(self) -> int:
        return len(self.lines)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.lines.name!r}, {len(self)} lines)"


class Utf8Texts(_LazyView):
    """Texts held as their UTF-8 bytes back to back in one buffer, decoded on access.

    The shingle kernels read the bytes (:meth:`span`) without a string per
    text; the bytes must be valid UTF-8 (lone surrogates passed through).

    Attributes
    ----------
    buffer : ndarray of uint8
    offsets : ndarray of int64, shape (n_texts + 1,)
        Text ``i`` is ``buffer[offsets[i]:offsets[i + 1]]``.
    """

    _what = "text"

    def __init__(self, buffer: np.ndarray, offsets: np.ndarray) -> None:
        self.buffer = buffer
        self.offsets = offsets

    @classmethod
    def of(cls, texts: Sequence[bytes]) -> Utf8Texts:
        """Texts given as one ``bytes`` each."""
        offsets = np.zeros(len(texts) + 1, np.int64)
        np.cumsum([len(t) for t in texts], out=offsets[1:])
        return cls(np.frombuffer(b"".join(texts), np.uint8), offsets)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def _item(self, i: int) -> str:
        return self.utf8(i).decode("utf-8", "surrogatepass")

    def utf8(self, i: int) -> bytes:
        """Text ``i`` in UTF-8."""
        return self.buffer[self.offsets[i]:self.offsets[i + 1]].tobytes()

    def sizes(self) -> np.ndarray:
        """Each text's size in bytes (int64)."""
        return np.diff(self.offsets)

    def span(self, start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
        """Texts ``start .. stop - 1`` as a view of the buffer and their offsets in it (int64, from 0)."""
        return self.buffer[self.offsets[start]:self.offsets[stop]], self.offsets[start:stop + 1] - self.offsets[start]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self)} texts, {int(self.offsets[-1] - self.offsets[0]):,} bytes)"


class TextLines(_LineView):
    """The lines of a :class:`LineFile` as strings (``--lines``), decoded on access."""

    def _item(self, i: int) -> str:
        return self.lines.line(i)


class ArrowTokenSets(_LazyView):
    """Sets given as an Arrow column of token lists (``--parquet --tokens-col``), held as Arrow holds them.

    :func:`allpairs.shingles.hash_sets` hashes the tokens straight from the
    column's buffers; item ``i`` is row ``i``'s tokens as strings (``str()`` of
    each), a null list empty and null tokens left out.

    Attributes
    ----------
    column : pyarrow Array or ChunkedArray of lists
    """

    _what = "set"

    def __init__(self, column) -> None:
        self.column = column

    def __len__(self) -> int:
        return len(self.column)

    def _item(self, i: int) -> list[str]:
        return [str(t) for t in (self.column[i].as_py() or []) if t is not None]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self)} sets, {self.column.type})"


class HashedSets(_LazyView):
    """Sets whose tokens were hashed while they were read (``--sets`` on the command line).

    Holds the keys only (:func:`allpairs.shingles.hash_sets` returns them as
    they are), not the token strings: item ``i`` is the set's keys as 16-digit
    hexadecimal strings, which stand for the tokens one to one.

    Attributes
    ----------
    indptr : ndarray of int64, shape (n_sets + 1,)
    keys : ndarray of uint64
    """

    _what = "set"

    def __init__(self, indptr: np.ndarray, keys: np.ndarray) -> None:
        self.indptr = indptr
        self.keys = keys

    def __len__(self) -> int:
        return len(self.indptr) - 1

    def _item(self, i: int) -> list[str]:
        return [f"{k:016x}" for k in self.keys[self.indptr[i]:self.indptr[i + 1]].tolist()]


class TokenSets(_LineView):
    """The lines of a :class:`LineFile` as whitespace-separated token lists (``--sets``).

    Item ``i`` is ``line.split()``; :func:`allpairs.shingles.hash_sets` hashes
    the tokens straight from the buffer instead.
    """

    def _item(self, i: int) -> list[str]:
        return self.lines.line(i).split()


def stdin_bytes():
    """Standard input's binary stream, or the error of a closed one (``<&-``: Python sets ``sys.stdin`` to None)."""
    if sys.stdin is None:
        raise InputError("stdin is closed; give a file name instead of '-'")
    return sys.stdin.buffer


def _raw_chunks(path: str | os.PathLike) -> tuple[str, Iterator[bytes]]:
    if str(path) == "-":
        return "<stdin>", _read_stream(stdin_bytes(), "<stdin>", close=False)
    p = _as_pathlib_reads(path)
    mode = _mode(p)
    if mode is None:
        raise UsageError(f"{path}: no such file or directory")
    if stat.S_ISDIR(mode):
        raise UsageError(f"{path} is a directory; give a file, or read the tree ({{{{kind=directory}}}})", param="kind")
    try:
        f = open(p, "rb")
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror})") from None
    return str(path), _read_stream(f, str(path), close=True)


def _as_pathlib_reads(path: str | os.PathLike) -> str | os.PathLike:
    """``path`` as ``pathlib.Path`` reads it: itself where that changes nothing (no empty part, no "." part,
    no trailing "/"), else the Path. pathlib (with urllib.parse, ipaddress) took 17.5 M instructions of a
    plain join's run in a regular install, whose other modules never import it."""
    name = os.fspath(path)
    if isinstance(name, str) and os.sep == "/" and name and not os.altsep:
        parts = name[1:].split("/") if name.startswith("/") else name.split("/")
        if all(part not in ("", ".") for part in parts):
            return name
    from pathlib import Path

    return Path(path)


#: The errors for which ``pathlib.Path.exists`` and ``is_dir`` say False rather than raise.
_NOT_THERE = (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP)


def _mode(path: str | os.PathLike) -> int | None:
    """``os.stat(path).st_mode``, or None where ``pathlib.Path(path).exists()`` would be False."""
    try:
        return os.stat(path).st_mode
    except OSError as e:
        if e.errno not in _NOT_THERE:
            raise
        return None
    except ValueError:  # a NUL in the name
        return None


def _read_stream(f, name: str, *, close: bool) -> Iterator[bytes]:
    try:
        while True:
            try:
                chunk = f.read(CHUNK_BYTES)
            except OSError as e:
                raise InputError(f"{name}: cannot read ({e.strerror})") from None
            if not chunk:
                return
            yield chunk
    finally:
        if close:
            f.close()


#: Codecs under which an ASCII byte is that ASCII character and nothing else, so that an
#: all-ASCII chunk is used as it is, without decoding (stateless, not utf-8-sig).
_ASCII_SAFE = frozenset({"utf-8", "ascii", "iso8859-1", "cp1252", "latin-1"})


def _decoder(encoding: str):
    try:
        decoder = codecs.getincrementaldecoder(encoding)("strict")
        info = codecs.lookup(encoding)
        info.encode("")
    except LookupError:
        raise UsageError(f"unknown encoding {encoding!r}") from None
    except Exception:  # a codec that is not a text encoding (e.g. bz2)
        raise UsageError(f"encoding {encoding!r} is not a text encoding; use e.g. utf-8 or latin-1") from None
    return decoder, info.name in _ASCII_SAFE


def read_pieces(path: str | os.PathLike, encoding: str = "utf-8", *, max_line_bytes: int = MAX_LINE_BYTES,
                cr_ends: bool = False, seen: dict | None = None) -> tuple[str, Iterator[tuple[bytes, np.ndarray]]]:
    """The file's name and its text as pieces of whole lines, read :data:`CHUNK_BYTES` at a time.

    Each piece is ``(buf, starts)``: UTF-8 bytes and int64 line offsets into
    them, line ``i`` of the piece at ``buf[starts[i]:starts[i + 1]]`` with
    its ``"\\n"`` (only the file's last line may lack one); ``buf`` may
    extend past ``starts[-1]``, which is not part of the piece.  The rules
    and errors are those of :func:`read_line_file`, raised while iterating. ``seen["bom"]`` is set when
    a byte-order mark is dropped from the file's start.
    """
    decoder, ascii_safe = _decoder(encoding)
    name, chunks = _raw_chunks(path)
    return name, _pieces(name, chunks, decoder, ascii_safe, encoding, max_line_bytes, cr_ends, seen)


#: Bytes looked at per step for line ends: the comparison's temporary (a bool a byte) stays small enough
#: for malloc to hand the same memory back at each step, where one over a whole chunk took fresh pages (a
#: page fault each, 1-3 microseconds on a virtual machine: ~370 for Kosarak's 1.5 MB).
_SCAN_BYTES = 1 << 16


def _line_starts(buf: bytes) -> np.ndarray:
    """0 and the offset just past each "\\n" of ``buf`` (int64)."""
    data = np.frombuffer(buf, dtype=np.uint8)
    parts = [np.zeros(1, np.intp)]
    for a in range(0, len(data), _SCAN_BYTES):
        found = np.flatnonzero(data[a:a + _SCAN_BYTES] == 10)
        found += a + 1
        parts.append(found)
    return np.concatenate(parts).astype(np.int64, copy=False)


#: The first bytes of files that are no text (or text in another encoding), for a message that names what the
#: file is: looked at only once the file failed as text, so no text file is taken for one.
_MAGIC = ((b"\x1f\x8b", "gzip-compressed", "decompress it first (zcat FILE | allpairs ... -)"),
          (b"BZh", "bzip2-compressed", "decompress it first (bzcat FILE | allpairs ... -)"),
          (b"\xfd7zXZ\x00", "xz-compressed", "decompress it first (xzcat FILE | allpairs ... -)"),
          (b"\x28\xb5\x2f\xfd", "zstd-compressed", "decompress it first (zstdcat FILE | allpairs ... -)"),
          (b"PK\x03\x04", "a zip archive", "extract its files first"),
          (b"PAR1", "a Parquet file", "read it with {{kind=parquet}}"),
          (b"\xff\xfe\x00\x00", "UTF-32 text (its byte-order mark says so)", "read it with {{encoding=utf-32}}"),
          (b"\x00\x00\xfe\xff", "UTF-32 text (its byte-order mark says so)", "read it with {{encoding=utf-32}}"),
          (b"\xff\xfe", "UTF-16 text (its byte-order mark says so)", "read it with {{encoding=utf-16}}"),
          (b"\xfe\xff", "UTF-16 text (its byte-order mark says so)", "read it with {{encoding=utf-16}}"))


def _not_text(name: str, head: bytes, encoding: str) -> None:
    """Raise the error naming what the file is when its first bytes say it (:data:`_MAGIC`); ASCII text as
    UTF-16 without a byte-order mark (a NUL after each character) is named too."""
    found = next(((what, hint) for magic, what, hint in _MAGIC if head.startswith(magic)), None)
    if found is None and len(head) >= 4 and not any(head[1::2]) and all(head[0::2]):
        found = "UTF-16 text, little-endian (a NUL byte after each letter)", "read it with {{encoding=utf-16-le}}"
    elif found is None and len(head) >= 4 and not any(head[0::2]) and all(head[1::2]):
        found = "UTF-16 text, big-endian (a NUL byte before each letter)", "read it with {{encoding=utf-16-be}}"
    if found is not None:
        what, hint = found
        param = hint[hint.index("{{") + 2:hint.index("=")] if "{{" in hint else None
        raise InputError(f"{name} is {what}, not {encoding} text; {hint}", param=param)


def _pieces(name, chunks, decoder, ascii_safe, encoding, max_line_bytes, cr_ends=False, seen=None):
    carry = b""  # the line being read, without its end yet
    head = None  # the file's first bytes, for _not_text
    n_lines = 0  # complete lines before the current piece
    raw_before = 0  # raw bytes consumed before the current chunk
    first = True
    limit = max_line_bytes + 2  # a line's bytes with "\r\n"
    for chunk in itertools.chain(chunks, [None]):
        final = chunk is None
        if head is None and not final:
            head = chunk[:8]
        pending = len(decoder.getstate()[0])
        if not final and ascii_safe and not pending and chunk.isascii():
            out = chunk  # no decoding needed, and no byte-order mark possible
            first = first and not out
        else:
            try:
                text = decoder.decode(b"" if final else chunk, final)
            except UnicodeDecodeError as e:
                _not_text(name, head or b"", encoding)
                byte = raw_before - pending + e.start
                line = n_lines + e.object.count(b"\n", 0, e.start) + 1
                raise InputError(f"{name}:{line}: not valid {encoding} (byte {byte}); "
                                 "give the file's encoding, e.g. {{encoding=latin-1}}", param="encoding") from None
            except Exception as e:  # a codec with its own error types
                raise InputError(f"{name}: cannot decode as {encoding} ({e})") from None
            if first and text:
                first = False
                if text.startswith("\ufeff"):
                    text = text[1:]
                    if seen is not None:
                        seen["bom"] = True
            out = text.encode("utf-8", "surrogatepass")
        if not final:
            raw_before += len(chunk)
        buf = carry + out if carry else out
        nul = buf.find(b"\0", len(carry))
        if nul >= 0:
            _not_text(name, head or b"", encoding)
            line = n_lines + buf.count(b"\n", 0, nul) + 1
            raise InputError(f"{name}:{line}: NUL byte; this looks like a binary file, not text records")
        starts = _line_starts(buf)
        ends = starts[1:]
        complete = int(ends[-1]) if len(ends) else 0
        if final and not n_lines and not cr_ends and b"\r" in buf.rstrip(b"\r\n"):
            raise InputError(f"{name}: its lines end with a carriage return alone (classic Mac OS line ends), "
                             "which would make the whole file one line; convert them to line feeds first "
                             "(tr '\\r' '\\n' < FILE)")
        if final and complete < len(buf):
            starts = np.append(starts, np.int64(len(buf)))
            ends = starts[1:]
            complete = len(buf)
        too_long = np.flatnonzero(np.diff(starts) > limit)
        if len(too_long):
            _line_too_long(name, n_lines + int(too_long[0]) + 1, max_line_bytes)
        carry = buf[complete:]
        if len(carry) > limit:
            _line_too_long(name, n_lines + len(ends) + 1, max_line_bytes)
        if len(ends):
            yield buf, starts
            n_lines += len(ends)


def read_line_file(path: str | os.PathLike, encoding: str = "utf-8", *, max_line_bytes: int = MAX_LINE_BYTES,
                   cr_ends: bool = False) -> LineFile:
    """Read ``path`` ('-' for stdin) in chunks into a :class:`LineFile`.

    Raises
    ------
    UsageError
        For a missing path, a directory or an unknown encoding.
    InputError
        For bytes that are not valid ``encoding``, a NUL byte, a line longer
        than ``max_line_bytes`` bytes of UTF-8, or a read error; the message
        names the file and line.
    """
    seen: dict = {}
    name, pieces = read_pieces(path, encoding, max_line_bytes=max_line_bytes, cr_ends=cr_ends, seen=seen)
    data = bytearray()
    offsets = [np.zeros(1, np.int64)]
    for buf, starts in pieces:
        base = len(data)
        data += memoryview(buf)[: starts[-1]]
        offsets.append(starts[1:] + base)
    return LineFile(name, data, np.concatenate(offsets), seen.get("bom", False))


def _line_too_long(name: str, line: int, limit: int) -> None:
    raise InputError(f"{name}:{line}: line longer than {limit:,} bytes (the limit for one record); "
                     "is this a text file with one record a line?")
