"""The index file: named numpy arrays and a JSON header in one file, checksummed, written atomically.

Layout (all integers little-endian)::

    0   16 bytes  magic  b"allpairs-index\\n\\0"
    16  uint32    format version (FORMAT)
    20  uint32    header length H
    24  32 bytes  SHA-256 of every byte from offset 56 to the end of the file
    56  H bytes   header: UTF-8 JSON {"allpairs": version, "total_bytes": N,
                  "meta": {...}, "arrays": {name: {"dtype", "shape", "offset"}}}
    ...           each array's raw bytes (C order) at its offset, a multiple of 64

Loading maps the file read-only and views each array in place (no copy), after
checking the magic, the version, the length and the checksum: a file written
by another format version, cut short or altered is refused with one line.
Writing goes to a temporary file beside the target, flushed to disk, then
renamed over it, so the target is always either the old file or the new one.
"""
from __future__ import annotations

import hashlib
import json
import mmap
import os
import struct
import tempfile
from contextlib import suppress
from pathlib import Path

import numpy as np

from .. import __version__
from ..errors import InputError, UsageError

MAGIC = b"allpairs-index\n\0"
#: Bumped whenever the layout or the meaning of an array changes.
FORMAT = 1
_PREAMBLE = struct.Struct("<16sII32s")
_ALIGN = 64


class IndexFileError(InputError):
    """An index file that is not one, is of another format version, truncated or damaged."""


def _pad(n: int) -> int:
    return -n % _ALIGN


def write_index(path: str | os.PathLike, meta: dict, arrays: dict[str, np.ndarray]) -> int:
    """Write ``meta`` and ``arrays`` to ``path`` atomically; return the file's size in bytes."""
    target = Path(path)
    if target.is_dir():
        raise UsageError(f"index {path} is a directory; give a file name")
    if not target.parent.exists():
        raise InputError(f"index {path}: directory {target.parent} does not exist")
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
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    except OSError as e:
        raise InputError(f"index {path}: cannot write ({e.strerror})") from None
    try:
        digest = hashlib.sha256(header)
        with os.fdopen(fd, "wb") as out:
            out.write(b"\0" * _PREAMBLE.size)
            out.write(header)
            pos = _PREAMBLE.size + room
            for name, a in arrays.items():
                out.write(b"\0" * _pad(pos))
                digest.update(b"\0" * _pad(pos))
                pos += _pad(pos)
                view = memoryview(a).cast("B") if a.nbytes else b""
                out.write(view)
                digest.update(view)
                pos += a.nbytes
            out.seek(0)
            out.write(_PREAMBLE.pack(MAGIC, FORMAT, room, digest.digest()))
            out.flush()
            os.fsync(out.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, target)
    except BaseException:
        with suppress(OSError):
            os.unlink(tmp)
        raise
    return pos


def read_index(path: str | os.PathLike, *, check: bool = True) -> tuple[dict, dict[str, np.ndarray]]:
    """The meta dict and the arrays (read-only views of a memory map) of an index file.

    Raises
    ------
    IndexFileError
        Not an index file, another format version, shorter than its header
        says, or a checksum that does not match (``check=False`` skips only the
        checksum).
    """
    p = Path(path)
    try:
        with open(p, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size < _PREAMBLE.size:
                raise IndexFileError(f"index {path} is not an allpairs index file (only {size} bytes)")
            buf = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except FileNotFoundError:
        raise InputError(f"index {path} does not exist") from None
    except IsADirectoryError:
        raise UsageError(f"index {path} is a directory; give an index file") from None
    except OSError as e:
        raise InputError(f"index {path}: cannot read ({e.strerror})") from None
    magic, version, room, digest = _PREAMBLE.unpack_from(buf, 0)
    if magic != MAGIC:
        raise IndexFileError(f"{path} is not an allpairs index file (no index header)")
    if version != FORMAT:
        raise IndexFileError(f"index {path} has format version {version}, this allpairs reads version {FORMAT}; "
                             "build it again with this version (allpairs index build)")
    try:
        header = json.loads(bytes(buf[_PREAMBLE.size:_PREAMBLE.size + room]))
        total = int(header["total_bytes"])
    except (ValueError, KeyError, TypeError):
        raise IndexFileError(f"index {path} is damaged (unreadable header); build it again") from None
    if size != total:
        what = "truncated" if size < total else "longer than written"
        raise IndexFileError(f"index {path} is {what}: {size:,} bytes where {total:,} were written; build it again")
    if check and hashlib.sha256(memoryview(buf)[_PREAMBLE.size:]).digest() != digest:
        raise IndexFileError(f"index {path} is damaged (checksum mismatch); build it again")
    arrays = {}
    try:
        for name, spec in header["arrays"].items():
            dtype = np.dtype(spec["dtype"])
            shape = tuple(spec["shape"])
            count = int(np.prod(shape, dtype=np.int64))
            arrays[name] = np.frombuffer(buf, dtype=dtype, count=count, offset=spec["offset"]).reshape(shape)
    except (ValueError, KeyError, TypeError):
        raise IndexFileError(f"index {path} is damaged (array table); build it again") from None
    return header["meta"], arrays
