"""The index file: named numpy arrays and a JSON header in one file, checksummed, written atomically.

Layout (all integers little-endian)::

    0   16 bytes  magic  b"allpairs-index\\n\\0"
    16  uint32    format version (FORMAT)
    20  uint32    header length H
    24  32 bytes  SHA-256 of every byte from offset 56 to the end of the file
    56  H bytes   header: UTF-8 JSON {"allpairs": version, "total_bytes": N,
                  "meta": {...}, "arrays": {name: {"dtype", "shape", "offset"}}}
    ...           each array's raw bytes (C order) at its offset, a multiple of 64

An index file is input like any other: the SHA-256 catches damage, not
intent (anyone can recompute it). Loading checks the type of the path (a FIFO
or a device is refused before it is opened), then maps the file read-only and
checks the magic, the version, the length, the header's shape (JSON of known
keys and types, of bounded size) and the array table (known dtypes, shapes
that fit the file, offsets inside it, no overlap) before it views any array
in place (no copy). What the arrays hold is checked by
:mod:`allpairs.index.validate` while another thread computes the checksum.

Writing goes through the output module of every allpairs file
(:mod:`allpairs.output.files`): a temporary file beside the target, flushed
to disk, renamed over it, so the target is always either the old file or the
new one; a device or FIFO is written through, a link's target replaced, the
mode kept. :func:`locked` holds an exclusive lock on an index for a
read-modify-write (``index add``).
"""
from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import mmap
import os
import stat
import struct
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Callable, Iterator

import numpy as np

from .. import __version__
from ..errors import AllPairsError, InputError, UsageError
from ..output.files import OutputPlan, open_output

MAGIC = b"allpairs-index\n\0"
#: Bumped whenever the layout or the meaning of an array changes.
FORMAT = 2
_PREAMBLE = struct.Struct("<16sII32s")

#: An array is written (and hashed, and reported) this many bytes at a time.
WRITE_PIECE = 16 << 20
_ALIGN = 64
#: The largest header a reader accepts (the writer's is 4 KiB unless the meta is unusually long).
MAX_HEADER = 1 << 20
#: Array dtypes an index may hold: little-endian (or single-byte) integers.
_DTYPES = {"<i4", "<i8", "<u8", "|u1"}


class IndexFileError(InputError):
    """An index file that is not one, is of another format version, truncated or damaged."""


def _pad(n: int) -> int:
    return -n % _ALIGN


def write_index(path: str | os.PathLike, meta: dict, arrays: dict[str, np.ndarray], *,
                plan: OutputPlan | None = None, progress: Callable[[int, int], None] | None = None) -> int:
    """Write ``meta`` and ``arrays`` to ``path`` atomically; return the file's size in bytes.

    ``plan`` is what :func:`allpairs.output.files.check_output` said of ``path``
    before the work; ``progress(done, total)`` is told the bytes written, a
    piece of at most :data:`WRITE_PIECE` at a time. Raises :class:`~allpairs.errors.OutputError` naming the
    file for anything that stops the write (a directory, a read-only file, a
    full disk, a file-size limit).
    """
    arrays = {k: np.ascontiguousarray(v) for k, v in arrays.items()}
    # The header holds the offsets, which depend on the header's length: lay out
    # with a header padded to a fixed multiple of 64, growing it until it fits.
    room = 4096
    while True:
        table, offset = {}, _PREAMBLE.size + room
        for name, a in arrays.items():
            offset += _pad(offset)
            table[name] = {"dtype": a.dtype.str, "shape": list(a.shape), "offset": offset}
            offset += a.nbytes
        header = json.dumps({"allpairs": __version__, "total_bytes": offset, "meta": meta, "arrays": table},
                            sort_keys=True).encode()
        if len(header) <= room:
            break
        room = len(header) + _pad(len(header) + _PREAMBLE.size) + 1024
    header = header.ljust(room)

    def body() -> Iterator[bytes | memoryview]:
        """Every byte after the preamble, in order: the header, then each array after its padding."""
        yield header
        pos = _PREAMBLE.size + room
        for a in arrays.values():
            yield b"\0" * _pad(pos)
            pos += _pad(pos)
            if a.nbytes:
                view = memoryview(a).cast("B")
                for lo in range(0, a.nbytes, WRITE_PIECE):
                    yield view[lo:lo + WRITE_PIECE]
            pos += a.nbytes

    def written(pieces: Iterator[bytes | memoryview]) -> Iterator[bytes | memoryview]:
        """The pieces, the bytes so far told after each."""
        done = _PREAMBLE.size
        for piece in pieces:
            yield piece
            done += len(piece)
            if progress is not None:
                progress(done, offset)

    with open_output(path, plan, role="index", sync=True) as out:
        digest = hashlib.sha256()
        if out.positional:  # a temporary file: hash while writing, then fill in the preamble
            out.write(b"\0" * _PREAMBLE.size)
            for piece in written(body()):
                out.write(piece)
                digest.update(piece)
            out.pwrite(_PREAMBLE.pack(MAGIC, FORMAT, room, digest.digest()), 0)
        else:  # a device or FIFO is written in order: hash first
            for piece in body():
                digest.update(piece)
            out.write(_PREAMBLE.pack(MAGIC, FORMAT, room, digest.digest()))
            for piece in written(body()):
                out.write(piece)
    return offset


def open_index(path: str | os.PathLike) -> int:
    """A read-only file descriptor of the index file ``path``, after checking that it is a regular file.

    A FIFO, a device or a socket is refused before it is opened (opening a
    FIFO would wait for a writer forever), and checked again once open.
    """
    if os.fsencode(path) == b"-":
        raise UsageError("an index is read from its file (mapped, not streamed): give its name, not '-' (stdin)")
    try:
        st = os.stat(path)
    except FileNotFoundError:  # a missing path, as for an input file: a usage error (exit 2)
        raise UsageError(f"index {os.fspath(path)} does not exist") from None
    except OSError as e:
        raise InputError(f"index {os.fspath(path)}: cannot read ({e.strerror})") from None
    _check_type(path, st)
    try:
        # O_NONBLOCK: should a FIFO take the file's place after the check, open does not wait for a writer.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise InputError(f"index {os.fspath(path)} does not exist") from None
    except OSError as e:
        raise InputError(f"index {os.fspath(path)}: cannot read ({e.strerror})") from None
    try:
        _check_type(path, os.fstat(fd))
    except BaseException:
        os.close(fd)
        raise
    return fd


def _check_type(path, st: os.stat_result) -> None:
    mode = st.st_mode
    if stat.S_ISDIR(mode):
        raise UsageError(f"index {os.fspath(path)} is a directory; give an index file")
    if not stat.S_ISREG(mode):
        what = ("a FIFO" if stat.S_ISFIFO(mode) else "a character device" if stat.S_ISCHR(mode)
                else "a block device" if stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode)
                else "not a regular file")
        raise InputError(f"index {os.fspath(path)} is {what}, not an index file; give the file "
                         "'allpairs index build' wrote")


@contextmanager
def locked(path: str | os.PathLike, on_wait: Callable[[], None] | None = None) -> Iterator[int]:
    """Hold an exclusive lock on the index file ``path`` (``flock``) and yield its read-only descriptor.

    For a read-modify-write (``index add``): a second run waits here until the
    first has replaced the file, then reads the new one. The lock is on the
    file itself; since the writer replaces the file by renaming a new one over
    it, a run that got the lock on a file no longer at ``path`` lets it go and
    locks the new one. ``on_wait`` is called once if the lock is held by
    another run (to say why this one waits).
    """
    waited = False
    while True:
        fd = open_index(path)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as e:
                if e.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    raise InputError(f"index {os.fspath(path)}: cannot lock ({e.strerror})") from None
                if on_wait is not None and not waited:
                    on_wait()
                waited = True
                fcntl.flock(fd, fcntl.LOCK_EX)
            held, now = os.fstat(fd), _stat_or_none(path)
        except BaseException:
            os.close(fd)
            raise
        if now is not None and (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino):
            break
        os.close(fd)  # replaced while this run waited: lock the new file
    try:
        yield fd
    finally:
        os.close(fd)  # releases the lock


def _stat_or_none(path) -> os.stat_result | None:
    try:
        return os.stat(path)
    except OSError:
        return None


def read_index(path: str | os.PathLike, *, check: bool = True, fd: int | None = None,
               validate: Callable[[dict, dict[str, np.ndarray]], object] | None = None,
               ) -> tuple[dict, dict[str, np.ndarray], object]:
    """The meta dict, the arrays (read-only views of a memory map) of an index file, and what
    ``validate(meta, arrays)`` returned.

    ``fd``, when given, is the file already open (see :func:`locked`); it
    stays open. The arrays' values are not checked here, only that each lies
    within the file: ``validate`` checks them (see :mod:`allpairs.index.validate`),
    in this thread while another computes the checksum, so that the two
    passes over the file take the time of one on two cores. It must be safe
    on any bytes; a checksum mismatch is reported before what it raises.

    Raises
    ------
    IndexFileError
        Not an index file, another format version, shorter than its header
        says, a checksum that does not match (``check=False`` skips only the
        checksum), or a header or array table that this code did not write.
    InputError, UsageError
        A missing path, a directory, a FIFO or device, an unreadable file.
    """
    own = fd is None
    if own:
        fd = open_index(path)
    try:
        size = os.fstat(fd).st_size
        if size < _PREAMBLE.size:
            raise IndexFileError(f"index {path} is not an allpairs index file (only {size} bytes)")
        try:
            buf = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
        except OSError as e:
            raise InputError(f"index {path}: cannot read ({e.strerror})") from None
    finally:
        if own:
            os.close(fd)
    magic, version, room, digest = _PREAMBLE.unpack_from(buf, 0)
    if magic != MAGIC:
        raise IndexFileError(f"{path} is not an allpairs index file (no index header)")
    if version != FORMAT:
        raise IndexFileError(f"index {path} has format version {version}, this allpairs reads version {FORMAT}; "
                             "build it again with this version (allpairs index build)")
    if room > min(MAX_HEADER, size - _PREAMBLE.size):
        raise IndexFileError(f"index {path} is damaged (header length {room:,} beyond the file or "
                             f"{MAX_HEADER:,} bytes); build it again")
    try:
        header = json.loads(bytes(buf[_PREAMBLE.size:_PREAMBLE.size + room]))
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        raise IndexFileError(f"index {path} is damaged (unreadable header); build it again") from None
    if not isinstance(header, dict) or not isinstance(header.get("meta"), dict) \
            or not isinstance(header.get("arrays"), dict) or not _is_int(header.get("total_bytes")):
        raise IndexFileError(f"index {path} is damaged (header without meta, arrays or total_bytes); "
                             "build it again")
    total = header["total_bytes"]
    if size != total:
        what = "truncated" if size < total else "longer than written"
        raise IndexFileError(f"index {path} is {what}: {size:,} bytes where {total:,} were written; build it again")
    arrays = {}
    spans = []
    for name, spec in header["arrays"].items():
        dtype, shape, offset = _array_spec(path, name, spec)
        nbytes = dtype.itemsize * int(np.prod(shape, dtype=object))  # Python ints: no overflow
        if offset < _PREAMBLE.size + room or offset % _ALIGN or offset + nbytes > size:
            raise IndexFileError(f"index {path} is damaged (array {name!r}: {nbytes:,} bytes at offset {offset:,} "
                                 f"do not lie within the file's {size:,}); build it again")
        spans.append((offset, offset + nbytes, name))
        arrays[name] = np.frombuffer(buf, dtype=dtype, count=nbytes // dtype.itemsize, offset=offset).reshape(shape)
    spans.sort()
    for (_, end, a), (start, _, b) in zip(spans, spans[1:]):
        if start < end:
            raise IndexFileError(f"index {path} is damaged (arrays {a!r} and {b!r} overlap); build it again")
    meta = header["meta"]
    if not check:
        return meta, arrays, validate(meta, arrays) if validate is not None else None
    with ThreadPoolExecutor(1) as pool:
        same = pool.submit(lambda: hashlib.sha256(memoryview(buf)[_PREAMBLE.size:]).digest() == digest)
        try:
            checked, failure = (validate(meta, arrays) if validate is not None else None), None
        except AllPairsError as e:
            checked, failure = None, e
        if not same.result():
            raise IndexFileError(f"index {path} is damaged (checksum mismatch); build it again")
    if failure is not None:
        raise failure
    return meta, arrays, checked


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _array_spec(path, name: str, spec) -> tuple[np.dtype, tuple[int, ...], int]:
    """(dtype, shape, offset) of one entry of the array table, each of the kind the writer writes."""
    bad = None
    if not isinstance(spec, dict):
        bad = "not a table entry"
    elif spec.get("dtype") not in _DTYPES:
        bad = f"dtype {spec.get('dtype')!r} is none of {', '.join(sorted(_DTYPES))}"
    elif not isinstance(spec.get("shape"), list) or not 1 <= len(spec["shape"]) <= 2 \
            or not all(_is_int(n) and 0 <= n < 2**48 for n in spec["shape"]):
        bad = f"shape {spec.get('shape')!r} is not one or two sizes"
    elif not _is_int(spec.get("offset")) or spec["offset"] < 0:
        bad = f"offset {spec.get('offset')!r} is not a position in the file"
    if bad:
        raise IndexFileError(f"index {path} is damaged (array {name!r}: {bad}); build it again")
    return np.dtype(spec["dtype"]), tuple(spec["shape"]), spec["offset"]
