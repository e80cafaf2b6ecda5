"""Getting a SparkSession, and saying clearly why there is none.

pyspark is an optional dependency (``pip install '.[spark]'``) and
needs a Java runtime; both are checked before Spark is started, so that a
missing one is one line of error, not a Java gateway traceback.
"""
from __future__ import annotations

import atexit
import importlib
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path

from ..._children import ending_by_itself
from ...errors import AllPairsError, MissingExtraError, install_command
from ...output.files import removed_if_killed
from . import class_archive, launch


class SparkSetupError(AllPairsError):
    """pyspark, pyarrow or a Java runtime is missing, or Spark did not start (exit status 1)."""


class MissingSparkExtraError(SparkSetupError, MissingExtraError):
    """pyspark or pyarrow is missing: a :class:`MissingExtraError` like every optional package's, which
    names both when both are missing."""


JAVA_HINT = "install one (e.g. apt-get install -y openjdk-17-jre-headless) or set JAVA_HOME"


def require_pyspark():
    """Import pyspark and pyarrow, or raise :class:`MissingSparkExtraError` naming the extra to install."""
    missing = []
    for name in ("pyspark", "pyarrow"):
        try:
            importlib.import_module(name)
        except ImportError:
            missing.append(name)
    if missing:
        are = f"{missing[0]} is missing" if len(missing) == 1 else f"{' and '.join(missing)} are missing"
        raise MissingSparkExtraError(f"the Spark engine needs pyspark and pyarrow ({are}): "
                              f"{install_command('spark')}") from None
    return importlib.import_module("pyspark")


def quoted(name: str) -> str:
    """A column name as Spark's parser reads it literally (``F.col``, ``df[...]``): in backticks, each backtick
    doubled, so that a user's column ``doc.id`` is not read as the field ``id`` of a struct ``doc``."""
    return "`" + name.replace("`", "``") + "`"


def find_java() -> str | None:
    """The java executable Spark would start: ``$JAVA_HOME/bin/java``, else ``java`` on PATH."""
    home = os.environ.get("JAVA_HOME")
    if home:
        java = os.path.join(home, "bin", "java")
        return java if os.access(java, os.X_OK) else None
    return shutil.which("java")


def is_local(master: str) -> bool:
    return master == "local" or master.startswith("local[")


def local_cores(master: str) -> int:
    """The task slots of a local master: N of ``local[N]`` or ``local[N, F]``, the machine's cores for ``*``."""
    m = re.match(r"^local\[\s*(\d+|\*)", master)
    if m is None:
        return 1
    return os.cpu_count() or 1 if m.group(1) == "*" else max(1, int(m.group(1)))


#: What a Python worker imports to run the join's tasks.
WORKER_IMPORTS = "import numpy, pyarrow, allpairs.engines.spark.sets"
#: The Python daemon of the sessions allpairs starts: it imports :data:`WORKER_IMPORTS` before forking workers.
DAEMON_MODULE = "allpairs.engines.spark_daemon"
#: Interpreters found to import it (checked once per process).
_workers_ok: set[str] = set()


def _on_this_machine(master: str) -> bool:
    """Whether the workers of ``master`` run on this machine (local, or a standalone master on loopback)."""
    return is_local(master) or re.match(r"^spark://(127\.0\.0\.1|localhost)(:|$)", master) is not None


def check_workers(spark) -> None:
    """Check that Spark's Python workers can import pyarrow and allpairs, before any job; once per interpreter.

    The workers run ``spark.pyspark.python`` (or ``PYSPARK_PYTHON``), by
    default ``python3`` on the PATH, not this interpreter: a session a user
    started from a virtual environment's python would otherwise fail inside
    the first task with a Java stack trace. Checked on this machine where the
    workers run here (a local master, or a standalone one on 127.0.0.1); a
    cluster's machines are not reachable before a job.

    Raises
    ------
    SparkSetupError
        The interpreter is missing or cannot import them; the message says what to set.
    """
    sc = spark.sparkContext
    exe = sc.pythonExec or "python3"
    if exe in _workers_ok or not _on_this_machine(sc.master):
        return
    if exe == sys.executable or shutil.which(exe) == sys.executable:
        # This very interpreter, which imports them already: no second one started to see it (1-4 s).
        _workers_ok.add(exe)
        return
    fix = (f"set PYSPARK_PYTHON (or spark.pyspark.python) to an interpreter that has them, such as "
           f"{sys.executable}, before the SparkSession starts")
    path = shutil.which(exe)
    if path is None:
        raise SparkSetupError(f"Spark's Python workers run {exe}, which is not found: {fix}")
    try:
        done = subprocess.run([path, "-c", WORKER_IMPORTS], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise SparkSetupError(f"Spark's Python workers run {exe}, which did not start ({e}): {fix}") from None
    if done.returncode != 0:
        lines = [line for line in done.stderr.strip().splitlines() if line.strip()]
        why = lines[-1].strip() if lines else f"exit status {done.returncode}"
        raise SparkSetupError(f"Spark's Python workers run {exe}, which cannot import pyarrow and allpairs "
                              f"({why}): {fix}")
    _workers_ok.add(exe)


@contextmanager
def _stderr_to_null():
    """fd 2 on /dev/null for a while (what starts meanwhile inherits it), then ours again."""
    sys.stderr.flush()
    saved = os.dup(2)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 2)
    os.close(null)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


#: A line the JVM prints at its start, not through its log: Spark 4 loads an incubating JDK module for its
#: vector code, and the JVM says so on stderr. Nothing a user can act on: left out of what :func:`_forward` copies.
JVM_NOTICE = b"WARNING: Using incubator modules: jdk.incubator.vector\n"


def _shown(data: bytes) -> bytes:
    """``data`` from the JVM's pipe without :data:`JVM_NOTICE` (the JVM writes it alone, first)."""
    return data.replace(JVM_NOTICE, b"", 1) if data.startswith(JVM_NOTICE) else data


def _copy(fd: int, first: bool = False) -> None:
    """Copy what the JVM writes on the pipe ``fd`` to this process's stderr until the pipe closes (or, not
    blocking, has nothing more for now: EAGAIN), the ``first`` read through :func:`_shown`."""
    try:
        while data := os.read(fd, 1 << 16):
            os.write(2, _shown(data) if first else data)
            first = False
    except OSError:  # nothing more for now, or stderr gone
        pass


def _forward(fd: int) -> None:
    """The thread that copies the JVM's pipe ``fd`` to stderr while it is open."""
    _copy(fd, first=True)


def _drain(fd: int) -> None:
    """At this process's exit: the JVM's lines already in the pipe ``fd`` to stderr, without waiting for more."""
    try:
        os.set_blocking(fd, False)
    except OSError:
        return
    _copy(fd)


#: Seconds between looks for the file in which the starting JVM says where it listens (pyspark looks every 0.1 s).
CONN_INFO_POLL_S = 0.01
#: Seconds a signal's end waits for the JVM being spawned (Spark's launcher may run first) to stop it.
STOP_WAIT_S = 10


class _Start:
    """The start of one JVM by pyspark, as a signal's end sees it: pyspark's folder of the JVM's port and
    secret, and the JVM spawned to write there."""

    def __init__(self):
        self.folder: str | None = None
        self.proc = None
        self.spawned = threading.Event()
        self._gate = threading.Lock()
        self._spawning = self._stopping = False

    def stop(self) -> None:
        """For the signal watcher: stop the JVM being started. Folder still there: pyspark has not read it, the
        JVM is starting. Ended, it writes no secret (nor, finding the folder gone, lives on with its gateway
        and no driver); once pyspark has read the folder, the JVM ends by itself when this process does,
        removing its scratch. Not spawned yet: it never will be (:meth:`may_spawn`)."""
        with self._gate:
            self._stopping = True
            spawning = self._spawning
        if spawning and self.folder is not None and os.path.isdir(self.folder):
            self.spawned.wait(STOP_WAIT_S)  # its process may be running before the spawn returns it
            if self.proc is not None:
                self.proc.terminate()

    def may_spawn(self) -> None:
        """Before the spawn: once a signal's end has begun, wait for it (the process is ending) instead."""
        with self._gate:
            self._spawning = not self._stopping
        if not self._spawning:
            threading.Event().wait()


class _GatewayTempfile:
    """``tempfile`` as pyspark.java_gateway sees it while a JVM starts: its ``mkdtemp`` (the folder of the JVM's
    port and secret) makes the folder and registers it with the signal watcher in one step, under the
    watcher's lock. pyspark registers nothing: a signal between the folder's making and the JVM's spawn
    left it behind, empty."""

    def __init__(self, scratch: ExitStack, starts: dict):
        self._scratch, self._starts = scratch, starts

    def mkdtemp(self, *args, **kwargs):
        import tempfile

        start = _Start()

        def make():
            start.folder = tempfile.mkdtemp(*args, **kwargs)
            return start.folder

        folder = self._scratch.enter_context(removed_if_killed(make, start.stop))
        self._starts[folder] = start
        return folder

    def __getattr__(self, name):
        import tempfile

        return getattr(tempfile, name)


@contextmanager
def _jvm_streams(quiet: bool):
    """The JVM that pyspark spawns (pyspark.java_gateway's Popen) gets stdout and stderr of its own: /dev/null
    with ``quiet``, else a pipe that a thread of this process copies to its stderr. The JVM goes on for a
    few tenths of a second after this process ends (it stops its context, removes its scratch folders and
    waits 0.3 s for its threads in native code, JDK's VM_Exit); holding the caller's stdout and stderr, it
    kept a caller that reads them (``$(allpairs ...)``, a pipe, ``subprocess.run``) waiting all that
    time. Nor can its log reach stdout, which carries only data. The spawn returns once the JVM has
    written where it listens (looked for every :data:`CONN_INFO_POLL_S`), so that pyspark does not
    sleep a tenth of a second past it. Where that Popen is not found: with ``quiet``, fd 2 on /dev/null
    around the whole start, as before."""
    import pyspark.java_gateway as gateway

    spawn = getattr(gateway, "Popen", None)
    if spawn is None:
        if quiet:
            with _stderr_to_null():
                yield
        else:
            yield
        return

    scratch, starts = ExitStack(), {}

    def popen(*args, **kwargs):
        info = (kwargs.get("env") or {}).get("_PYSPARK_DRIVER_CONN_INFO_PATH")
        # pyspark's folder of the JVM's port and secret: removed by pyspark, or by a signal's end; registered
        # as it was made (_GatewayTempfile), else here.
        start = starts.get(os.path.dirname(info)) if info else None
        if info and start is None:
            start = _Start()
            start.folder = os.path.dirname(info)
            scratch.enter_context(removed_if_killed(start.folder, start.stop))
        start = start or _Start()
        start.may_spawn()
        if quiet:
            kwargs.setdefault("stdout", subprocess.DEVNULL)
            kwargs.setdefault("stderr", subprocess.DEVNULL)
            try:
                start.proc = proc = launch.spawn(spawn, *args, **kwargs)
            finally:
                start.spawned.set()
        else:
            r, w = os.pipe()
            kwargs.setdefault("stdout", w)
            kwargs.setdefault("stderr", w)
            try:
                start.proc = proc = launch.spawn(spawn, *args, **kwargs)
            except BaseException:
                os.close(r)
                raise
            finally:
                os.close(w)
                start.spawned.set()
            threading.Thread(target=_forward, args=(r,), name="allpairs-jvm-log", daemon=True).start()
            atexit.register(_drain, r)
        while info and proc.poll() is None and not os.path.isfile(info):
            time.sleep(CONN_INFO_POLL_S)
        return proc

    gateway.Popen = popen
    made = getattr(gateway, "tempfile", None)
    if made is not None:
        gateway.tempfile = _GatewayTempfile(scratch, starts)
    try:
        yield
    finally:
        gateway.Popen = spawn
        if made is not None:
            gateway.tempfile = made
        scratch.close()  # pyspark has removed its folder (its own finally) by now


#: JVM options for a short run on a local master, whose one JVM is driver and executor
#: (:func:`allpairs.engines.spark.run.session_conf` gives them for a small input): the quick compiler only
#: (C1), whose code is slower but compiled in a fraction of C2's time, and the serial collector (no
#: collector threads beside the tasks). See docs/spark.md.
LOCAL_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


#: The collector of the JVM allpairs starts for a local master where nothing names JVM options: the parallel
#: one, whose young collections cost less CPU than G1's bookkeeping (remembered sets, concurrent refinement)
#: for the join's short-lived Arrow buffers. A session's first 1 M Zipf join on local[2]: 17.1 JVM CPU s against
#: 18.7 (medians of 6 interleaved rounds each); 10 M sets: 146.8 against 152.8, peak memory 12.3 against 13.7 GiB,
#: the same wall time (docs/spark.md).
LOCAL_GC_OPTION = "-XX:+UseParallelGC"
#: Where else JVM options reach the driver's JVM (the JVM itself, Spark's launcher): a collector named there
#: and :data:`LOCAL_GC_OPTION` would be two, and the JVM refuses to start with two.
JVM_OPTION_VARIABLES = ("JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS", "SPARK_SUBMIT_OPTS",
                        "PYSPARK_SUBMIT_ARGS")


def jvm_options_given(conf: dict) -> bool:
    """Whether JVM options for the driver are given anywhere but in what allpairs adds: in ``conf`` or
    ``spark-defaults.conf`` (``spark.driver.extraJavaOptions``, ``spark.driver.defaultJavaOptions``), or in one
    of :data:`JVM_OPTION_VARIABLES`. A collector may be named there: allpairs then names none."""
    if any(k in conf for k in ("spark.driver.extraJavaOptions", class_archive.SETTING)):
        return True
    if any(re.search(r"-XX:|JavaOptions|java-options", os.environ.get(name, "")) for name in JVM_OPTION_VARIABLES):
        return True
    try:
        defaults = class_archive.conf_dir() / "spark-defaults.conf"
        return defaults.is_file() and "JavaOptions" in defaults.read_text(errors="replace")
    except (OSError, ValueError, ImportError):
        return True


def _gc_option(master: str, conf: dict) -> str | None:
    """:data:`LOCAL_GC_OPTION` for the JVM this process is about to start on a local master (driver and
    executor in one JVM), or None where a JVM runs already, the master is not local, or JVM options are
    given (:func:`jvm_options_given`; the command line's small inputs get :data:`LOCAL_JVM_OPTIONS` so)."""
    if not is_local(master) or _jvm_running() or jvm_options_given(conf):
        return None
    return LOCAL_GC_OPTION


def _note(quiet: bool):
    """One line on stderr (nothing with ``quiet``)."""
    return (lambda line: None) if quiet else (lambda line: print(f"allpairs: note: {line}", file=sys.stderr,
                                                                  flush=True))


#: The log configuration of a JVM allpairs starts: Spark's warnings on stderr, without the lines of its
#: fallback profile or Hadoop's missing native library (see the file).
LOG_CONFIG = Path(__file__).with_name("log4j2.properties")


def _log_option(conf: dict) -> str | None:
    """``-Dlog4j2.configurationFile=`` :data:`LOG_CONFIG` for the JVM this process is about to start, or None
    where a JVM runs already or the user configures its log or its options (a log4j2 file in the conf folder,
    a log4j option in ``spark.driver.extraJavaOptions``, ``spark.driver.defaultJavaOptions`` in ``conf`` or
    ``spark-defaults.conf``)."""
    from pyspark import SparkContext

    if SparkContext._gateway is not None or os.environ.get("PYSPARK_GATEWAY_PORT") or class_archive.SETTING in conf \
            or "log4j" in str(conf.get("spark.driver.extraJavaOptions", "")) or re.search(r"\s|['\"]", str(LOG_CONFIG)):
        return None
    try:
        where = class_archive.conf_dir()
        if any((where / name).exists() for name in ("log4j2.properties", "log4j2.xml", "log4j2.yaml", "log4j2.json")):
            return None
        defaults = where / "spark-defaults.conf"
        if defaults.is_file() and class_archive.SETTING in defaults.read_text(errors="replace"):
            return None
    except (OSError, ValueError, ImportError):
        return None
    return f"-Dlog4j2.configurationFile={LOG_CONFIG}"


def _class_archive(conf: dict, quiet: bool):
    """The class archive's plan for the JVM this process is about to start (:mod:`.class_archive`), or None
    where a JVM runs already or none is planned."""
    from pyspark import SparkContext

    if SparkContext._gateway is not None:  # started before, by pyspark: no new JVM, no options taken
        return None
    return class_archive.plan(find_java(), conf, _note(quiet))


#: Modules pyspark imports once the JVM it starts answers: pandas (0.2-0.5 s), through
#: ``pyspark.testing.utils`` as it converts the first arguments it sends to the JVM, and for
#: ``mapInArrow`` (its ``pandas_udf`` checks pandas' version). Imported in a thread of their own while pyspark
#: waits for the JVM to start (1-2 s, this process idle): the waits overlap, not add up.
IMPORTED_WHILE_THE_JVM_STARTS = ("pandas",)


def _jvm_running() -> bool:
    """Whether this process has a JVM of pyspark's already (a session started before, or a gateway given)."""
    from pyspark import SparkContext

    return SparkContext._gateway is not None or bool(os.environ.get("PYSPARK_GATEWAY_PORT"))


def _import_while_the_jvm_starts() -> threading.Thread:
    """Import :data:`IMPORTED_WHILE_THE_JVM_STARTS` in a daemon thread; one that fails is left to pyspark
    (which imports it again and says why)."""
    def imports():
        for name in IMPORTED_WHILE_THE_JVM_STARTS:
            try:
                importlib.import_module(name)
            except Exception:  # noqa: BLE001
                pass

    thread = threading.Thread(target=imports, name="allpairs-imports", daemon=True)
    thread.start()
    return thread


def get_session(master: str | None = None, *, app_name: str = "allpairs", conf: dict | None = None,
                quiet: bool = False):
    """The active SparkSession, or a new one on ``master`` (default ``local[*]``).

    For a local master this binds Spark to 127.0.0.1 (``SPARK_LOCAL_IP``, unless
    set), turns the web UI off and runs the Python workers with this
    interpreter, so that they import the same allpairs, with four shuffle partitions
    per core instead of Spark's 200. Where the workers run on this machine (a local
    master, a standalone one on 127.0.0.1) they are forked from
    :data:`DAEMON_MODULE`, which imports what they need once. The JVM it starts maps
    the class archive of an earlier run, or writes one as this process ends
    (:mod:`allpairs.engines.spark.class_archive`), on a local master with the parallel collector unless
    JVM options are given (:data:`LOCAL_GC_OPTION`). ``conf`` may say
    otherwise for each. ``quiet``: the JVM
    started here writes its log to /dev/null instead of this process's stderr.

    Raises
    ------
    SparkSetupError
        pyspark/pyarrow are not installed, no Java runtime is found, or the
        JVM did not start.
    """
    require_pyspark()
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active  # a process has one SparkContext: an active session's master stays
    master = master or "local[*]"
    if find_java() is None:
        where = f"JAVA_HOME={os.environ['JAVA_HOME']}" if os.environ.get("JAVA_HOME") else "PATH"
        raise SparkSetupError(f"the Spark engine needs a Java runtime (17 or 21) and none was found on {where}: "
                              f"{JAVA_HINT}")
    builder = SparkSession.builder.master(master).appName(app_name)
    if is_local(master):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        builder = builder.config("spark.ui.enabled", "false").config("spark.driver.host", "127.0.0.1")
        # Spark's 200 shuffle partitions are 200 Python tasks per shuffled stage (about 800 tasks for
        # the 10-document corpus); on one machine four per core keep the tasks even and few.
        builder = builder.config("spark.sql.shuffle.partitions", str(4 * local_cores(master)))
        # Adaptive execution coalesces a shuffle's partitions to about one per core: on two cores three
        # unequal ones (the Go tree's and the 1 M sets' planning stages), two on one core while the other
        # idles. Two per core at the least (partitions under 1 MiB are still merged: one for the tiny corpus).
        builder = builder.config("spark.sql.adaptive.coalescePartitions.minPartitionNum",
                                 str(2 * local_cores(master)))
    if _on_this_machine(master):
        # Workers forked from a daemon that imported numpy, pyarrow and the join's modules once
        # (allpairs.engines.spark_daemon): the first job of a session does not wait for each worker's imports.
        # Only where the workers run this allpairs; a cluster's executors may hold another.
        builder = builder.config("spark.python.daemon.module", DAEMON_MODULE)
    # stderr is for allpairs' own summary: no console progress bar.
    builder = builder.config("spark.ui.showConsoleProgress", "false")
    for key, value in (conf or {}).items():
        builder = builder.config(key, str(value))
    archive = _class_archive(conf or {}, quiet)
    options = " ".join(o for o in (archive.options if archive is not None else None, _log_option(conf or {}),
                                   _gc_option(master, conf or {})) if o)
    if options:
        builder = builder.config(class_archive.SETTING, options)
    if not _jvm_running():
        _import_while_the_jvm_starts()
    # pyspark's SparkContext takes SIGINT for itself (cancel the jobs, raise KeyboardInterrupt): in the
    # allpairs program, whose watcher thread ends a run on any signal in one line, it is given back.
    sigint = signal.getsignal(signal.SIGINT) if threading.current_thread() is threading.main_thread() else None
    try:
        # Not killed when the run ends: it ends by itself then (its stdin closes) and removes its scratch folders.
        with _jvm_streams(quiet), ending_by_itself():
            session = builder.getOrCreate()
        if archive is not None:
            class_archive.started(archive, getattr(session.sparkContext._gateway, "proc", None), _note(quiet))
        return session
    except Exception as e:  # the JVM failed to start: pyspark raises its own runtime errors
        if archive is not None:
            class_archive.started(archive, None, lambda line: None)  # its log removed, nothing kept
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise SparkSetupError(f"Spark did not start on {master}: {first}") from None
    finally:
        # The program's own handler (its module is __main__ under python -m allpairs), or SIGINT ignored
        # as the program found it (nohup, a background job): not pyspark's KeyboardInterrupt.
        if sigint == signal.SIG_IGN or (getattr(sigint, "__name__", None) == "_ignore" and
                                        getattr(sigint, "__module__", None) in ("allpairs.__main__", "__main__")):
            signal.signal(signal.SIGINT, sigint)
