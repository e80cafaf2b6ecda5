"""Sorted runs of document pairs on disk, merged back in order: the pairs of a join larger than its memory.

A join whose pairs do not fit the memory budget hands them over a block at a
time, each block already in output order ((left, right) document positions);
each block becomes a *run*, a file of fixed-size records in a private
temporary directory (beside the output, or ``TMPDIR``). When the join is done
the runs are merged k ways, a buffer of each at a time, back into one stream
in output order, so that the writers see what they would have seen from
memory and write the same bytes (Knuth, TAOCP vol. 3, 5.4.1: multiway merging
with a fence, the smallest last key of the buffers, below which every pair of
every buffer may go out).

The directory is registered with the signal watcher as Spark's output
directories are (:func:`allpairs.output.files.remove_partial_files`), removed
when the pairs are closed, on an error, at exit and on a signal. A disk that
fills is one :class:`~allpairs.errors.OutputError` naming the directory and
the bytes needed, and nothing is left behind. A run killed outright (SIGKILL,
the OOM killer: nothing can clean up) leaves its directory; each is locked
(``flock``) while its run lives, so the next run that spills in the same place,
or writes a file there, removes the ones nobody holds
(:func:`allpairs.output.files.remove_stale_spills`), as it does a killed
run's temporary output files.
"""
from __future__ import annotations

import errno
import fcntl
import functools
import os
import re
import weakref
from typing import Callable, Iterable, Iterator

import numpy as np

from ..errors import OutputError, UsageError
from . import files as registry  # the signal watcher's list of directories to remove
from .files import SPILL_PREFIX, SPILL_SUFFIX, remove_stale_spills

#: One document pair on disk: ``left << 32 | right`` (its output order) and the overlap; 12 bytes, packed.
RECORD = np.dtype([("key", "<i8"), ("overlap", "<i4")])

#: Bytes a pair of distinct sets costs while held (three int32 columns, the adjacency that expands it:
#: partner, pair index and direction each way, and the growth of the kernels' buffers).
SET_PAIR_BYTES = 48

#: The command line's memory budget: fits a small machine (a 1 GiB container) beside the corpus and the program.
DEFAULT_MEMORY = 256 << 20

#: The smallest budget taken: below it every block is a handful of pairs and the merge reads in crumbs.
MIN_MEMORY = 1 << 16

#: Records read from each run at a time, at least (the merge's buffers share the budget above that).
MIN_READ = 1 << 12

_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


@functools.cache  # compiled on first use, not on the import of every run
def _size() -> re.Pattern:
    return re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([kmgt]?)(i?b)?\s*\Z", re.IGNORECASE)


#: Runs merged at once at most: past it the runs so far are merged into one (a file open for each).
FAN_IN = 64

#: The write that runs go through (a test swaps it for one that fills the disk).
_write = os.write


def parse_memory(value: int | str | None) -> int:
    """A memory budget in bytes from an int (bytes) or a size such as ``512M``, ``1.5GiB``, ``800k``
    (powers of 1024); None is :data:`DEFAULT_MEMORY`."""
    if value is None:
        return DEFAULT_MEMORY
    if isinstance(value, bool):
        raise UsageError(f"{{{{memory={value}}}}} is not a size; give bytes or a size such as 512M or 2G",
                         param="memory")
    if isinstance(value, (int, np.integer)):
        n = int(value)
    elif isinstance(value, str) and 2 <= len(value) <= 16 and value[-1] in "kmgtKMGT" and value[:-1].isascii() \
            and value[:-1].isdigit():  # "256M", the command line's default: the pattern below not compiled
        n = int(value[:-1]) * _UNITS[value[-1].lower()]  # as float(digits) * unit, exact below 2**53
    else:
        match = _size().match(str(value))
        if not match:
            raise UsageError(f"{{{{memory={value}}}}} is not a size; give bytes or a size such as 512M or 2G",
                         param="memory")
        n = int(float(match.group(1)) * _UNITS[match.group(2).lower()])
    if n < MIN_MEMORY:
        raise UsageError(f"{{{{memory={value}}}}} is below {MIN_MEMORY // 1024} KiB; give more, such as 512M",
                         param="memory")
    return n


def size_text(n: int) -> str:
    """Bytes as a short figure in powers of 1024 (``1.5 GiB``)."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:,.1f} {unit}"
    return f"{n:,} bytes"


class PairRuns:
    """Runs of document pairs, each sorted by (left, right), written to a private temporary directory.

    ``where``: the directory the private one is made in (the output's); None:
    ``TMPDIR``. ``memory``: what a merge may buffer. ``needed``, called when the disk fills, says about how many
    bytes the whole spill would take (for the message); default what was
    being written. The directory is made on the first run and removed by
    :meth:`close`, at exit, on a signal, or when a write fails.
    """

    def __init__(self, where: str | os.PathLike | None = None, *, memory: int = DEFAULT_MEMORY,
                 needed: Callable[[int], int] | None = None):
        import tempfile  # here: a run that never spills (a count, a small answer) does not load it

        self.root = tempfile.gettempdir() if where is None else os.fsdecode(where)
        #: What moves the spill elsewhere, for the messages: TMPDIR, or (beside the output) the output's place.
        self.elsewhere = "point TMPDIR elsewhere" if where is None else "write the output elsewhere"
        self.memory = memory
        self._made = 0  # run files made, for their names
        self.directory: str | None = None
        self.runs: list[tuple[str, int]] = []  # (file, records)
        self.bytes = 0
        self.needed = needed
        self._finalizer = None

    def __len__(self) -> int:
        return sum(n for _, n in self.runs)

    @property
    def made(self) -> int:
        """Runs written (some since merged into one)."""
        return self._made

    def _open_directory(self) -> str:
        import shutil  # noqa: F401  (for registry.remove_tree: loaded before the directory is registered)
        import tempfile

        remove_stale_spills(self.root)
        try:
            with registry._lock:
                path = tempfile.mkdtemp(prefix=SPILL_PREFIX, suffix=SPILL_SUFFIX, dir=self.root)
                registry._pending_dirs[os.fsencode(path)] = None
        except OSError as e:
            raise OutputError(f"cannot make a directory for spilled pairs in {self.root} ({e.strerror}); "
                              f"allow more memory or {self.elsewhere}") from None
        self.directory = path
        self._finalizer = weakref.finalize(self, _remove, path, _hold(path))
        return path

    def add(self, chunks: Iterable) -> int:
        """Write one run from ``chunks`` (each with ``left``, ``right``, ``overlap`` arrays, such as
        :class:`~allpairs.pairs.result.PairChunk`; together in (left, right) order); return the pairs written."""
        directory = self.directory or self._open_directory()
        if len(self.runs) >= FAN_IN:
            self._compact()
        path = os.path.join(directory, f"run{self._made:06d}")
        self._made += 1
        written = 0
        fd = _create_run(path)
        try:
            for chunk in chunks:
                rec = np.empty(len(chunk.left), RECORD)
                rec["key"] = (chunk.left.astype(np.int64) << 32) | chunk.right.astype(np.int64)
                rec["overlap"] = chunk.overlap
                self._write_all(fd, memoryview(rec.tobytes()))
                written += len(rec)
        finally:
            os.close(fd)
        self.runs.append((path, written))
        return written

    def _write_all(self, fd: int, view: memoryview) -> None:
        while view:
            try:
                n = _write(fd, view)
            except OSError as e:
                directory = self.directory
                self.close()
                if e.errno in (errno.ENOSPC, errno.EDQUOT):
                    need = self.needed(self.bytes + len(view)) if self.needed else self.bytes + len(view)
                    raise OutputError(f"no space left in {os.path.dirname(directory)} for the spilled pairs: "
                                      f"about {size_text(need)} needed ({size_text(self.bytes)} written); free "
                                      f"space there, {self.elsewhere}, or allow more memory") from None
                raise OutputError(f"cannot write spilled pairs in {directory}: {e.strerror}") from None
            self.bytes += n
            view = view[n:]

    def merge(self, memory: int | None = None, max_pairs: int = 1 << 20) -> Iterator[tuple[np.ndarray, ...]]:
        """Every pair of every run in (left, right) order, as (left, right, overlap) int32 arrays of
        ``max_pairs`` (the last fewer; a document's partners may be split); buffers about ``memory``."""
        pending: list[np.ndarray] = []
        n_pending = 0
        for batch in self._records(self.memory if memory is None else memory):
            pending.append(batch)
            n_pending += len(batch)
            if n_pending >= max_pairs:
                rec = np.concatenate(pending)
                whole = len(rec) - len(rec) % max_pairs
                for lo in range(0, whole, max_pairs):
                    yield _columns(rec[lo:lo + max_pairs])
                pending, n_pending = [rec[whole:]], len(rec) - whole
        if n_pending:
            yield _columns(np.concatenate(pending))

    def _records(self, memory: int) -> Iterator[np.ndarray]:
        """The runs' records merged in key order, a batch at a time."""
        k = len(self.runs)
        if not k:
            return
        read = max(MIN_READ, memory // (2 * k * RECORD.itemsize))
        files = [open(path, "rb") for path, _ in self.runs]
        try:
            left = [n for _, n in self.runs]  # records not yet read from each run
            bufs = [np.empty(0, RECORD) for _ in range(k)]
            while True:
                for i in range(k):
                    if not len(bufs[i]) and left[i]:
                        bufs[i] = np.fromfile(files[i], RECORD, min(read, left[i]))
                        left[i] -= len(bufs[i])
                live = [i for i in range(k) if len(bufs[i])]
                if not live:
                    break
                # The fence: the smallest last key of a buffer whose run has more; every key up to it may go.
                ends = [int(bufs[i]["key"][-1]) for i in live if left[i]]
                fence = min(ends) if ends else None
                taken = []
                for i in live:
                    cut = len(bufs[i]) if fence is None else int(np.searchsorted(bufs[i]["key"], fence, "right"))
                    if cut:
                        taken.append(bufs[i][:cut])
                        bufs[i] = bufs[i][cut:]
                if len(taken) == 1:
                    yield taken[0]
                else:  # sorted slices, one per run: timsort merges them
                    batch = np.concatenate(taken)
                    yield batch[np.argsort(batch["key"], kind="stable")]
        finally:
            for f in files:
                f.close()

    def _compact(self) -> None:
        """Merge every run into one, so that a merge never opens more than :data:`FAN_IN` files."""
        old = self.runs
        path = os.path.join(self.directory, f"run{self._made:06d}")
        self._made += 1
        written = 0
        fd = _create_run(path)
        try:
            for rec in self._records(self.memory):
                self._write_all(fd, memoryview(rec.tobytes()))
                written += len(rec)
        finally:
            os.close(fd)
        for name, _ in old:
            os.unlink(name)
        self.bytes = written * RECORD.itemsize
        self.runs = [(path, written)]

    def close(self) -> None:
        """Remove the directory and every run (again: nothing)."""
        if self._finalizer is not None:
            self._finalizer()
        self.directory = None
        self.runs = []


def _columns(rec: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    key = rec["key"]
    return (key >> 32).astype(np.int32), (key & 0xFFFFFFFF).astype(np.int32), rec["overlap"].astype(np.int32)


def _create_run(path: str) -> int:
    """Open a new run file, under the lock the signal watcher takes for good before it removes the
    directory: a file made while it removes would keep the directory (and the run) behind."""
    with registry._lock:
        return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)


def _remove(path: str, held: int | None = None) -> None:
    with registry._lock:
        registry.remove_tree(path)
        registry._pending_dirs.pop(os.fsencode(path), None)
    if held is not None:
        os.close(held)


def _hold(path: str) -> int | None:
    """Lock the spill directory for as long as its run lives (the fd is closed by :func:`_remove`; the
    kernel drops the lock of a killed process); None on a file system without locks."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        pass  # no locks here: the directory is then never taken for stale (see remove_stale_spills)
    return fd

