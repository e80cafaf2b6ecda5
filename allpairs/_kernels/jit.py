"""The one place where numba options and thread counts are set for every compiled kernel.

Every kernel is written once, as plain Python over arrays and scalars, and
runs one of two ways:

- compiled: ahead of time, at install, for the signatures the library uses
  (:mod:`allpairs._kernels.aot`: loaded without numba), else by numba on first use
  (``cache=True``: compiled once, then loaded from numba's cache;
  ``nogil=True``: threads run kernels side by side), or
- as the plain Python function itself. Its arithmetic is numpy's on numpy
  scalars, which is numba's only where the kernel says which type it means:
  numba computes on at least 64 bits (``int32 * int32`` is int64), numpy
  keeps the narrower type (``int32 * int32`` wraps at 2**31), so kernels
  widen to int64 before arithmetic that could leave 32 bits. A kernel whose
  arithmetic is meant to wrap modulo 2**64 (a hash: ``@kernel(wraps=True)``)
  runs inside ``np.errstate(over="ignore")``; every other one inside
  ``np.errstate(over="raise")``, so that an overflow which the compiled code
  would not have, or would hide, stops the run with
  :class:`KernelOverflowError` instead of giving another answer.

All three ways give the same results; the tests run the oracle comparisons
all three ways (``scripts/audit_kernel_paths.py`` runs every kernel family on
extreme inputs and compares).

Compiling by numba pays a fixed cost before the first kernel runs: importing
numba (~0.5 s), its registries (~0.4 s) and loading each kernel from the cache
(15-25 ms each). For a small input the plain functions finish sooner, so numba
is imported only when a kernel is first run by numba, never at import time.

Which way a kernel runs:

- ``ALLPAIRS_KERNELS=compiled`` or ``python`` (the environment variable, or
  :func:`use_kernels`): always that way; ``jit``: compiled, but always by
  numba, never ahead of time;
- ``auto`` (the default): the function built ahead of time for the call's
  argument types whenever there is one (it costs nothing to start); else
  plain Python inside :func:`kernels_for` a small input (``input_bytes <
  PLAIN_BELOW``; :func:`allpairs.join`, a ``--sets`` file read by
  :func:`allpairs.corpus.read_sets` and the expanding and writing of
  :class:`allpairs.pairs.Pairs` open it), and numba everywhere else (a big
  input, any direct call of a kernel, a Spark worker);
- ``NUMBA_DISABLE_JIT=1`` keeps its meaning, every kernel plain Python (slow,
  but coverage and debuggers see it), whatever ``ALLPAIRS_KERNELS`` says.

A compiled kernel calls other kernels through its module's globals: they are
:class:`Kernel` objects, which numba types as the numba dispatchers behind them.
"""
from __future__ import annotations

import functools
import importlib
import os
import sys
import threading
import time
from contextlib import contextmanager
from typing import Callable, Iterator

import numpy as np

from . import aot as _aot
from ..errors import AllPairsError, KernelOverflowError, UsageError

#: The ways kernels may run (``ALLPAIRS_KERNELS``).
MODES = ("auto", "compiled", "jit", "python")

#: In ``auto`` mode, an input of fewer bytes than this runs as plain Python the kernels that have
#: no function built ahead of time for their arguments (the others run built, at no start-up cost): the
#: break-even of whole joins measured by ``scripts/bench_startup.py`` (plain Python wins up
#: to ~75 KB of Kosarak transactions, loses 2× at 160 KB; on text it wins further).
PLAIN_BELOW = 65_536


def _mode_from_environment() -> str:
    if os.environ.get("NUMBA_DISABLE_JIT", "0").strip() not in ("", "0"):
        return "python"
    return os.environ.get("ALLPAIRS_KERNELS", "auto").strip().lower() or "auto"


_mode = _mode_from_environment()
_small = 0  # kernels_for scopes open on a small input ...
_big = 0  # ... and on a big one
_plain = _mode == "python"  # the decision every kernel call reads: kept up to date by _decide()
_ahead = _mode not in ("jit", "python")  # calls may run the ahead-of-time functions
_lock = threading.RLock()
_jit: Callable | None = None  # numba.njit with our options, once numba is imported
_clocks: list["CompileClock"] = []  # installed on numba's compile events as soon as numba is imported


def _decide() -> None:
    global _plain, _ahead
    _plain = _mode == "python" or (_mode == "auto" and _small > 0 and _big == 0)
    _ahead = _mode not in ("jit", "python")


def _check_mode(mode: str) -> str:
    if mode not in MODES:
        raise UsageError(f"ALLPAIRS_KERNELS={mode!r} is not one of {', '.join(MODES)}; "
                         "leave it unset (auto) or give one of them")
    return mode


def kernel_mode() -> str:
    """How kernels run now: ``"compiled"`` or ``"python"``."""
    return "python" if _plain else "compiled"


@contextmanager
def use_kernels(mode: str) -> Iterator[None]:
    """Run every kernel ``"compiled"``, as ``"python"``, or ``"auto"`` by input size, inside the block
    (as ``ALLPAIRS_KERNELS`` does for a whole process)."""
    global _mode
    _check_mode(mode)
    with _lock:
        before, _mode = _mode, mode
        _decide()
    try:
        yield
    finally:
        with _lock:
            _mode = before
            _decide()


@contextmanager
def kernels_for(input_bytes: int | None) -> Iterator[None]:
    """Inside the block, kernels run as plain Python when the mode is ``auto`` and the input is small
    (``input_bytes`` below :data:`PLAIN_BELOW`; None means unknown, taken as big).

    Scopes nest and may be open in several threads at once: kernels run plain
    only while every open scope is small. An unknown ``ALLPAIRS_KERNELS``
    value is a :class:`UsageError` here.
    """
    global _small, _big
    _check_mode(_mode)
    small = input_bytes is not None and input_bytes < PLAIN_BELOW
    with _lock:
        if small:
            _small += 1
        else:
            _big += 1
        _decide()
    try:
        yield
    finally:
        with _lock:
            if small:
                _small -= 1
            else:
                _big -= 1
            _decide()


def prepare() -> None:
    """Import numba and set up the compiler (idempotent; the first compiled kernel call does it anyway)."""
    global _jit
    if _jit is not None:
        return
    with _lock:
        if _jit is not None:
            return
        _check_mode(_mode)
        try:
            import numba
            import numba.core.event
        except (MemoryError, OSError) as e:  # a memory limit (ulimit -v) too low to load numba and LLVM
            why = "out of memory" if isinstance(e, MemoryError) else (str(e).splitlines() or ["?"])[0]
            raise AllPairsError(f"cannot load the compiled kernels ({why}); if memory is limited (ulimit -v), "
                                "raise the limit, or set ALLPAIRS_KERNELS=python (slow on large inputs)") from None

        # numba's cache checks only the file of the kernel it compiled, not the kernels it inlined from
        # other modules: a cache folder per digest of every kernel source keeps a changed callee from
        # running stale inside an unchanged caller.
        numba.config.CACHE_DIR = cache_folder(numba.config.CACHE_DIR)
        numba.core.event.Listener.register(CompileClock)  # it has the listener's methods
        for clock in _clocks:
            numba.core.event.register("numba:compile", clock)
        _jit = numba.njit(cache=True, nogil=True, boundscheck=False)


def cache_folder(base: str | None) -> str:
    """numba's cache folder for kernels of these sources: ``base`` (``NUMBA_CACHE_DIR``) or
    ``$XDG_CACHE_HOME/allpairs/numba`` (else ``~/.cache/allpairs/numba``), then the kernel sources' digest.
    numba passes over a folder it cannot write and caches beside the sources instead."""
    if not base:
        xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
        base = os.path.join(xdg or os.path.join(os.path.expanduser("~"), ".cache"), "allpairs", "numba")
    return os.path.join(base, _aot.source_digest()[:16])


class _Depth(threading.local):
    plain = 0  # plain kernel calls under way in this thread (errstate is set by the outermost)
    wraps = False  # the errstate under way lets integers wrap (a wrapping kernel is running)


_depth = _Depth()


class Kernel:
    """A kernel: its plain Python function, its functions compiled ahead of time, and the numba
    dispatcher made from it on first use.

    Calling it runs one of them (see the module's docstring): compiled, the
    ahead-of-time function built for exactly its arguments' types if there is
    one, else the dispatcher. numba sees
    it as its dispatcher, so that a compiled kernel may call another through a
    module global.
    """

    def __init__(self, py_func: Callable, wraps: bool = False):
        self.py_func = py_func
        #: True when the kernel's uint64 arithmetic is meant to wrap modulo 2**64 (hashes).
        self.wraps = wraps
        self._dispatcher = None
        self._built = None  # its functions built ahead of time, by argument types (read on first call)
        functools.update_wrapper(self, py_func)

    @property
    def dispatcher(self):
        """The numba dispatcher (made, and numba imported, on first use)."""
        d = self._dispatcher
        if d is None:
            prepare()
            d = _jit(self.py_func)
            if self._dispatcher is None:  # another thread may have made one meanwhile: keep the first
                self._dispatcher = d
            d = self._dispatcher
        return d

    @property
    def _numba_type_(self):
        """numba's type for this object as a global of a kernel being compiled: its dispatcher's."""
        return self.dispatcher._numba_type_

    def __call__(self, *args):
        if _depth.plain:  # inside a kernel running as plain Python: all of it runs so
            if self.wraps and not _depth.wraps:
                return self._run_plain(args)
            return self.py_func(*args)
        if _ahead:
            built = self._built
            if built is None:
                built = self._built = _aot.functions(self.__module__, self.__qualname__)
            if built:
                fn = built.get(tuple(map(_aot.type_name, args)))
                if fn is not None:
                    return fn(*args)
        if not _plain:
            return self.dispatcher(*args)
        return self._run_plain(args)

    def _run_plain(self, args):
        """The plain function, with numpy's overflow checks as the kernel's arithmetic wants them."""
        before = _depth.plain, _depth.wraps
        _depth.plain, _depth.wraps = 1, self.wraps
        try:
            with np.errstate(over="ignore" if self.wraps else "raise"):
                return self.py_func(*args)
        except FloatingPointError as e:
            if before[0]:  # an inner kernel: the outermost one reports
                raise
            raise KernelOverflowError(f"kernel {self.__module__}.{self.__qualname__} overflowed on the "
                                      f"plain-Python path ({e}); this is a bug in allpairs, please report it "
                                      "with the input that caused it") from None
        finally:
            _depth.plain, _depth.wraps = before

    def __reduce__(self):
        # Pickled by name, as a function is (e.g. for a worker process).
        return _kernel_named, (self.__module__, self.__qualname__)

    def __repr__(self) -> str:
        return f"<kernel {self.__module__}.{self.__qualname__}>"


def _kernel_named(module: str, qualname: str) -> Kernel:
    return functools.reduce(getattr, qualname.split("."), importlib.import_module(module))


def kernel(py_func: Callable | None = None, *, wraps: bool = False):
    """The decorator of every kernel: compiled with ``cache=True, nogil=True, boundscheck=False``
    when it runs compiled, else run as written (see the module's docstring).

    ``@kernel(wraps=True)`` marks a kernel whose uint64 arithmetic wraps
    modulo 2**64 on purpose (hashes, mixing, SWAR): its plain run lets numpy
    scalars wrap as the compiled code does; any other kernel's plain run
    raises :class:`KernelOverflowError` on an integer overflow.
    """
    if py_func is None:
        return lambda f: Kernel(f, wraps)
    return Kernel(py_func, wraps)


#: Most threads a run may be given: beyond the cores of any machine this runs on,
#: more threads only cost memory (each has its own buffers) and start-up.
MAX_JOBS = 256


def available_cores() -> int:
    """Cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def resolve_jobs(jobs: int | None) -> int:
    """Threads for the kernels: ``None`` or 0 means every core this process may use, else ``jobs``
    itself, at most :data:`MAX_JOBS` (more is a :class:`UsageError`)."""
    if jobs is None or jobs == 0:
        return min(available_cores(), MAX_JOBS)
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 0:
        raise UsageError(f"jobs must be 0 (every core) or a positive whole number, got {jobs!r}")
    if jobs > MAX_JOBS:
        raise UsageError(f"jobs {jobs:,} is above the limit of {MAX_JOBS} threads (this machine has "
                         f"{available_cores()} cores); give 0 for one thread per core, or 1 to {MAX_JOBS}")
    return jobs


class CompileClock:
    """Counts the kernels compiled (not loaded from the cache) while installed, and their wall time.

    Only outermost compilations count: a kernel compiled because another one
    calls it is part of its caller's time. It listens to numba's
    ``numba:compile`` events (a numba event listener), from the moment numba is
    imported: a run that never imports numba compiles nothing.
    """

    def __init__(self) -> None:
        self.kernels = 0
        self.seconds = 0.0
        self._depth = 0
        self._start = 0.0

    def notify(self, event) -> None:
        if event.is_start:
            self.on_start(event)
        elif event.is_end:
            self.on_end(event)

    def on_start(self, event) -> None:
        if self._depth == 0:
            self._start = time.perf_counter()
        self._depth += 1

    def on_end(self, event) -> None:
        self._depth -= 1
        if self._depth == 0:
            self.kernels += 1
            self.seconds += time.perf_counter() - self._start


@contextmanager
def _watching(clock: CompileClock) -> Iterator[None]:
    with _lock:
        _clocks.append(clock)
        if _jit is not None:
            import numba.core.event

            numba.core.event.register("numba:compile", clock)
        elif "numba" in sys.modules:  # numba was imported by someone else: listen from now on
            prepare()
    try:
        yield
    finally:
        with _lock:
            _clocks.remove(clock)
            if _jit is not None:
                import numba.core.event

                numba.core.event.unregister("numba:compile", clock)


def compile_clock() -> tuple[CompileClock, object]:
    """A :class:`CompileClock` and the context manager that installs it (``with ctx: ...``)."""
    clock = CompileClock()
    return clock, _watching(clock)
