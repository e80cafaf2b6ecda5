"""Stage 6, where the pairs go: standard output, or a file replaced whole at the end.

A regular file is written through a temporary file beside it and renamed into
place only when everything was written, so a failed or interrupted run leaves
the old file as it was and no partial file behind. The new file keeps an
existing file's mode (and owner, where the user may set it). Anything that is
not a regular file (``/dev/null``, ``/dev/full``, a FIFO, a terminal) is written
straight through, as a shell redirection would; a symbolic link is followed and
its target replaced, never the link. Every failure is one :class:`OutputError`.
"""
from __future__ import annotations

import errno
import fcntl
import os
import stat
import sys
import tempfile
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import BinaryIO, Iterator

from ..errors import OutputError

#: Suffix of the temporary file; its name is ``.NAME.XXXXXXXX.part`` beside the output.
PART_SUFFIX = b".part"

# Temporary files being written, and the lock under which they are created,
# renamed and removed: remove_partial_files() takes it for good, so that no
# temporary file appears or is renamed once the process has begun to die.
_pending: set[bytes] = set()
_lock = threading.Lock()


def remove_partial_files() -> None:
    """Remove every temporary output file still being written; for a signal handler that
    then ends the process (the lock stays held, so no new one is created or renamed)."""
    _lock.acquire()
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

    def __init__(self, fd: int, name: str, stream: BinaryIO | None = None):
        self.fd = fd
        self.name = name
        self.stream = stream  # a Python stream standing in for the fd (stdout captured by a test runner)

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


@dataclass
class OutputPlan:
    """Where :func:`open_output` will write, decided before the work."""

    name: str               # as the user gave it, for messages
    path: bytes             # the file written or replaced (a symlink's target)
    special: bool           # not a regular file: written straight through
    existing: os.stat_result | None


def check_output(path: str | os.PathLike | None) -> OutputPlan | None:
    """Check that ``path`` (None or '-': stdout) can be written, before any work is done; create nothing.

    Raises :class:`OutputError` for a directory (or a name ending in ``/``), a
    missing or unwritable directory, a name too long for the file system, or
    an existing file the user may not write.
    """
    if path is None or os.fsencode(path) == b"-":
        _stdout()  # a closed stdout is refused before the work too
        return None
    raw = os.fsencode(path)
    name = _display(raw)
    if not raw:
        raise OutputError("output file name is empty")
    if raw.endswith(b"/"):
        what = "is a directory" if os.path.isdir(raw) else "ends in '/'"
        raise OutputError(f"output {name} {what}; give a file name")
    try:
        st: os.stat_result | None = os.stat(raw)  # through links: what would be written
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise OutputError(f"output {name}: {e.strerror}") from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise OutputError(f"output {name} is a directory; give a file name")
    real = os.path.realpath(raw) if os.path.islink(raw) else raw  # replace a link's target, not the link
    if st is not None and (not stat.S_ISREG(st.st_mode) or _via_proc(raw)):
        # A device, FIFO or terminal, or a stream of this process (/dev/stdout, /dev/fd/N): write through.
        if not os.access(raw, os.W_OK):
            raise OutputError(f"output {name}: permission denied")
        return OutputPlan(name, raw, True, st)
    parent = os.path.dirname(real) or b"."
    if not os.path.isdir(parent):
        raise OutputError(f"output {name}: directory {_display(parent)} does not exist")
    if st is not None and not _writable(real, st):
        raise OutputError(f"output {name} is read-only (mode {stat.S_IMODE(st.st_mode):04o}); "
                          "make it writable or choose another name")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputError(f"output {name}: cannot create files in {_display(parent)} (permission denied)")
    if len(os.path.basename(real)) > _name_max(parent):
        raise OutputError(f"output {name}: file name is {len(os.path.basename(real))} bytes, "
                          f"longer than this file system allows ({_name_max(parent)})")
    return OutputPlan(name, real, False, st)


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


def _temporary(plan: OutputPlan) -> tuple[int, bytes]:
    """Create the temporary file beside the output, with a name that fits the file system."""
    parent, base = os.path.split(plan.path)
    parent = parent or b"."
    # mkstemp adds 8 random characters; keep the whole name within NAME_MAX.
    room = _name_max(parent) - len(PART_SUFFIX) - 8 - 2
    prefix = b"." + base[:max(room, 1)] + b"."
    try:
        with _lock:
            fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=PART_SUFFIX, dir=parent)
            _pending.add(tmp)
    except OSError as e:
        raise OutputError(f"output {plan.name}: cannot create a file in {_display(parent)} ({e.strerror})") from None
    try:
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
        raise OutputError(f"output {plan.name}: {e.strerror}") from None
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
def open_output(path: str | os.PathLike | None, plan: OutputPlan | None = None) -> Iterator[Sink]:
    """A :class:`Sink` for the results: standard output for None or '-', else ``path``.

    A regular file is written to a temporary file beside it, renamed into place
    when the block succeeds and removed on any error or interrupt, so no
    half-written output file is left behind and an existing file stays as it
    was. ``plan`` is what :func:`check_output` returned, when it was called
    before the work.
    """
    if path is None or os.fsencode(path) == b"-":
        yield _stdout()
        return
    plan = plan or check_output(path)
    if plan.special:
        try:
            # O_APPEND: /dev/stdout on a file opened with >> keeps what is there.
            fd = os.open(plan.path, os.O_WRONLY | os.O_APPEND | os.O_NOCTTY | os.O_CLOEXEC)
        except OSError as e:
            raise OutputError(f"output {plan.name}: {e.strerror}") from None
        try:
            yield Sink(fd, plan.name)
        finally:
            try:
                os.close(fd)
            except OSError:
                pass
        return
    fd, tmp = _temporary(plan)
    try:
        yield Sink(fd, plan.name)
        try:
            os.close(fd)
        except OSError as e:
            fd = None
            raise _write_error(plan.name, e) from None
        fd = None
        with _lock:
            try:
                os.replace(tmp, plan.path)
            except OSError as e:
                raise OutputError(f"output {plan.name}: cannot rename the finished file into place "
                                  f"({e.strerror})") from None
            _pending.discard(tmp)
    except BaseException:
        _discard(fd, tmp)
        raise
