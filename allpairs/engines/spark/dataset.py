"""A Parquet dataset written by Spark, made the same bytes on every run of the same job.

Which rows go to which part file is fixed before the write (:func:`in_files`): a sort's partitions follow
range bounds that Spark samples, seeded by how many shuffles the session has run, and they are as many
as the master's cores make; the same rows, sorted alike, were split three ways by three writes of one join
in one session, and into another number of files on another master. The rows are numbered in their order,
and file ``k`` holds the ``k``-th run of ``per_file`` of them.

Two things in what Spark writes differ between runs that give the same rows:

- the file names: ``part-00000-<job UUID>-c000.snappy.parquet``, a random UUID per write job (and the
  Hadoop checksum file beside each, ``.part-...crc``, named after it). They become
  ``part-00000-c000.snappy.parquet``: the task's number and its file counter, both fixed by the plan.
- the list of a column chunk's encodings in each file's footer (``ColumnMetaData.encodings``, e.g.
  ``PLAIN_DICTIONARY, RLE, BIT_PACKED``): parquet-mr (parquet-java) collects it in a ``HashSet`` of enum
  constants, whose order follows their identity hash codes, new in every JVM (apache/parquet-java issue
  3215, open; no writer setting fixes it). The format calls the list a set; it is sorted here, in place:
  the same values take the same bytes in any order, so no offset in the file moves.

The footer is Thrift's compact protocol (Apache Thrift, "Thrift Compact Protocol encoding"); only the
structures on the way to the encodings are walked, anything else is skipped by its type. A Hadoop checksum
file (``crc\\0``, the bytes per checksum as a big-endian int32, then a CRC-32 of each such chunk) gets the
checksums of the chunks the footer's change touched, so that Spark still reads the dataset (a stale checksum
fails the read). A file this cannot read (an encrypted footer, another format) is renamed and left as it is.
Only the footer is read: its length is in the file's last 8 bytes.
"""
from __future__ import annotations

import os
import re
import struct
import zlib
from contextlib import contextmanager

#: Spark's name of a written file: the task's number, the write job's UUID, the file counter and extension.
_PART = re.compile(r"^part-([0-9]+)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(-c[0-9]+.*)$")

# Thrift compact protocol types (the low 4 bits of a field header or a list header).
_TRUE, _FALSE, _BYTE, _I16, _I32, _I64, _DOUBLE, _BINARY, _LIST, _SET, _MAP, _STRUCT = range(1, 13)

# Field ids on the way from the footer (FileMetaData) to a column chunk's encodings (parquet.thrift).
_ROW_GROUPS, _COLUMNS, _META_DATA, _ENCODINGS = 4, 1, 3, 2


def _varint(buf, pos: int) -> tuple[int, int]:
    """An unsigned LEB128 varint at ``pos``: (value, position after it)."""
    value = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos
        shift += 7


def _zigzag(n: int) -> int:
    return (n >> 1) ^ -(n & 1)


def _list_header(buf, pos: int) -> tuple[int, int, int]:
    """(element type, size, position of the first element) of a list or set."""
    b = buf[pos]
    size, pos = (b >> 4, pos + 1) if b >> 4 != 15 else _varint(buf, pos + 1)
    return b & 0x0F, size, pos


def _skip(buf, pos: int, kind: int, element: bool = False) -> int:
    """The position after a value of type ``kind`` (``element``: inside a list, where a boolean takes a byte)."""
    if kind in (_TRUE, _FALSE):
        return pos + 1 if element else pos
    if kind == _BYTE:
        return pos + 1
    if kind in (_I16, _I32, _I64):
        return _varint(buf, pos)[1]
    if kind == _DOUBLE:
        return pos + 8
    if kind == _BINARY:
        n, pos = _varint(buf, pos)
        return pos + n
    if kind in (_LIST, _SET):
        etype, size, pos = _list_header(buf, pos)
        for _ in range(size):
            pos = _skip(buf, pos, etype, True)
        return pos
    if kind == _MAP:
        size, pos = _varint(buf, pos)
        if size:
            types, pos = buf[pos], pos + 1
            for _ in range(size):
                pos = _skip(buf, _skip(buf, pos, types >> 4, True), types & 0x0F, True)
        return pos
    if kind == _STRUCT:
        return _struct(buf, pos, lambda fid, kind, pos: None)
    raise ValueError(f"Thrift compact type {kind} unknown")


def _struct(buf, pos: int, visit) -> int:
    """Walk a struct's fields: ``visit(field id, type, position)`` returns the position after the value it
    read, or None to have it skipped. Returns the position after the struct's stop byte."""
    fid = 0
    while True:
        b = buf[pos]
        pos += 1
        if b == 0:
            return pos
        kind = b & 0x0F
        if b >> 4:
            fid += b >> 4
        else:
            raw, pos = _varint(buf, pos)
            fid = _zigzag(raw)
        end = visit(fid, kind, pos)
        pos = end if end is not None else _skip(buf, pos, kind)


def _each_struct(buf, pos: int, visit_one) -> int:
    """A list of structs, each walked with ``visit_one`` as :func:`_struct`'s ``visit``."""
    etype, size, pos = _list_header(buf, pos)
    for _ in range(size):
        pos = _struct(buf, pos, visit_one) if etype == _STRUCT else _skip(buf, pos, etype, True)
    return pos


def encoding_lists(footer) -> list[tuple[int, int, list[int]]]:
    """Every column chunk's encodings in a serialized FileMetaData: (start, end, values) of each list's
    elements, in the order of the row groups and their columns."""
    found = []

    def meta_data(fid, kind, pos):
        if fid != _ENCODINGS or kind != _LIST:
            return None
        etype, size, start = _list_header(footer, pos)
        if etype != _I32:
            return None
        values, end = [], start
        for _ in range(size):
            raw, end = _varint(footer, end)
            values.append(_zigzag(raw))
        found.append((start, end, values))
        return end

    def column(fid, kind, pos):
        return _struct(footer, pos, meta_data) if fid == _META_DATA and kind == _STRUCT else None

    def row_group(fid, kind, pos):
        return _each_struct(footer, pos, column) if fid == _COLUMNS and kind == _LIST else None

    def file_meta(fid, kind, pos):
        return _each_struct(footer, pos, row_group) if fid == _ROW_GROUPS and kind == _LIST else None

    _struct(footer, 0, file_meta)
    return found


def _varints(values) -> bytes:
    out = bytearray()
    for v in values:
        n = (v << 1) ^ (v >> 63)  # zigzag
        while n >= 0x80:
            out.append(n & 0x7F | 0x80)
            n >>= 7
        out.append(n)
    return bytes(out)


def sorted_footer(footer: bytes) -> bytes:
    """``footer`` (a serialized FileMetaData) with each column chunk's encodings sorted by value."""
    out = bytearray(footer)
    for start, end, values in encoding_lists(footer):
        out[start:end] = _varints(sorted(values))  # the same varints in another order: the same length
    return bytes(out)


def sort_footer_encodings(path: str) -> int | None:
    """Sort, in place, the encodings lists in the footer of the Parquet file ``path``: the offset of the first
    byte changed, or None when nothing changed (or the file is not a plain Parquet file)."""
    with open(path, "r+b") as f:
        size = f.seek(0, os.SEEK_END)
        if size < 12:
            return None
        f.seek(size - 8)
        tail = f.read(8)
        length = struct.unpack("<I", tail[:4])[0]
        if tail[4:] != b"PAR1" or length > size - 12:  # PARE: an encrypted footer, left as it is
            return None
        start = size - 8 - length
        f.seek(start)
        footer = f.read(length)
        try:
            new = sorted_footer(footer)
        except (IndexError, ValueError):  # not a footer this walk knows: left as parquet-mr wrote it
            return None
        if new == footer:
            return None
        first = next(i for i in range(length) if new[i] != footer[i])
        f.seek(start + first)
        f.write(new[first:])
        return start + first


def _checksums(path: str, crc_path: str, changed_from: int) -> None:
    """Rewrite the Hadoop checksums in ``crc_path`` of ``path``'s chunks from the one holding byte
    ``changed_from`` on (the chunks before it are as they were)."""
    with open(crc_path, "r+b") as c:
        head = c.read(8)
        if head[:4] != b"crc\0":
            return
        per = struct.unpack(">i", head[4:])[0]
        first = changed_from // per
        c.seek(8 + 4 * first)
        with open(path, "rb") as f:
            f.seek(first * per)
            while chunk := f.read(per):
                c.write(struct.pack(">I", zlib.crc32(chunk)))


#: The column of a row's position in :func:`positions`' order, while :func:`in_files` places it.
POSITION = "_allpairs_position"


def positions(df, column: str):
    """(``df`` with ``column``: each row's 1-based position, its partitions taken in turn, each in its row
    order; the number of rows). One small job counts each partition's rows; ``df`` must give the same rows
    in the same partitions each time it is read (a file read, a persisted frame)."""
    from pyspark.sql import functions as F

    df = df.withColumn("_pid", F.spark_partition_id()).withColumn("_mid", F.monotonically_increasing_id())
    counts = {r["_pid"]: r["count"] for r in df.groupBy("_pid").count().collect()}
    starts, total = [], 0
    for pid in range(max(counts, default=-1) + 1):
        starts.append(total)
        total += counts.get(pid, 0)
    offset = F.element_at(F.array(*[F.lit(s) for s in starts or [0]]), F.col("_pid") + 1)
    # monotonically_increasing_id is (partition id << 33) + row within the partition.
    at = offset + (F.col("_mid") - F.shiftleft(F.col("_pid").cast("long"), 33)) + 1
    return df.withColumn(column, at.cast("long")).drop("_pid", "_mid"), total


@contextmanager
def in_files(ordered, per_file: int):
    """(the rows of ``ordered``, a frame in its output order, placed for a write: ``⌈n / per_file⌉`` partitions,
    partition ``k`` the ``k``-th run of ``per_file`` rows, in order; n). The same split of the same rows on
    every run, session, master and machine; ``ordered`` is persisted (memory, then disk) while the block
    runs, so that its rows are numbered once (:func:`positions`)."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    kept = ordered.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        numbered, n = positions(kept, POSITION)
        files = max(1, -(-n // per_file))
        part = F.expr(f"CAST(({POSITION} - 1) DIV {int(per_file)} AS INT)")
        placed = numbered.repartitionById(files, part) if hasattr(numbered, "repartitionById") \
            else numbered.repartition(files, part)  # Spark before 4.1: hashed, as alike on every run
        yield placed.sortWithinPartitions(POSITION).drop(POSITION), n
    finally:
        kept.unpersist()


def make_reproducible(directory: str) -> None:
    """Rename the part files Spark wrote in ``directory`` (a local dataset) without the job's UUID, and sort
    their footers' encodings lists (with their Hadoop checksums): the same job gives the same bytes."""
    names = os.listdir(directory)
    for name in sorted(names):
        m = _PART.match(name)
        if not m:
            continue
        path = os.path.join(directory, name)
        crc = os.path.join(directory, f".{name}.crc")
        changed = sort_footer_encodings(path) if name.endswith(".parquet") else None
        if changed is not None and os.path.exists(crc):
            _checksums(path, crc, changed)
        new = f"part-{m.group(1)}{m.group(2)}"
        os.rename(path, os.path.join(directory, new))
        if os.path.exists(crc):
            os.rename(crc, os.path.join(directory, f".{new}.crc"))


__all__ = ["encoding_lists", "in_files", "make_reproducible", "positions", "sort_footer_encodings", "sorted_footer"]
