"""Arrow batches as the kernels' arrays, and back.

Inside a Spark task (``mapInArrow``) a column of ``array<...>`` arrives as an
Arrow list array; the kernels want CSR (``indptr`` int64, flat values). Groups
of rows that Spark has sorted together (a prefix token's sets, an LSH bucket)
may straddle batches: :func:`complete_groups` re-cuts the stream so that each
block handed on holds whole groups only.
"""
from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


def list_indptr(column) -> np.ndarray:
    """indptr int64 (n + 1,) of an Arrow list array: row i's values are ``flatten()[indptr[i]:indptr[i + 1]]``
    (a null list is empty)."""
    lengths = column.value_lengths().fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
    indptr = np.zeros(len(lengths) + 1, np.int64)
    np.cumsum(lengths, out=indptr[1:])
    return indptr


def csr(column, dtype=np.int64) -> tuple[np.ndarray, np.ndarray]:
    """(indptr int64 (n + 1,), values) of an Arrow list column, or of a binary column of values of ``dtype``
    (:func:`key_array`: int64 keys, int32 ranks); a null list or null row is empty."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if pa.types.is_binary(column.type) or pa.types.is_large_binary(column.type):
        return key_csr(column, dtype)
    return list_indptr(column), column.flatten().to_numpy(zero_copy_only=False)


def key_csr(column, dtype=np.int64) -> tuple[np.ndarray, np.ndarray]:
    """(indptr int64 (n + 1,), values) of a binary column whose values are arrays of ``dtype`` (8-byte keys
    by default)."""
    width = np.dtype(dtype).itemsize
    n = len(column)
    wide = pa.types.is_large_binary(column.type)
    _, offsets, data = column.buffers()
    offsets = np.frombuffer(offsets, np.int64 if wide else np.int32)[column.offset:column.offset + n + 1] \
        .astype(np.int64)  # a null's offsets are equal: it is empty
    first, last = int(offsets[0]), int(offsets[-1])
    if (last - first) % width or np.any((offsets - first) % width):
        raise ValueError(f"a binary column of {np.dtype(dtype)} values holds a value whose length is not a "
                         f"multiple of {width} bytes")
    keys = np.frombuffer(data, np.uint8, count=last - first, offset=first) if data is not None and last > first \
        else np.zeros(0, np.uint8)
    keys = keys.view(dtype) if keys.ctypes.data % width == 0 else keys.copy().view(dtype)
    return (offsets - first) // width, keys


#: Most bytes of keys in one Arrow array of :func:`key_array` (its offsets are 32-bit, as Spark's binary type).
KEY_ARRAY_BYTES = 2**31 - 1


def key_array(indptr: np.ndarray, keys: np.ndarray) -> pa.BinaryArray:
    """An Arrow binary array (Spark's ``binary``) whose row ``i`` holds ``keys[indptr[i]:indptr[i + 1]]`` as
    little-endian ints of their own width (8 bytes a key, 4 a rank): the JVM copies a row's values as one
    value, not element by element (an ``array<int>`` of 120 M routed ranks at 1 M sets), and compares and
    hashes them as bytes (grouping identical sets sorts them). At most KEY_ARRAY_BYTES of values."""
    indptr = np.asarray(indptr, np.int64)
    width = keys.dtype.itemsize
    nbytes = width * (int(indptr[-1]) - int(indptr[0]))
    if nbytes > KEY_ARRAY_BYTES:
        raise OverflowError(f"{nbytes:,} bytes of keys exceed one binary array's {KEY_ARRAY_BYTES:,}")
    offsets = (width * (indptr - indptr[0])).astype(np.int32)
    data = np.ascontiguousarray(keys[int(indptr[0]):int(indptr[-1])]).view(np.uint8)
    return pa.Array.from_buffers(pa.binary(), len(indptr) - 1, [None, pa.py_buffer(offsets), pa.py_buffer(data)])


def key_slices(indptr: np.ndarray, limit: int = KEY_ARRAY_BYTES // 8) -> Iterator[tuple[int, int]]:
    """(start, stop) rows of consecutive runs holding at most ``limit`` keys (or one row with more)."""
    n = len(indptr) - 1
    start = 0
    while start < n:
        stop = max(start + 1, int(np.searchsorted(indptr, indptr[start] + limit, side="right")) - 1)
        yield start, stop
        start = stop


def list_array(indptr: np.ndarray, values: np.ndarray, value_type: pa.DataType) -> pa.ListArray:
    """An Arrow list array (int32 offsets, as Spark's ``array`` type) from CSR."""
    return pa.ListArray.from_arrays(pa.array(np.asarray(indptr, np.int32), pa.int32()),
                                    pa.array(values, value_type))


def numpy(column, dtype) -> np.ndarray:
    """A primitive Arrow column as a numpy array of ``dtype``."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    return column.to_numpy(zero_copy_only=False).astype(dtype, copy=False)


def group_starts(table: pa.Table, keys: Sequence[str]) -> np.ndarray:
    """Bool (num_rows,): True where a row's key columns differ from the row before (always at row 0)."""
    n = table.num_rows
    starts = np.zeros(n, bool)
    if n == 0:
        return starts
    starts[0] = True
    for name in keys:
        col = table.column(name).combine_chunks()
        changed = pc.not_equal(col.slice(1), col.slice(0, n - 1))
        starts[1:] |= changed.to_numpy(zero_copy_only=False)
    return starts


def one_table(batches: Iterable[pa.RecordBatch]) -> pa.Table | None:
    """A task's input batches as one table, or None where they hold no row (a task with no input)."""
    batches = [b for b in batches if b.num_rows]
    return pa.Table.from_batches(batches) if batches else None


def complete_groups(batches: Iterable[pa.RecordBatch], keys: Sequence[str], rows: int = 65536) -> Iterator[pa.Table]:
    """Blocks of about ``rows`` rows (or more, for a larger group) of a stream sorted by ``keys``, each
    holding whole groups only: a group is never split between two blocks.

    Each batch's group starts are found once, as it arrives (against the row
    before it): a group of many batches is not compared again and again while
    it grows (1 M Zipf sets: ~720 k rows a token group, 1.4 s of 18 s).
    """
    pending: list[pa.RecordBatch] = []
    count = 0
    last = 0  # the row of the pending table where its last group begins
    for batch in batches:
        if batch.num_rows == 0:
            continue
        if pending:
            starts = group_starts(pa.Table.from_batches([pending[-1].slice(pending[-1].num_rows - 1), batch]),
                                  keys)[1:]
        else:
            starts = group_starts(pa.Table.from_batches([batch]), keys)
        found = np.flatnonzero(starts)
        if len(found):
            last = count + int(found[-1])
        pending.append(batch)
        count += batch.num_rows
        if count < rows or last == 0:  # too few rows yet, or one group so far: keep reading
            continue
        table = pa.Table.from_batches(pending)
        yield table.slice(0, last)
        rest = table.slice(last).combine_chunks()
        pending = rest.to_batches()
        count, last = rest.num_rows, 0
    if pending:
        yield pa.Table.from_batches(pending)


#: A packed batch's rows: the partition of the rows a value holds, and those rows as one Arrow record batch
#: (an IPC message, no schema: the reader knows it).
PACKED_SCHEMA = "part int, batch binary"


def packed(batch: pa.RecordBatch, part: np.ndarray) -> pa.RecordBatch:
    """``batch``'s rows as one row per partition (PACKED_SCHEMA): ``part`` (int, per row) says which; the rows of
    a partition keep their order.

    The JVM then moves a few large values, not a row per set: each row it takes from Python is converted
    to its own row format, written to the shuffle, read back and converted to Arrow again, field by field
    (1 M Zipf sets: 1.9 M routed rows of eight fields). :func:`unpacked` reads them back, no copy."""
    part = np.asarray(part, np.int64)
    if len(part) and (np.diff(part) < 0).any():
        order = np.argsort(part, kind="stable")
        batch, part = batch.take(pa.array(order)), part[order]
    starts = np.flatnonzero(np.concatenate([[True], part[1:] != part[:-1]])) if len(part) else np.zeros(0, np.int64)
    ends = np.append(starts[1:], len(part))
    blobs = [batch.slice(a, b - a).serialize() for a, b in zip(starts.tolist(), ends.tolist())]
    sizes = np.array([blob.size for blob in blobs], np.int64)
    if int(sizes.sum()) > KEY_ARRAY_BYTES:
        raise OverflowError(f"{int(sizes.sum()):,} bytes of packed rows exceed one binary array's {KEY_ARRAY_BYTES:,}")
    offsets = np.zeros(len(blobs) + 1, np.int32)
    np.cumsum(sizes, out=offsets[1:])
    data = np.empty(int(offsets[-1]), np.uint8)
    for blob, a in zip(blobs, offsets[:-1].tolist()):
        data[a:a + blob.size] = np.frombuffer(blob, np.uint8)
    values = pa.Array.from_buffers(pa.binary(), len(blobs), [None, pa.py_buffer(offsets), pa.py_buffer(data)])
    return pa.RecordBatch.from_arrays([pa.array(part[starts], pa.int32()), values], names=["part", "batch"])


def unpacked(batches: Iterable[pa.RecordBatch], schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    """The record batches (of ``schema``) that :func:`packed` rows hold, read in place (no copy)."""
    for batch in batches:
        column = batch.column("batch")
        _, offsets, data = column.buffers()
        offsets = np.frombuffer(offsets, np.int32)[column.offset:column.offset + len(column) + 1]
        for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist()):
            yield pa.ipc.read_record_batch(data.slice(a, b - a), schema)


#: Spark's types of the names :func:`struct` reads.
_TYPE_NAMES = ("int", "long", "binary", "string", "boolean", "double", "byte")


def struct(ddl: str):
    """The ``StructType`` of a flat DDL schema (``"a long, b binary, c array<int>"``; the types of
    ``_TYPE_NAMES`` and arrays of them), built in Python: a DDL string given to Spark is parsed by its
    SQL parser, whose first use in a JVM costs 0.2-0.3 s (ANTLR's start), where a type object reaches the
    JVM as JSON."""
    from pyspark.sql import types as T

    simple = {"int": T.IntegerType, "long": T.LongType, "binary": T.BinaryType, "string": T.StringType,
              "boolean": T.BooleanType, "double": T.DoubleType, "byte": T.ByteType}

    def typ(name: str):
        if name.startswith("array<") and name.endswith(">"):
            return T.ArrayType(typ(name[6:-1].strip()))
        if name not in simple:
            raise ValueError(f"struct() reads {', '.join(_TYPE_NAMES)} and arrays of them, not {name!r}")
        return simple[name]()

    fields = [part.strip().split(None, 1) for part in ddl.split(",")]
    return T.StructType([T.StructField(name, typ(kind.strip())) for name, kind in fields])


def _madvise_hugepage():
    """numpy's switch of transparent huge pages for its large arrays (``_set_madvise_hugepage``), or None."""
    try:
        from numpy._core.multiarray import _set_madvise_hugepage
    except ImportError:  # numpy 1
        try:
            from numpy.core.multiarray import _set_madvise_hugepage
        except ImportError:
            return None
    return _set_madvise_hugepage


@contextmanager
def small_pages() -> Iterator[None]:
    """numpy's arrays, Arrow's buffers and :func:`allpairs._kernels.malloc.large_empty`'s in ordinary pages while
    it lasts, not transparent huge pages.

    numpy asks the kernel for huge pages for every array of 4 MiB or more
    (``madvise``), and pyarrow's default pool (mimalloc) for its buffers too.
    A task's memory is mostly new to its Python worker, and a huge page is
    first zeroed, and where memory is fragmented first compacted, inside the
    fault: measured on this project's 2-core KVM machine, 300 MiB touched
    by a new process cost 1.4-1.7 s of system time in huge pages, 0.12-0.15 s
    in 4 KiB pages; a token group's task of 1 M Zipf sets (0.7 GiB) spent
    ~2.2 s of system time faulting its memory in, of ~4.5 CPU s. The previous
    settings are restored after.
    """
    import pyarrow as pa

    from ..._kernels.malloc import ordinary_pages

    switch = _madvise_hugepage()
    was = switch(False) if switch is not None else None
    pool = pa.default_memory_pool()
    pa.set_memory_pool(pa.system_memory_pool())
    try:
        with ordinary_pages():  # allpairs' own work arrays too (order_sets' numbering)
            yield
    finally:
        pa.set_memory_pool(pool)
        if switch is not None:
            switch(was)


def in_small_pages(body):
    """A ``mapInArrow`` body (a generator function) run inside :func:`small_pages`, the reading of its input
    batches included (pyspark reads them as the body asks for them)."""
    @functools.wraps(body)
    def run(*args, **kwargs):
        with small_pages():
            yield from body(*args, **kwargs)
    return run
