"""The JVM's class archive (allpairs/engines/spark/class_archive.py): written by a first JVM, mapped by the next,
passed over when it is not whole, removed when the JVM refuses it.

A JVM of Spark's own jars (its launcher: ``org.apache.spark.launcher.Main``, well under a second) stands for
the session's: the archive it writes is the same kind of file, checked the same way.
"""
from __future__ import annotations

import os
import shlex
import signal
import subprocess

import pytest

pytest.importorskip("pyspark", reason="the Spark tests need the spark extra: pip install -e '.[test]'")

from allpairs.engines.spark import class_archive  # noqa: E402
from allpairs.engines.spark.session import find_java  # noqa: E402

JAVA = find_java()
pytestmark = pytest.mark.skipif(JAVA is None, reason="no Java runtime (JAVA_HOME or java on PATH)")


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv(class_archive.ENV, str(tmp_path / "archives"))
    return tmp_path / "archives"


def _jvm(options: str, *, classpath: str | None = None, wait: bool = False, extra=()):
    """Spark's launcher on its jars, with ``options``: a JVM that loads a few hundred of Spark's classes and ends."""
    home = class_archive._spark_home()
    cp = classpath or str(home / "jars" / "*")
    cmd = [JAVA, *shlex.split(options), *extra, "-cp", cp, "org.apache.spark.launcher.Main",
           "org.apache.spark.deploy.SparkSubmit", "pyspark-shell"]
    # It prints the command a session's JVM would run, and ends (SPARK_SCALA_VERSION as bin/load-spark-env.sh sets it).
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=dict(os.environ, SPARK_HOME=str(home), SPARK_SCALA_VERSION="2.13"))
    if wait:
        proc.stdin.close()
        assert proc.wait(120) == 0
    return proc


def _written(folder, notes):
    p = class_archive.plan(JAVA, {}, notes.append)
    assert p is not None and p.use is None and p.write is not None
    return class_archive.finish(p, _jvm(p.options))


def test_a_first_jvm_writes_the_archive_and_the_next_maps_it(folder, tmp_path):
    notes = []
    archive = _written(folder, notes)
    assert archive is not None and archive.name == f"classes-{archive.stat().st_size}.jsa"
    # Nothing else is left beside it: the JVM's file was renamed, its log removed.
    assert sorted(p.name for p in archive.parent.iterdir()) == [archive.name]
    again = class_archive.plan(JAVA, {}, notes.append)
    assert again.use == archive and f"-XX:SharedArchiveFile={archive}" in again.options
    loaded = tmp_path / "loaded.log"
    _jvm(again.options, wait=True, extra=[f"-Xlog:class+load=info:file={loaded}"])
    class_archive.started(again, None, notes.append)
    assert "shared objects file (top)" in loaded.read_text()  # classes of the archive, mapped
    assert notes == [] and archive.exists()


def test_an_archive_the_jvm_refuses_is_noted_and_removed(folder):
    notes = []
    archive = _written(folder, notes)
    p = class_archive.plan(JAVA, {}, notes.append)
    # Another class path than the one it was written with: the JVM goes on without it.
    launcher = next((class_archive._spark_home() / "jars").glob("spark-launcher*.jar"))
    _jvm(p.options, classpath=str(launcher), wait=True)
    class_archive.started(p, None, notes.append)
    assert len(notes) == 1 and str(archive) in notes[0] and "did not use" in notes[0], notes
    assert not archive.exists() and not p.log.exists()


def test_an_archive_mapped_with_sparks_module_options_is_kept(folder, tmp_path):
    # Spark's JVM adds modules and opens packages: JDK 25 then logs, at level error, that its optimized module
    # handling is off, and maps the archive all the same (fails there without the fix; JDK 17 logs nothing).
    notes = []
    archive = _written(folder, notes)
    p = class_archive.plan(JAVA, {}, notes.append)
    loaded = tmp_path / "loaded.log"
    _jvm(p.options, wait=True, extra=["--add-modules=jdk.incubator.vector", "--add-opens=java.base/java.lang=ALL-UNNAMED",
                                      f"-Xlog:class+load=info:file={loaded}"])
    class_archive.started(p, None, notes.append)
    assert "shared objects file (top)" in loaded.read_text()
    assert notes == [] and archive.exists()


def test_a_file_that_is_not_an_archive_is_removed_before_a_jvm_maps_it(folder):
    notes = []
    where = folder / class_archive.key(JAVA, {})
    where.mkdir(parents=True)
    bad = where / "classes-4096.jsa"
    bad.write_bytes(os.urandom(4096))
    p = class_archive.plan(JAVA, {}, notes.append)
    assert p.use is None and p.write is not None  # this run writes a new one
    assert not bad.exists() and len(notes) == 1 and "not a class archive" in notes[0]


def test_an_archive_shorter_than_its_name_says_is_passed_over(folder):
    notes = []
    archive = _written(folder, notes)
    # Mapped, a truncated archive crashes the JVM (SIGBUS): its length is checked against its name first.
    cut = archive.parent / f"classes-{archive.stat().st_size}.jsa"
    data = archive.read_bytes()
    os.chmod(archive, 0o644)
    cut.write_bytes(data[: len(data) // 2])
    assert class_archive.archive_in(archive.parent) is None
    p = class_archive.plan(JAVA, {}, notes.append)
    assert p.use is None and p.write is not None


def test_a_jvm_killed_before_it_ends_leaves_no_archive_and_is_tried_again(folder):
    p = class_archive.plan(JAVA, {}, [].append)
    proc = _jvm(p.options)
    proc.send_signal(signal.SIGKILL)
    proc.wait(60)
    assert class_archive.finish(p, proc) is None
    assert list(p.where.iterdir()) == []  # no half-written file, no "unusable" mark: the next run writes
    assert class_archive.plan(JAVA, {}, [].append).write is not None


def test_none_when_turned_off_or_when_the_caller_gives_the_setting(folder, monkeypatch):
    assert class_archive.plan(JAVA, {class_archive.SETTING: "-Xss4m"}, [].append) is None
    monkeypatch.setenv(class_archive.ENV, "off")
    assert class_archive.plan(JAVA, {}, [].append) is None
    assert not folder.exists()


def test_the_key_changes_with_the_class_path(folder, monkeypatch):
    mine = class_archive.key(JAVA, {})
    assert class_archive.key(JAVA, {"spark.driver.extraClassPath": "/opt/x.jar"}) != mine
    monkeypatch.setenv("SPARK_DIST_CLASSPATH", "/opt/hadoop/*")
    assert class_archive.key(JAVA, {}) != mine


def test_the_log_of_a_run_that_ended_before_reading_it_is_removed_by_the_next(folder):
    notes = []
    archive = _written(folder, notes)
    stale = archive.parent / "jvm.999999999.log"  # no such process
    stale.write_text("")
    p = class_archive.plan(JAVA, {}, notes.append)
    assert p.use == archive and not stale.exists()
