"""Where every file allpairs writes goes: standard output, or a file replaced whole at the end.

Pairs, ``sets`` files, index files and pictures all go through here. A
regular file is written through a temporary file beside it and renamed into
place only when everything was written, so a failed or interrupted run leaves
the old file as it was and no partial file behind. The new file keeps an
existing file's mode (and owner, where the user may set it); a file the user
may not write is refused. Anything that is not a regular file (``/dev/null``,
``/dev/full``, a FIFO, a terminal) is written straight through, as a shell
redirection would; a symbolic link is followed and its target replaced, never
the link. Every failure is one :class:`OutputError` naming the file.

Temporary files are registered with the signal watcher (:func:`remove_partial_files`),
and each is locked (``flock``) while it is written. One that a killed run left
behind (SIGKILL: nothing can clean up) is recognised by its name, ``.NAME.XXXXXXXX.allpairs.part``,
no lock and no write for :data:`STALE_SECONDS`, and removed by the next run that
writes NAME; so are the spill directories (``.allpairs-spill.XXXXXXXX.part``, see
:mod:`allpairs.output.spill`) such a run left in the same directory.
"""
from __future__ import annotations

import errno
import fcntl
import os
import re
import stat
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import BinaryIO, Callable, Iterator, Sequence

from ..errors import OutputError, UsageError

#: Suffix of the temporary file; its name is ``.NAME.XXXXXXXX.allpairs.part`` beside the output.
PART_SUFFIX = b".allpairs.part"

#: A temporary file nobody holds locked and nobody wrote for this long is left from a killed run.
STALE_SECONDS = 10.0

#: The format a file name ending so is written in (any other ending: --format's, TSV by default). JSON Lines
#: is the one JSON written: ``.json`` and ``.ndjson`` name it too (TSV was written under them before).
EXTENSIONS = {".tsv": "tsv", ".tab": "tsv", ".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl",
              ".json": "jsonl", ".parquet": "parquet"}

#: Endings of compressed files: nothing is written compressed, and plain text under such a name fools the
#: tools that read a file by its name (zcat, pandas, Spark).
COMPRESSED = {".gz": "gzip", ".bz2": "bzip2", ".xz": "xz", ".zst": "zstd", ".lz4": "lz4", ".zip": "zip",
              ".br": "brotli"}


def format_of_name(path) -> str | None:
    """The table format a file's name ends in (:data:`EXTENSIONS`), or None.

    Raises
    ------
    UsageError
        For the ending of a compressed file (``.gz``, ``.zst``, ...): the file would hold plain text.
    """
    name = os.fsdecode(path)
    stem, ext = os.path.splitext(name)
    tool = COMPRESSED.get(ext.lower())
    if tool is not None:
        raise UsageError(f"{name} names a {tool} file, and allpairs writes none (it would hold plain text): "
                         f"write {stem} and compress it, or pipe standard output through {tool}")
    return EXTENSIONS.get(ext.lower())


# Temporary files being written, and the lock under which they are created,
# renamed and removed: remove_partial_files() takes it for good, so that no
# temporary file appears or is renamed once the process has begun to die.
_pending: set[bytes] = set()
_lock = threading.Lock()
# Temporary directories another process writes (Spark's output), each with what stops that writer.
_pending_dirs: dict[bytes, Callable[[], None] | None] = {}


def remove_tree(path) -> None:
    """``shutil.rmtree``, errors ignored. shutil (~2 ms of start-up with the compression modules it loads)
    is imported where a directory is made and registered (:func:`partial_directory`, a spill's), not by
    every run: so it is loaded before the signal watcher may remove that directory."""
    import shutil

    shutil.rmtree(path, ignore_errors=True)


def remove_partial_files() -> None:
    """Remove every temporary output file still being written; for a signal handler that
    then ends the process (the lock stays held, so no new one is created or renamed)."""
    _lock.acquire()
    for tmp, stop in list(_pending_dirs.items()):
        if stop is not None:
            try:
                stop()  # a writer still running would put files back in the directory
            except Exception:  # noqa: BLE001  (dying anyway: the directory must go)
                pass
        remove_tree(tmp)
    _pending_dirs.clear()
    for tmp in list(_pending):
        try:
            os.unlink(tmp)
        except OSError:
            pass
    _pending.clear()


class Sink:
    """A binary stream over a file descriptor; every write is complete or an :class:`OutputError`.

    A closed pipe (``EPIPE``) is raised as :class:`BrokenPipeError`, so that
    the command line can end quietly as ``cat`` does.
    """

    def __init__(self, fd: int, name: str, stream: BinaryIO | None = None, *, positional: bool = False):
        self.fd = fd
        self.name = name
        self.stream = stream  # a Python stream standing in for the fd (stdout captured by a test runner)
        #: Whether :meth:`pwrite` may go back (a temporary regular file, not a device, FIFO or stdout).
        self.positional = positional

    def pwrite(self, data: bytes, offset: int) -> None:
        """Write ``data`` at ``offset`` of a temporary regular file (``positional`` only)."""
        if not self.positional:
            raise ValueError(f"{self.name} cannot be written out of order")
        view = memoryview(data)
        while view:
            try:
                n = os.pwrite(self.fd, view, offset)
            except OSError as e:
                raise _write_error(self.name, e) from None
            view, offset = view[n:], offset + n

    def write(self, data: bytes) -> int:
        if self.stream is not None:
            try:
                self.stream.write(data)
                self.stream.flush()
            except BrokenPipeError:
                raise
            except OSError as e:
                raise _write_error(self.name, e) from None
            return len(data)
        view = memoryview(data)
        while view:
            try:
                n = os.write(self.fd, view)
            except BrokenPipeError:
                raise
            except OSError as e:
                raise _write_error(self.name, e) from None
            view = view[n:]
        return len(data)

    def flush(self) -> None:
        """Nothing to do: writes are not buffered."""


def _write_error(name: str, e: OSError) -> OutputError:
    return OutputError(f"cannot write {name}: {e.strerror or e}")


def _display(path: bytes) -> str:
    return os.fsdecode(path)


@dataclass(init=False, eq=False, repr=False)  # __init__ below is the one it would generate
class OutputPlan:
    """Where :func:`open_output` will write, decided before the work."""

    name: str               # as the user gave it, for messages
    path: bytes             # the file written or replaced (a symlink's target)
    special: bool           # not a regular file: written straight through
    existing: os.stat_result | None
    role: str = "output"    # what the file is, for messages
    fd: int | None = None   # a descriptor of this process the path names (/dev/stdout: 1), written through it

    def __init__(self, name: str, path: bytes, special: bool, existing: os.stat_result | None,
                 role: str = "output", fd: int | None = None) -> None:
        self.name = name
        self.path = path
        self.special = special
        self.existing = existing
        self.role = role
        self.fd = fd


def check_output(path: str | os.PathLike | None, *, role: str = "output", update: bool = False) -> OutputPlan | None:
    """Check that ``path`` (None or '-': stdout) can be written, before any work is done; create nothing.

    Raises :class:`OutputError` for a directory (or a name ending in ``/``), a
    missing or unwritable directory, a name too long for the file system, or
    an existing file the user may not write. ``role`` names the file in
    messages ("output", "index", "picture"); ``update``: the file is to be
    updated in place (``index add``), so a read-only one must be made writable,
    not another name chosen.
    """
    if path is None or os.fsencode(path) == b"-":
        _stdout()  # a closed stdout is refused before the work too
        return None
    raw = os.fsencode(path)
    name = _display(raw)
    if not raw:
        raise OutputError(f"{role} file name is empty")
    if raw.endswith(b"/"):
        what = "is a directory" if os.path.isdir(raw) else "ends in '/'"
        raise OutputError(f"{role} {name} {what}; give a file name")
    try:
        st: os.stat_result | None = os.stat(raw)  # through links: what would be written
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise OutputError(f"{role} {name}: {e.strerror}") from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise OutputError(f"{role} {name} is a directory; give a file name")
    real = os.path.realpath(raw) if os.path.islink(raw) else raw  # replace a link's target, not the link
    own = _own_fd(raw)
    if st is not None and (not stat.S_ISREG(st.st_mode) or own is not None or _via_proc(raw)):
        # A device, FIFO or terminal, or a stream of this process (/dev/stdout, /dev/fd/N): write through.
        if not os.access(raw, os.W_OK):
            raise OutputError(f"{role} {name}: permission denied")
        return OutputPlan(name, raw, True, st, role, own)
    parent = os.path.dirname(real) or b"."
    if not os.path.isdir(parent):
        raise OutputError(f"{role} {name}: directory {_display(parent)} does not exist")
    if st is not None and not _writable(real, st):
        import shlex  # here, as tempfile below: a run that writes no file loads neither

        fix = f"make it writable to update it (chmod u+w {shlex.quote(name)})" if update else \
            "make it writable or choose another name"
        raise OutputError(f"{role} {name} is read-only (mode {stat.S_IMODE(st.st_mode):04o}); {fix}")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputError(f"{role} {name}: cannot create files in {_display(parent)} (permission denied)")
    if len(os.path.basename(real)) > _name_max(parent):
        raise OutputError(f"{role} {name}: file name is {len(os.path.basename(real))} bytes, "
                          f"longer than this file system allows ({_name_max(parent)})")
    return OutputPlan(name, real, False, st, role)


def _via_proc(path: bytes) -> bool:
    """Whether ``path`` leads through /proc (``/dev/stdout`` -> ``/proc/self/fd/1``): a stream
    this process already holds, to be written through, not replaced."""
    for _ in range(40):
        if os.path.realpath(os.path.dirname(os.path.abspath(path))).startswith(b"/proc/"):
            return True
        if not os.path.islink(path):
            return False
        path = os.path.join(os.path.dirname(path), os.readlink(path))
    return False


def _own_fd(path: bytes) -> int | None:
    """The descriptor N of this process that ``path`` names (``/dev/stdout``, ``/dev/fd/N``,
    ``/proc/self/fd/N``), else None: written through a copy of it, which shares its offset, as a
    redirection's other writers do (a file opened anew would write over what they write)."""
    import re

    for _ in range(40):
        where = re.fullmatch(rb"/proc/(\d+)(?:/task/\d+)?/fd", os.path.realpath(os.path.dirname(os.path.abspath(path))))
        if where is not None:
            number = os.path.basename(path)
            return int(number) if int(where.group(1)) == os.getpid() and number.isdigit() else None
        if not os.path.islink(path):
            return None
        path = os.path.join(os.path.dirname(path), os.readlink(path))
    return None


def _writable(path: bytes, st: os.stat_result) -> bool:
    """Whether the user may write the file, by its mode as well as by access(2): root may
    write anything, but a file nobody may write (0444) is not replaced even for root."""
    if not os.access(path, os.W_OK):
        return False
    if os.geteuid() != 0:
        return True
    return bool(st.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def _name_max(directory: bytes) -> int:
    try:
        return os.pathconf(directory, "PC_NAME_MAX")
    except (OSError, ValueError):
        return 255


def _part_prefix(parent: bytes, base: bytes) -> bytes:
    """``.NAME.`` for the temporary files of ``base``, NAME cut so that the whole name fits NAME_MAX."""
    room = _name_max(parent) - len(PART_SUFFIX) - 8 - 2  # mkstemp adds 8 random characters
    return b"." + base[:max(room, 1)] + b"."


def remove_stale_parts(path: bytes) -> list[bytes]:
    """Remove the temporary files of ``path`` that a killed run left beside it; return their names.

    A temporary file is stale when nobody holds its lock (its writer is gone:
    the kernel drops the locks of a killed process) and it has not been written
    for :data:`STALE_SECONDS` (which covers the instants between creating a
    file and locking it).
    """
    parent, base = os.path.split(path)
    parent = parent or b"."
    return remove_stale(parent, [(_parts_of(parent, base), False)])


#: A spill directory (:mod:`allpairs.output.spill`) is ``.allpairs-spill.XXXXXXXX.part`` (mkdtemp's eight characters).
SPILL_PREFIX, SPILL_SUFFIX = ".allpairs-spill.", ".part"


def remove_stale_spills(root: str | os.PathLike) -> list[str]:
    """Remove the spill directories in ``root`` that killed runs left (SIGKILL, the OOM killer); return them.

    One is stale when it is this user's, nobody holds its lock (its run is gone: the kernel drops the
    locks of a killed process) and nothing in it changed for :data:`STALE_SECONDS` (which covers the
    instants between making a directory and locking it); a directory on a file system without locks
    cannot be locked here either, and stays.
    """
    return [os.fsdecode(p) for p in remove_stale(os.fsencode(root), [(_spills(), True)])]


def _parts_of(parent: bytes, base: bytes) -> re.Pattern:
    return re.compile(re.escape(_part_prefix(parent, base)) + rb"[a-z0-9_]{8}" + re.escape(PART_SUFFIX) + rb"\Z")


def _spills() -> re.Pattern:
    return re.compile(re.escape(os.fsencode(SPILL_PREFIX)) + rb"[a-z0-9_]{8}" + re.escape(os.fsencode(SPILL_SUFFIX))
                      + rb"\Z")


def remove_stale(parent: bytes, patterns: Sequence[tuple[re.Pattern, bool]]) -> list[bytes]:
    """Remove the entries of ``parent`` that killed runs left, in one pass over it; return their paths.

    ``patterns``: (names, directory) pairs; a name matching ``names`` is an
    entry, stale as :func:`remove_stale_parts` says; ``directory``: such entries
    are directories (a spill's, locked by its run while it lives), removed with
    what they hold, and only this user's (they are made in a shared ``TMPDIR`` too).
    """
    removed = []
    try:
        entries = [(e.name, directory) for e in os.scandir(parent) if e.name[:1] == b"."  # both are hidden
                   for names, directory in patterns if names.match(e.name)]
    except OSError:
        return removed
    for entry, directory in entries:
        stale = os.path.join(parent, entry)
        try:
            fd = os.open(stale, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
                         | (os.O_DIRECTORY if directory else 0))
        except OSError:
            continue
        try:
            st = os.fstat(fd)
            if not (stat.S_ISDIR if directory else stat.S_ISREG)(st.st_mode) \
                    or (directory and st.st_uid != os.geteuid()) or time.time() - st.st_mtime < STALE_SECONDS:
                continue
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held by a live writer: OSError, left alone
            if directory:
                remove_tree(stale)
            else:
                os.unlink(stale)
            removed.append(stale)
        except OSError:
            pass
        finally:
            os.close(fd)
    return removed


def _temporary(plan: OutputPlan) -> tuple[int, bytes]:
    """Create (and lock) the temporary file beside the output, with a name that fits the file system,
    after removing any that a killed run left for the same output, and the spilled pairs a killed run left
    there (:func:`remove_stale_spills`: a rerun that no longer spills takes them away too)."""
    parent, base = os.path.split(plan.path)
    parent = parent or b"."
    # One pass over the directory: this output's temporary files, and the spilled pairs, that killed runs left.
    remove_stale(parent, [(_parts_of(parent, base), False), (_spills(), True)])
    import tempfile

    try:
        with _lock:
            fd, tmp = tempfile.mkstemp(prefix=_part_prefix(parent, base), suffix=PART_SUFFIX, dir=parent)
            _pending.add(tmp)
    except OSError as e:
        raise OutputError(f"{plan.role} {plan.name}: cannot create a file in {_display(parent)} "
                          f"({e.strerror})") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # "being written": see remove_stale_parts
        except OSError:
            pass  # a file system without locks: the file is then never taken for stale
        if plan.existing is not None:
            # Keep the replaced file's owner (where allowed) and mode.
            if (plan.existing.st_uid, plan.existing.st_gid) != (os.geteuid(), os.getegid()):
                try:
                    os.fchown(fd, plan.existing.st_uid, plan.existing.st_gid)
                except OSError:
                    pass
            os.fchmod(fd, stat.S_IMODE(plan.existing.st_mode))
        else:
            # mkstemp makes the file private (0600); give it the mode open() would.
            umask = os.umask(0)
            os.umask(umask)
            os.fchmod(fd, 0o666 & ~umask)
    except OSError as e:
        _discard(fd, tmp)
        raise OutputError(f"{plan.role} {plan.name}: {e.strerror}") from None
    return fd, tmp


def _discard(fd: int | None, tmp: bytes) -> None:
    if fd is not None:
        try:
            os.close(fd)
        except OSError:
            pass
    with _lock:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        _pending.discard(tmp)


def _stdout() -> Sink:
    stream = getattr(sys.stdout, "buffer", None)
    try:
        captured = stream is not None and stream.fileno() != 1
    except (OSError, ValueError, AttributeError):
        captured = True
    if captured:  # sys.stdout is not fd 1 (a test runner's capture): write to it
        return Sink(-1, "standard output", stream)
    try:
        mode = fcntl.fcntl(1, fcntl.F_GETFL) & os.O_ACCMODE
    except OSError:
        mode = None
    if mode not in (os.O_WRONLY, os.O_RDWR):
        raise OutputError("standard output is closed; redirect it to a file or a pipe")
    if sys.stdout is not None:
        try:
            sys.stdout.flush()
        except OSError as e:
            if e.errno == errno.EPIPE:
                raise BrokenPipeError(e.errno, e.strerror) from None
            raise _write_error("standard output", e) from None
    return Sink(1, "standard output")


@contextmanager
def removed_if_killed(directory: str | Callable[[], str], stop: Callable[[], None] | None = None) -> Iterator[str]:
    """Within the block, a signal that ends the program calls ``stop`` (which ends the process that writes
    in ``directory``), then removes ``directory``: one that this process removes itself when the block's
    work is done (pyspark's folder in which the JVM it starts writes its port and secret, removed once
    read). The signal watcher ends the process at once, so that removal, in the interrupted code's
    ``finally``, would never run. ``directory`` may be a function that makes it (``tempfile.mkdtemp``),
    called under the watcher's lock, so that no signal finds it made and not registered. Yields the
    directory."""
    import shutil  # noqa: F401  (for remove_tree: loaded before the directory is registered)

    with _lock:
        made = directory() if callable(directory) else directory
        raw = os.fsencode(made)
        _pending_dirs[raw] = stop
    try:
        yield made
    finally:
        with _lock:
            _pending_dirs.pop(raw, None)


@contextmanager
def partial_directory(target: str, *, stop_writer: Callable[[], None] | None = None) -> Iterator[str]:
    """A new directory beside ``target`` (``.NAME.XXXXXXXX.allpairs.part``) for another process to fill
    (Spark writing a Parquet dataset), renamed to ``target`` when the block ends, removed on an error.

    Registered with the signal watcher: a signal stops the writer (``stop_writer``) and removes it, so
    neither a partial dataset nor Spark's ``_temporary`` is left. ``target`` must not exist.
    """
    raw = os.fsencode(os.path.abspath(target))
    parent, base = os.path.split(raw)
    import shutil  # noqa: F401  (for remove_tree: loaded before the directory is registered)
    import tempfile

    try:
        with _lock:
            tmp = tempfile.mkdtemp(prefix=_part_prefix(parent, base), suffix=PART_SUFFIX, dir=parent)
            _pending_dirs[tmp] = stop_writer
    except OSError as e:
        raise OutputError(f"output {_display(raw)}: cannot create a directory in {_display(parent)} "
                          f"({e.strerror})") from None
    try:
        yield os.fsdecode(tmp)
        with _lock:
            try:
                os.rename(tmp, raw)
            except OSError as e:
                raise OutputError(f"output {_display(raw)}: cannot move the dataset into place ({e.strerror})") \
                    from None
            _pending_dirs.pop(tmp, None)
    finally:
        if tmp in _pending_dirs:
            with _lock:
                remove_tree(tmp)
                _pending_dirs.pop(tmp, None)


@contextmanager
def open_output(path: str | os.PathLike | None, plan: OutputPlan | None = None, *, role: str = "output",
                sync: bool = False) -> Iterator[Sink]:
    """A :class:`Sink` for the results: standard output for None or '-', else ``path``.

    A regular file is written to a temporary file beside it, renamed into place
    when the block succeeds and removed on any error or interrupt, so no
    half-written output file is left behind and an existing file stays as it
    was. ``plan`` is what :func:`check_output` returned, when it was called
    before the work; ``role`` names the file in messages; ``sync`` flushes the
    file to disk before it replaces the old one (for a file that is the only
    copy of its data, such as an index).
    """
    with open_outputs([path], [plan], role=role, sync=sync) as (sink,):
        yield sink


@contextmanager
def open_outputs(paths: Sequence[str | os.PathLike | None], plans: Sequence[OutputPlan | None] | None = None, *,
                 role: str = "output", sync: bool = False) -> Iterator[list[Sink]]:
    """One :class:`Sink` for each of ``paths``, as :func:`open_output`, replaced together.

    The finished files are renamed into place under the lock that the signal
    watcher takes, so a signal leaves either all of them new or all old.
    """
    plans = list(plans) if plans is not None else [None] * len(paths)
    sinks: list[Sink] = []
    staged: list[list] = []  # [fd or None, tmp, plan] of each temporary file
    direct: list[int] = []  # fds opened on devices and FIFOs, written straight through
    try:
        for path, plan in zip(paths, plans):
            if path is None or os.fsencode(path) == b"-":
                sinks.append(_stdout())
                continue
            plan = plan or check_output(path, role=role)
            if plan.special:
                try:
                    # A descriptor of this process shares its offset with the shell's other writers; else
                    # O_APPEND: /dev/stdout on a file opened with >> keeps what is there.
                    fd = os.dup(plan.fd) if plan.fd is not None else \
                        os.open(plan.path, os.O_WRONLY | os.O_APPEND | os.O_NOCTTY | os.O_CLOEXEC)
                except OSError as e:
                    raise OutputError(f"{plan.role} {plan.name}: {e.strerror}") from None
                direct.append(fd)
                sinks.append(Sink(fd, plan.name))
                continue
            fd, tmp = _temporary(plan)
            staged.append([fd, tmp, plan])
            sinks.append(Sink(fd, plan.name, positional=True))
        yield sinks
        for item in staged:
            fd, _, plan = item
            item[0] = None
            try:
                if sync:
                    os.fsync(fd)
            except OSError as e:
                os.close(fd)
                raise _write_error(plan.name, e) from None
            try:
                os.close(fd)
            except OSError as e:
                raise _write_error(plan.name, e) from None
        with _lock:
            for _, tmp, plan in staged:
                try:
                    os.replace(tmp, plan.path)
                except OSError as e:
                    raise OutputError(f"{plan.role} {plan.name}: cannot rename the finished file into place "
                                      f"({e.strerror})") from None
                _pending.discard(tmp)
    except BaseException:
        for fd, tmp, _ in staged:
            _discard(fd, tmp)
        raise
    finally:
        for fd in direct:
            try:
                os.close(fd)
            except OSError:
                pass
