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

Those imports still take 0.5-0.9 s, on the path of the first job: the JVM
starts the daemon only when that job's first Python task asks for a worker.
A session allpairs starts on a local master therefore also starts a *spare*
once its JVM is up (``python -m`` this module ``--spare SOCKET JVM_PID``, by
:func:`allpairs.engines.spark.session.get_session`), which imports all of the
above while the driver plans, then waits at a Unix socket in a private
folder. A daemon the JVM starts finds the socket in its
environment (:data:`SPARE`, from ``spark.executorEnv``) and hands its place
over (:func:`hand_over`): it passes its standard streams (the JVM's pipes),
environment, arguments and folder; the spare forks a daemon that takes them
and runs pyspark's daemon loop, already loaded; the process the JVM started
waits for it to end, passing the JVM's SIGTERM on. Where no spare answers,
the daemon imports the modules itself, as before. The spare ends when the
driver or the JVM does.
"""
from __future__ import annotations

import os

#: The environment variable naming the Unix socket of a spare daemon (:func:`hand_over`).
SPARE = "ALLPAIRS_SPARE_DAEMON"
#: Seconds a daemon waits for a spare that accepted it to take over (it may still be importing).
HAND_OVER_S = 120

#: Environment making the imports below start no thread (each kept if the environment sets it).
NO_THREADS = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
              "JE_ARROW_MALLOC_CONF": "background_thread:false"}
#: The modules a worker of the join's tasks imports (each pulls in what it needs).
PRELOAD = ("numpy", "pyarrow", "pandas", "pyspark.worker", "allpairs.engines.spark", "allpairs.engines.spark.run",
           "allpairs.engines.spark.run_against", "allpairs.engines.spark.run_dedup",
           "allpairs.engines.spark.against", "allpairs.engines.spark.components", "allpairs.engines.spark.lsh")

#: The daemon's process id: a worker sees its parent's (the modules came from the daemon, or with the daemon's
#: fork from the spare, not re-imported).
PRELOADED_IN = os.getpid()
#: The spare's process id where this daemon was forked by one (:func:`spare`), else None.
FROM_SPARE: int | None = None
#: Threads of the daemon after the imports (1: forking is safe); None where /proc is not there.
THREADS: int | None = None
#: Why the imports failed, if they did.
FAILED: str | None = None
#: The modules imported in the daemon (every worker has them without importing them).
LOADED: frozenset = frozenset()


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


def _read_exactly(conn, n: int) -> bytes:
    data = b""
    while len(data) < n:
        more = conn.recv(n - len(data))
        if not more:
            raise ConnectionError("the other end closed")
        data += more
    return data


def hand_over() -> bool:
    """In the daemon the JVM started: hand its place to the spare named by :data:`SPARE`, if one answers, and
    wait until that daemon (and its workers) end, passing SIGTERM on; True then. False where no spare takes
    over (none named, gone, used by another daemon): this process is the daemon, as before."""
    import json
    import signal
    import socket
    import struct
    import sys

    path = os.environ.get(SPARE)
    if not path:
        return False
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.settimeout(HAND_OVER_S)
        conn.connect(path)
        what = json.dumps({"env": dict(os.environ), "argv": sys.argv, "cwd": os.getcwd(),
                           "path": sys.path}).encode()
        socket.send_fds(conn, [struct.pack("!I", len(what)) + what], [0, 1, 2])
        pid = struct.unpack("!I", _read_exactly(conn, 4))[0]
    except (OSError, ValueError):
        conn.close()
        return False
    def pass_on(signum, frame):
        try:
            os.kill(pid, signum)
        finally:
            os._exit(0)

    # The JVM stops its daemon with SIGTERM (its streams closing too): to the daemon that runs now.
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(signum, pass_on)
    conn.settimeout(None)
    for fd in (0, 1, 2):  # the spare holds the JVM's pipes now: their end is its end
        os.close(fd)
    try:
        while conn.recv(4096):
            pass
    except OSError:
        pass
    return True


def spare(path: str, jvm: int) -> None:
    """Run as the spare (``--spare path jvm``): listen at the Unix socket ``path``, import the workers' modules,
    then fork a daemon in the place of each daemon the JVM starts that connects (:func:`hand_over`), already
    loaded. Ends when stdin closes (the driver ended) or the process ``jvm`` (the JVM's pid) has ended. No
    thread is started here: the daemons and their workers are forked."""
    import json
    import select
    import socket
    import struct

    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(8)
    installed_pyspark()
    preload()
    try:
        while True:
            ready, _, _ = select.select([listener, 0], [], [], 1.0)
            try:
                while os.waitpid(-1, os.WNOHANG)[0]:  # daemons that ended
                    pass
            except ChildProcessError:
                pass
            if (0 in ready and not os.read(0, 64)) or not alive(jvm):
                return  # the driver or the JVM ended
            if listener not in ready:
                continue
            conn, _ = listener.accept()
            try:
                data, fds, _, _ = socket.recv_fds(conn, 1 << 16, 3)
                if len(fds) != 3 or len(data) < 4:
                    raise ValueError("no streams passed")
                size = struct.unpack("!I", data[:4])[0]
                got = json.loads(data[4:] + _read_exactly(conn, size - len(data[4:])))
            except (OSError, ValueError):
                conn.close()
                continue
            if os.fork() == 0:
                try:
                    listener.close()
                    _take_over(got, fds)
                    conn.sendall(struct.pack("!I", os.getpid()))
                    # conn stays open, here and in the workers: the process the JVM started waits for its end.
                    from pyspark import daemon

                    daemon.manager()
                finally:
                    os._exit(0)
            conn.close()
            for fd in fds:
                os.close(fd)
    finally:
        listener.close()
        _remove(path)


def _take_over(got: dict, fds) -> None:
    """In a daemon forked by the spare: take the streams, folder, environment, arguments and module path of the
    daemon that connected."""
    import signal
    import sys

    global PRELOADED_IN, FROM_SPARE
    PRELOADED_IN, FROM_SPARE = os.getpid(), os.getppid()  # the modules came with the fork: this daemon holds them
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    os.chdir(got["cwd"])
    os.environ.clear()
    os.environ.update(got["env"])
    os.environ.pop(SPARE, None)
    for key, value in NO_THREADS.items():
        os.environ.setdefault(key, value)
    sys.argv[:] = got["argv"]
    sys.path[:] = got["path"]
    installed_pyspark()


def alive(pid: int) -> bool:
    """Whether the process ``pid`` runs (one of another user's counts as running)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _remove(path: str) -> None:
    for remove, p in ((os.unlink, path), (os.rmdir, os.path.dirname(path))):
        try:
            remove(p)
        except OSError:
            pass


if __name__ == "__main__":
    import sys

    # Run as ``python -m``, this module is __main__: known by its name too, so that a worker finds it.
    sys.modules.setdefault("allpairs.engines.spark_daemon", sys.modules[__name__])
    if sys.argv[1:2] == ["--spare"]:
        spare(sys.argv[2], int(sys.argv[3]))
        sys.exit(0)
    if hand_over():
        sys.exit(0)
    installed_pyspark()
    preload()
    from pyspark import daemon

    daemon.manager()
