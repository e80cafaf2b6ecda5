"""The one place where numba options and thread counts are set for every compiled kernel.

``NUMBA_DISABLE_JIT=1`` turns every kernel back into plain Python (slow, but
coverage and debuggers see it).
"""
from __future__ import annotations

import os
import time

import numba
import numba.core.event

from .errors import UsageError

#: Every kernel is compiled once and cached on disk (so the CLI does not
#: recompile on each run) and releases the GIL (so that threads run kernels
#: side by side).
kernel = numba.njit(cache=True, nogil=True, boundscheck=False)


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


class CompileClock(numba.core.event.Listener):
    """Counts the kernels compiled (not loaded from the cache) while installed, and their wall time.

    Only outermost compilations count: a kernel compiled because another one
    calls it is part of its caller's time.
    """

    def __init__(self) -> None:
        self.kernels = 0
        self.seconds = 0.0
        self._depth = 0
        self._start = 0.0

    def on_start(self, event) -> None:
        if self._depth == 0:
            self._start = time.perf_counter()
        self._depth += 1

    def on_end(self, event) -> None:
        self._depth -= 1
        if self._depth == 0:
            self.kernels += 1
            self.seconds += time.perf_counter() - self._start


def compile_clock() -> tuple[CompileClock, object]:
    """A :class:`CompileClock` and the context manager that installs it (``with ctx: ...``)."""
    clock = CompileClock()
    return clock, numba.core.event.install_listener("numba:compile", clock)
