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
file without line ends fails at once instead of filling memory.
"""
from __future__ import annotations

import codecs
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

from .errors import InputError, UsageError

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
    """

    def __init__(self, name: str, data: bytearray, starts: np.ndarray) -> None:
        self.name = name
        self.data = data
        self.starts = starts

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


class _LineView(Sequence):
    """A read-only sequence computed line by line from a :class:`LineFile`."""

    def __init__(self, lines: LineFile) -> None:
        self.lines = lines

    def __len__(self) -> int:
        return len(self.lines)

    def _item(self, i: int):
        raise NotImplementedError

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self._item(k) for k in range(*i.indices(len(self)))]
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("line index out of range")
        return self._item(i)

    def __iter__(self) -> Iterator:
        return (self._item(k) for k in range(len(self)))

    def __eq__(self, other) -> bool:
        if isinstance(other, (list, tuple, _LineView)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.lines.name!r}, {len(self)} lines)"


class TextLines(_LineView):
    """The lines of a :class:`LineFile` as strings (``--lines``), decoded on access."""

    def _item(self, i: int) -> str:
        return self.lines.line(i)


class TokenSets(_LineView):
    """The lines of a :class:`LineFile` as whitespace-separated token lists (``--sets``).

    Item ``i`` is ``line.split()``; :func:`allpairs.shingles.hash_sets` hashes
    the tokens straight from the buffer instead.
    """

    def _item(self, i: int) -> list[str]:
        return self.lines.line(i).split()


def _raw_chunks(path: str | os.PathLike) -> tuple[str, Iterator[bytes]]:
    if str(path) == "-":
        stream = sys.stdin.buffer if sys.stdin is not None else None
        if stream is None:
            raise InputError("stdin is closed; give a file name instead of '-'")
        return "<stdin>", _read_stream(stream, "<stdin>", close=False)
    p = Path(path)
    if not p.exists():
        raise UsageError(f"{path}: no such file or directory")
    if p.is_dir():
        raise UsageError(f"{path} is a directory; give a file, or drop --lines/--sets/--jsonl to read the tree")
    try:
        f = open(p, "rb")
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror})") from None
    return str(path), _read_stream(f, str(path), close=True)


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


def read_line_file(path: str | os.PathLike, encoding: str = "utf-8", *,
                   max_line_bytes: int = MAX_LINE_BYTES) -> LineFile:
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
    try:
        decoder = codecs.getincrementaldecoder(encoding)("strict")
        codecs.lookup(encoding).encode("")
    except LookupError:
        raise UsageError(f"unknown encoding {encoding!r}") from None
    except Exception:  # a codec that is not a text encoding (e.g. rot13's kin, bz2)
        raise UsageError(f"encoding {encoding!r} is not a text encoding; use e.g. utf-8 or latin-1") from None
    name, chunks = _raw_chunks(path)
    data = bytearray()
    newlines: list[np.ndarray] = []
    n_lines = 0  # complete lines so far
    last_start = 0  # where the line being read starts in data
    raw_before = 0  # raw bytes consumed before the current chunk
    first = True
    chunk_iter = iter(chunks)
    while True:
        chunk = next(chunk_iter, None)
        final = chunk is None
        pending = len(decoder.getstate()[0])
        try:
            text = decoder.decode(b"" if final else chunk, final)
        except UnicodeDecodeError as e:
            byte = raw_before - pending + e.start
            line = n_lines + e.object.count(b"\n", 0, e.start) + 1
            raise InputError(f"{name}:{line}: not valid {encoding} (byte {byte}); "
                             "give the file's encoding with --encoding, e.g. latin-1") from None
        except Exception as e:  # a codec with its own error types
            raise InputError(f"{name}: cannot decode as {encoding} ({e})") from None
        if first and text:
            first = False
            if text.startswith("\ufeff"):
                text = text[1:]
        out = text.encode("utf-8", "surrogatepass")
        base = len(data)
        nul = out.find(b"\0")
        if nul >= 0:
            line = n_lines + out.count(b"\n", 0, nul) + 1
            raise InputError(f"{name}:{line}: NUL byte; this looks like a binary file, not text records")
        nl = np.flatnonzero(np.frombuffer(out, dtype=np.uint8) == 10).astype(np.int64) + (base + 1)
        if len(nl):
            # Line lengths (line end included) within this chunk, the first from the carried-over start.
            lengths = np.diff(nl, prepend=last_start)
            too_long = np.flatnonzero(lengths > max_line_bytes + 2)
            if len(too_long):
                _line_too_long(name, n_lines + int(too_long[0]) + 1, max_line_bytes)
            newlines.append(nl)
            n_lines += len(nl)
            last_start = int(nl[-1])
        if base + len(out) - last_start > max_line_bytes + 2:
            _line_too_long(name, n_lines + 1, max_line_bytes)
        data += out
        if final:
            break
        raw_before += len(chunk)
    starts = np.concatenate([np.zeros(1, np.int64)] + newlines)
    if last_start < len(data):
        starts = np.append(starts, np.int64(len(data)))
    return LineFile(name, data, starts)


def _line_too_long(name: str, line: int, limit: int) -> None:
    raise InputError(f"{name}:{line}: line longer than {limit:,} bytes (the limit for one record); "
                     "is this a text file with one record a line?")
