"""The ``allpairs`` program (the console script and ``python -m allpairs``).

Everything here happens before the command line and its compiled kernels are
imported, so that it holds from the first moment of a run:

- A standard stream that was closed (``>&-``, ``<&-``) is held open on
  /dev/null, so that no file the run opens takes its place; writing results to
  a closed stdout is then an error, not a write into some other file.
- Every catchable terminating signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT,
  SIGALRM, SIGUSR1/2, SIGXCPU) is routed to one watcher thread through
  :func:`signal.set_wakeup_fd`. The watcher removes partial output files, ends
  worker processes, prints one line and exits with 128 + the signal number,
  whatever the main thread is doing: inside a compiled kernel, waiting for
  worker threads, or importing. The Python-level handlers do nothing, so no
  exception is ever raised inside a kernel or while its result is unpacked.
  A signal that was ignored when the program started (``nohup``, a background
  job of a non-interactive shell) stays ignored.
- A process forked from the run (a shingling worker) gets the default
  handlers back and is killed when the run ends (PR_SET_PDEATHSIG on Linux);
  not Spark's JVM, which ends by itself when the run does and must not be
  killed (:mod:`allpairs._children`).
- SIGXFSZ is ignored, so that a file-size limit is a write error ("File too
  large"), reported in one line.

The program itself (the console script, ``python -m allpairs``) is :func:`program`: :func:`main`, then
the exit handlers, and the process ends without the interpreter's teardown where no other thread runs.
"""
from __future__ import annotations

import atexit
import gc
import os
import signal
import sys
import threading

from ._children import dies_with_the_run

#: The signals that end a run, and the word for each on stderr.
FATAL = {
    signal.SIGINT: "interrupted",
    signal.SIGTERM: "terminated",
    signal.SIGHUP: "hung up",
    signal.SIGQUIT: "quit",
    signal.SIGALRM: "alarm",
    signal.SIGUSR1: "terminated by SIGUSR1",
    signal.SIGUSR2: "terminated by SIGUSR2",
    signal.SIGXCPU: "CPU time limit exceeded",
}


def _hold_standard_streams() -> None:
    """Put /dev/null on fds 0-2 where they are closed (read-only on 0 and 1: writing results
    there fails, as it should)."""
    for fd, flags in ((0, os.O_RDONLY), (1, os.O_RDONLY), (2, os.O_WRONLY)):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, flags)
            if null != fd:
                os.dup2(null, fd, inheritable=True)
                os.close(null)


def _ignore(signum, frame) -> None:
    """The Python-level handler: nothing; the watcher thread acts."""


def _die(signum: int) -> None:
    """Remove partial output, end worker processes, say why, exit 128 + signum."""
    # A signal during the import of the output module finds it partly made: no file registered yet.
    remove = getattr(sys.modules.get("allpairs.output.files"), "remove_partial_files", None)
    if remove is not None:
        remove()
    mp = sys.modules.get("multiprocessing")
    if mp is not None:
        try:
            for child in mp.active_children():
                child.kill()
        except Exception:  # noqa: BLE001  (dying anyway: the exit below must happen)
            pass
    try:
        # On a terminal, clear a progress bar's line and show the cursor it hid.
        restore = b"\r\x1b[2K\x1b[?25h" if os.isatty(2) else b""
        os.write(2, restore + f"allpairs: {FATAL.get(signum, f'signal {signum}')}\n".encode())
    except OSError:
        pass
    os._exit(128 + signum)


def _watch(fd: int) -> None:
    while True:
        try:
            data = os.read(fd, 64)
        except InterruptedError:
            continue
        except OSError:
            return
        for signum in data:
            if signum in FATAL:
                _die(signum)


#: The process that is forking (set just before each fork, read in the child).
_forker = 0


def _before_fork() -> None:
    global _forker
    _forker = os.getpid()


def _in_forked_child(prctl) -> None:
    """In a worker process forked from the run: default signal handling (a signal to the
    process group ends it directly), and death with the parent (PR_SET_PDEATHSIG), so
    that no worker outlives the run, whatever ends it."""
    signal.set_wakeup_fd(-1)
    for signum in FATAL:
        if signal.getsignal(signum) is _ignore:
            signal.signal(signum, signal.SIG_DFL)
    if not dies_with_the_run():
        return
    if prctl is not None:
        prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if os.getppid() != _forker:  # the parent died before prctl took effect
        os._exit(128 + signal.SIGKILL)


def _prctl():
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_installed = False


def install_signal_handlers() -> None:
    """Route the terminating signals to the watcher thread (once per process)."""
    global _installed
    if _installed or threading.current_thread() is not threading.main_thread():
        return
    _installed = True
    r, w = os.pipe()
    os.set_blocking(w, False)
    threading.Thread(target=_watch, args=(r,), name="allpairs-signals", daemon=True).start()
    for signum in FATAL:
        if signal.getsignal(signum) != signal.SIG_IGN:
            signal.signal(signum, _ignore)
    signal.set_wakeup_fd(w, warn_on_full_buffer=False)
    prctl = _prctl()
    os.register_at_fork(before=_before_fork, after_in_child=lambda: _in_forked_child(prctl))
    if hasattr(signal, "SIGXFSZ"):
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def main(teardown: bool = True) -> None:
    """Set up streams and signals, then run the command line; end by SystemExit (with ``teardown``
    False, where :func:`_only_daemon_threads`: the exit handlers run, then :func:`os._exit`)."""
    _hold_standard_streams()
    install_signal_handlers()
    # allpairs makes no BLAS call: the thread pool OpenBLAS starts when numpy loads would only spin.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    # The imports make a few hundred thousand objects that live as long as the run: the collector scanning
    # them as they are made, and again in every later full collection, cost ~6 % of a small run's
    # instructions. It pauses for the imports, then leaves what they made out of its scans (gc.freeze).
    gc.disable()
    try:
        from .cli import command, main as command_line
        from .cli._render import BrokenPipe

        run = command(sys.argv[1:])  # the modules of the run imported: a plain join's, or the typer app's
    except (MemoryError, OSError) as e:  # a memory limit (ulimit -v) too low to load numpy (numba: see allpairs._kernels.jit.prepare)
        why = "out of memory" if isinstance(e, MemoryError) else (str(e).splitlines() or ["?"])[0]
        os.write(2, f"allpairs: error: cannot start ({why}); if memory is limited (ulimit -v), raise the limit\n"
                 .encode("utf-8", "backslashreplace"))
        os._exit(1)
    gc.freeze()
    gc.enable()
    try:
        command_line(run)
    except BrokenPipe:
        # As cat does when its reader has gone: no message, ended by SIGPIPE (status 141).
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGPIPE)
        sys.exit(141)
    except SystemExit as e:
        if e.code and sys.stdout is not None:
            try:
                sys.stdout.flush()
            except OSError:  # what could not be written is dropped, not reported again at exit
                os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
        # The run is over: a signal from now on would only race the interpreter's teardown,
        # which puts the default handlers back (and would kill the process with the work done).
        for signum in FATAL:
            if signal.getsignal(signum) is _ignore:
                signal.signal(signum, signal.SIG_IGN)
        if not teardown and isinstance(e.code, int) and _only_daemon_threads():
            atexit._run_exitfuncs()  # as the interpreter would: a spill folder's removal, logging's flush, ...
            if _flushed():
                os._exit(e.code)
        raise


def _only_daemon_threads() -> bool:
    """True when no thread but daemons runs beside this one (the interpreter would wait for the others):
    once the exit handlers have run and stdout and stderr are flushed, its teardown would only free
    memory, every object of numpy and the run one by one: ~10 M instructions of a ~0.6 G Kosarak
    ``join --sets --count`` (~1.7 %) and ~120 page faults, where the system frees the memory at once."""
    return not any(not t.daemon for t in threading.enumerate() if t is not threading.main_thread())


def _flushed() -> bool:
    """Flush stdout and stderr; False if that fails (the teardown reports it, as before)."""
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):  # unwritable, or closed
        return False
    return True


def program() -> None:
    """The ``allpairs`` program (the console script, ``python -m allpairs``): :func:`main`, its exit
    handlers run and the process ended without the interpreter's teardown where no other thread runs.
    A caller of :func:`main` in Python (a test, a script) gets its SystemExit as ever."""
    main(teardown=False)


if __name__ == "__main__":
    program()
