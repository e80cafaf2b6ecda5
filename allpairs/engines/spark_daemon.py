"""Spark's Python worker daemon with the join's modules imported once, before it forks its workers.

PySpark starts one daemon per executor (``python -m pyspark.daemon``), which
forks a worker per task slot; each worker then imports what its tasks need:
numpy, pyarrow, pyspark's worker and allpairs' Spark stages with their
compiled kernels (1.5-3 s an interpreter on a loaded 2-core machine, paid by
the first job of a session, once per worker). Sessions that allpairs starts
name this module instead (``spark.python.daemon.module``, see
:func:`allpairs.engines.spark.session.get_session`): it imports all of that
in the daemon, then runs pyspark's own daemon loop, so every forked worker
inherits the modules (copy-on-write) and imports nothing.

It sits beside ``engines/spark/``, not in it: ``python -m`` imports a
module's packages first, and that package's ``__init__`` imports numpy and
pyarrow, which must come after the settings below.

Forking is safe only if no thread runs at the fork (the child keeps only the
forking thread; a lock another one held stays held). Two of these imports
start one: numpy's OpenBLAS pool and pyarrow's jemalloc purging thread. So
before importing anything, unless already set, OpenBLAS (and OpenMP, MKL)
get one thread and jemalloc no background thread; the join's kernels use
neither. :data:`THREADS` records the daemon's threads after the imports
(``tests/test_spark.py`` checks it is 1). Should an import fail, the daemon
runs all the same and each worker imports (and fails) as before.

Spark puts its own copy of pyspark first on the workers' path
(``SPARK_HOME/python/lib/pyspark.zip``); Python compiles a module from a zip
of sources on every import, as it writes no cached bytecode there: 0.5-0.7 s
of the daemon's 1.0-1.2 s of imports, on the path of a session's first job.
Where that zip lies inside the installed pyspark package (a pip install:
the same files), the daemon drops it from ``sys.path`` and imports the
installed package, compiled once (:func:`installed_pyspark`). pandas is
imported too: pyarrow imports it at a worker's first ``pa.array`` of a list,
0.15-0.3 s a worker.

The workers keep the memory their tasks free (:func:`keep_freed_memory`):
glibc maps a large allocation apart (from 128 KiB, rising to 32 MiB as such
ones are freed: a task's arrays, a token group's ranks, tokens and index at
1 M sets, are 8-80 MiB each) and unmaps it when freed, and the next one
faults fresh pages in, zeroed; on a virtual machine whose
host takes free memory back (free page reporting) a fault costs 10-25
microseconds instead of ~1. A token group's task of 1 M Zipf sets faulted
~80,000 pages, 0.3-1.8 s of system time of its ~3 CPU s.
"""
from __future__ import annotations

import os

#: Environment making the imports below start no thread (each kept if the environment sets it).
NO_THREADS = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
              "JE_ARROW_MALLOC_CONF": "background_thread:false"}
#: The modules a worker of the join's tasks imports (each pulls in what it needs).
PRELOAD = ("numpy", "pyarrow", "pandas", "pyspark.worker", "allpairs.engines.spark", "allpairs.engines.spark.run",
           "allpairs.engines.spark.run_against", "allpairs.engines.spark.run_dedup",
           "allpairs.engines.spark.against", "allpairs.engines.spark.components", "allpairs.engines.spark.lsh")

#: The daemon's process id: a worker sees its parent's (the modules came from the daemon, not re-imported).
PRELOADED_IN = os.getpid()
#: Threads of the daemon after the imports (1: forking is safe); None where /proc is not there.
THREADS: int | None = None
#: Why the imports failed, if they did.
FAILED: str | None = None
#: The modules imported in the daemon (every worker has them without importing them).
LOADED: frozenset = frozenset()


#: glibc's malloc settings a user may give in the environment (then :func:`keep_freed_memory` sets none).
MALLOC_VARIABLES = ("MALLOC_MMAP_MAX_", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_",
                    "GLIBC_TUNABLES")
#: Whether the daemon's (and so its workers') malloc keeps freed memory.
KEEPS_FREED: bool = False


def keep_freed_memory() -> bool:
    """Make glibc's malloc serve every allocation from its heap, and give the heap's free top back only past
    2 GiB (``mallopt``: ``M_MMAP_MAX`` 0, ``M_TRIM_THRESHOLD`` 2 GiB), so that a worker reuses the pages its
    earlier tasks (and phases of a task) touched: a worker then holds about the most its tasks held at
    once (up to 2 GiB of it free), as long as it lives (Spark ends a worker idle for a minute). Nothing
    where the environment sets malloc (:data:`MALLOC_VARIABLES`) or the C library is not glibc. Whether it
    was set."""
    if any(name in os.environ for name in MALLOC_VARIABLES):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
        libc.gnu_get_libc_version  # glibc's M_* numbers below
    except (OSError, AttributeError):
        return False
    m_trim_threshold, m_mmap_max = -1, -4
    return bool(mallopt(m_mmap_max, 0)) and bool(mallopt(m_trim_threshold, 2**31 - 1))


def _threads() -> int | None:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return None


def installed_pyspark() -> str | None:
    """Drop Spark's ``pyspark.zip`` from ``sys.path`` where it is the one inside the pyspark package that the
    rest of the path holds (the same files); the zip dropped, or None. Call before pyspark is imported."""
    import sys
    from importlib.machinery import PathFinder

    zips = [entry for entry in sys.path if os.path.basename(entry) == "pyspark.zip"]
    if not zips:
        return None
    spec = PathFinder.find_spec("pyspark", [entry for entry in sys.path if entry not in zips])
    if spec is None or not spec.submodule_search_locations:
        return None
    own = os.path.realpath(os.path.join(list(spec.submodule_search_locations)[0], "python", "lib", "pyspark.zip"))
    dropped = next((entry for entry in zips if os.path.realpath(entry) == own), None)
    if dropped is not None:
        sys.path.remove(dropped)
    return dropped


def preload() -> None:
    """Import :data:`PRELOAD` and load the compiled kernels, starting no thread (see the module's docstring)."""
    global THREADS, FAILED, LOADED
    import sys
    import importlib

    for key, value in NO_THREADS.items():
        os.environ.setdefault(key, value)
    try:
        for name in PRELOAD:
            importlib.import_module(name)
        from .._kernels import aot

        aot.functions("", "")  # loads the ahead-of-time kernels' table (the compiled modules) once
    except Exception as e:  # the workers import again, and report it as they always did
        FAILED = f"{type(e).__name__}: {e}"
    THREADS = _threads()
    LOADED = frozenset(sys.modules)
    import gc

    # What was imported stays put: the workers' collections do not touch (and so copy) those pages.
    gc.collect()
    gc.freeze()


if __name__ == "__main__":
    import sys

    # Run as ``python -m``, this module is __main__: known by its name too, so that a worker finds it.
    sys.modules.setdefault("allpairs.engines.spark_daemon", sys.modules[__name__])
    installed_pyspark()
    KEEPS_FREED = keep_freed_memory()
    preload()
    from pyspark import daemon

    daemon.manager()
