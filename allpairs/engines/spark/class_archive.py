"""A class-data archive for the JVM of the sessions allpairs starts: Spark's classes mapped, not loaded, from the second run on.

Starting Spark and running its first queries loads some 14,000 classes from
the jars (read, parsed, verified: seconds of a 2-core machine's CPU, most of
the tiny corpus's run). The JDK can keep the classes a run loaded in a file
and map it in later runs (dynamic class-data sharing, JEP 350, JDK 13+):
the first session started with a given Java, Spark and class path runs with
``-XX:ArchiveClassesAtExit``; when this process exits, the JVM is asked to
exit (EOF on its stdin, on which pyspark's gateway exits) and waited for;
the file it wrote is kept only if the JVM ended normally and its file is as
long as its own log says it wrote (a truncated archive crashes the JVM that
maps it, SIGBUS), then renamed into place, its size in its name. Later
sessions start with ``-XX:SharedArchiveFile``. The JVM checks the archive
(its JDK, its class path, each jar's size and time) and, on any mismatch,
goes on without it (``-Xshare:auto``): then a one-line note says so and the
archive is removed (the next run writes a new one).

The folder is ``$ALLPAIRS_CLASS_ARCHIVE``, else
``$XDG_CACHE_HOME/allpairs/jvm-classes``, else
``~/.cache/allpairs/jvm-classes``, a subfolder per key (:func:`key`: the Java
runtime, pyspark's version and jars, what else goes on the class path);
``ALLPAIRS_CLASS_ARCHIVE=off`` starts the JVM without one. An archive takes
~170 MB. The options go in ``spark.driver.defaultJavaOptions``, beside the
caller's ``spark.driver.extraJavaOptions``; nothing is done where that
setting is given (``conf``, ``spark-defaults.conf``), where the JVM is not
started here (``PYSPARK_GATEWAY_PORT``), or where the folder cannot be
written. The JVM's own CDS messages go to a log file, never to stdout (the
JVM's stdout is this process's, where a count is written).

JDK 25's ahead-of-time cache (JEPs 483, 514, 515: classes loaded and linked, and method profiles, from a
training run with ``-XX:AOTCacheOutput``) in place of this archive was measured in spark54 and not taken: the
first 1 M round after the 2,000-set warm-up, JVM CPU 16.6 s with the cache against 18.4 s with this archive
(JIT compilers 5.4 against 5.8 s; lower in each of 5 interleaved fresh-process pairs, by 0.3-2.8 s, load 3-8;
Java 17: 20.1 s), the second round not lower (13.0 against 11.8 s); its training run took the 1 M join 80 s
instead of ~25 s, and 200 MB, and only a run of the distributed plan trains it.
"""
from __future__ import annotations

import atexit
import hashlib
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..._kernels.cache import user_cache

#: The environment variable naming the folder, or ``off``.
ENV = "ALLPAIRS_CLASS_ARCHIVE"
#: The Spark setting that carries the options (``spark.driver.extraJavaOptions`` stays the caller's).
SETTING = "spark.driver.defaultJavaOptions"
#: The JVM's last line of a dump: the archive's length in bytes (the file is as long or longer, page-aligned).
_WRITTEN = re.compile(r"Written dynamic archive .*?(\d+) bytes total")
#: The first bytes of a dynamic archive (0xf00baba8, little-endian): anything else is not one.
MAGIC = bytes.fromhex("a8ab0bf0")
#: Seconds this process waits, as it exits, for its JVM to stop and write the archive.
WAIT_S = 120
#: Free bytes the folder's disk must have for a first archive to be written.
FREE_BYTES = 1 << 30
#: A line of the JVM's CDS log at a level that may mean the archive was refused (JDK 25 pads the level: "[error  ]").
_LEVEL = re.compile(r"\[(warning|error)\s*\]")
#: What JDK 25 logs at level error when only its optimized module handling is off (Spark's ``--add-opens`` and
#: ``--add-modules`` differ from the dump's), the archive mapped all the same: not a refusal (the archive was
#: removed and written again by every other run). A refusal says so in a line of its own ("shared class paths
#: mismatch", "Unable to use shared archive").
_MODULES_ONLY = re.compile(r"Mismatched values for property|Disabling optimized module handling|"
                           r"An error has occurred while processing the shared archive file")
#: Where a path in a JVM option would need quoting (-Xlog splits on ':' and ',', Spark on white space).
_UNSAFE = re.compile(r"[\s:,'\"=]")


def folder() -> Path | None:
    """The folder of the archives (not created here); None when ``ALLPAIRS_CLASS_ARCHIVE=off``."""
    return user_cache(ENV, "jvm-classes")


def _spark_home() -> Path:
    from pyspark.find_spark_home import _find_spark_home

    return Path(os.environ.get("SPARK_HOME") or _find_spark_home())


def _conf_dir(home: Path) -> Path:
    return Path(os.environ.get("SPARK_CONF_DIR") or home / "conf")


def conf_dir() -> Path:
    """The folder Spark's launcher reads its configuration from (``SPARK_CONF_DIR``, else SPARK_HOME/conf)."""
    return _conf_dir(_spark_home())


def key(java: str, conf: dict) -> str:
    """What the archive depends on, hashed: the Java runtime (its executable, release file and size), pyspark's
    version and every jar's name, size and time, the conf folder and what else the launcher puts on the class
    path (``SPARK_DIST_CLASSPATH``, ``HADOOP_CONF_DIR``, ``YARN_CONF_DIR``, ``spark.driver.extraClassPath``)."""
    import pyspark

    java = os.path.realpath(java)
    home = _spark_home()
    jdk = Path(java).parent.parent
    parts = [java, str(os.stat(java).st_size), pyspark.__version__, str(home.resolve()), str(_conf_dir(home))]
    try:
        parts.append((jdk / "release").read_text(errors="replace"))
    except OSError:
        parts.append("no release file")
    jars = home / "jars"
    for entry in sorted(os.scandir(jars), key=lambda e: e.name) if jars.is_dir() else ():
        st = entry.stat()
        parts.append(f"{entry.name} {st.st_size} {st.st_mtime_ns}")
    for name in ("SPARK_DIST_CLASSPATH", "HADOOP_CONF_DIR", "YARN_CONF_DIR", "SPARK_PREPEND_CLASSES"):
        parts.append(f"{name}={os.environ.get(name, '')}")
    parts.append(str(conf.get("spark.driver.extraClassPath", "")))
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:24]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass


def archive_in(where: Path) -> Path | None:
    """The archive in ``where`` whose length is the one in its name (``classes-<bytes>.jsa``), if any."""
    for path in where.glob("classes-*.jsa"):
        m = re.fullmatch(r"classes-(\d+)\.jsa", path.name)
        try:
            if m and path.stat().st_size == int(m.group(1)):
                return path
        except OSError:
            continue
    return None


@dataclass
class Plan:
    """The archive a session maps (``use``) or writes (``write``: the file the JVM writes, renamed at exit)."""

    where: Path
    options: str
    log: Path
    use: Path | None = None
    write: Path | None = None


def plan(java: str, conf: dict, note) -> Plan | None:
    """The archive options for a JVM about to start with ``conf``, or None (off, not startable here, or
    ``conf`` or ``spark-defaults.conf`` give :data:`SETTING`); an archive that is not one is removed and
    ``note``-d in one line. Never raises: a cache that cannot be read or written is passed over."""
    base = folder()
    if base is None or SETTING in conf or os.environ.get("PYSPARK_GATEWAY_PORT"):
        return None
    try:
        home = _spark_home()
        defaults = _conf_dir(home) / "spark-defaults.conf"
        if defaults.is_file() and SETTING in defaults.read_text(errors="replace"):
            return None
        where = base / key(java, conf)
        if _UNSAFE.search(str(where)):
            return None
        where.mkdir(parents=True, exist_ok=True)
        if (where / "unusable").exists():  # a dump that ended normally wrote no archive: not tried again
            return None
        log = where / f"jvm.{os.getpid()}.log"
        for old in where.glob("jvm.*.log"):  # of runs whose JVM did not start, or that were killed meanwhile
            pid = old.name.split(".")[1]
            if pid.isdigit() and not _alive(int(pid)):
                _remove(old)
        archive = archive_in(where)
        if archive is not None:
            with open(archive, "rb") as f:
                head = f.read(len(MAGIC))
            if head != MAGIC:  # mapped, a file of other bytes would turn the JDK's own archive off too
                _remove(archive)
                note(f"{archive} is not a class archive; removed, this run writes a new one")
                archive = None
        if archive is not None:
            # The JVM's CDS warnings (an archive refused) to the log, none to stdout.
            return Plan(where, f"-Xshare:auto -XX:SharedArchiveFile={archive} -Xlog:cds*=off "
                               f"-Xlog:cds*=warning:file={log}::filecount=0", log, use=archive)
        writing = False
        for tmp in where.glob("classes.*.tmp"):
            pid = tmp.name.split(".")[1]
            if pid.isdigit() and _alive(int(pid)):
                writing = True  # another run writes it
            else:
                _remove(tmp)  # its run ended before renaming it
        if writing or shutil.disk_usage(where).free < FREE_BYTES:
            return None
        tmp = where / f"classes.{os.getpid()}.tmp"
        return Plan(where, f"-XX:ArchiveClassesAtExit={tmp} -Xlog:cds*=off "
                           f"-Xlog:cds=error,cds+dynamic=info:file={log}::filecount=0", log, write=tmp)
    except OSError:
        return None


def started(p: Plan, proc, note) -> None:
    """After the JVM started: where it maps the archive, whether it refused it (then ``note`` one line and
    remove it); where it writes one, :func:`finish` registered for this process's exit. ``proc``: the JVM's
    process (pyspark's gateway ``proc``), None if pyspark did not start one."""
    if p.use is not None:
        try:
            refused = [line for line in p.log.read_text(errors="replace").splitlines()
                       if _LEVEL.search(line) and not _MODULES_ONLY.search(line)]
        except OSError:
            refused = []  # no log: the JVM was not started with these options
        _remove(p.log)
        if refused:
            why = refused[-1].split("] ", 3)[-1].strip()
            note(f"the JVM did not use its class archive {p.use} ({why}); removed, the next run writes a new one")
            _remove(p.use)
    elif p.write is not None:
        if proc is None or getattr(proc, "stdin", None) is None:
            _remove(p.log)
            return
        note(f"the JVM writes a class archive for later runs as this one ends (once per Java and Spark install: "
             f"seconds; {ENV}=off skips it)")
        atexit.register(finish, p, proc)


def finish(p: Plan, proc, wait_s: float = WAIT_S) -> Path | None:
    """Stop the JVM ``proc`` (EOF on its stdin: pyspark's gateway exits, the JVM writes the archive), wait for
    it, and move the archive into place if the JVM ended normally and wrote it whole; the archive, or None."""
    try:
        from pyspark import SparkContext

        active = SparkContext._active_spark_context
        # Only the context of this JVM: another (a session of the caller's, of a test run) is not this one's to end.
        if active is not None and getattr(SparkContext._gateway, "proc", None) is proc:
            # Stopped from here first: its accumulator server would print a traceback as the JVM goes.
            try:
                active.stop()
            except Exception:  # noqa: BLE001  (a context already half gone: the JVM is stopped below all the same)
                pass
        try:
            proc.stdin.close()
        except OSError:
            pass
        try:
            code = proc.wait(wait_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            return None
        try:
            text = p.log.read_text(errors="replace")
        except OSError:
            text = ""
        written = _WRITTEN.search(text)
        size = p.write.stat().st_size if p.write.exists() else 0
        if code == 0 and written and size >= int(written.group(1)):
            final = p.where / f"classes-{size}.jsa"
            os.replace(p.write, final)
            return final
        if code == 0:
            # Ended normally and wrote none (a class path the JDK cannot archive): said once, not tried again.
            errors = [line for line in text.splitlines() if "[error]" in line]
            reason = errors[-1] if errors else "the JVM wrote no archive"
            tmp = p.where / f"unusable.{os.getpid()}.tmp"
            tmp.write_text(reason + "\n")
            os.replace(tmp, p.where / "unusable")
        return None
    except OSError:
        return None
    finally:
        _remove(p.write)
        _remove(p.log)
