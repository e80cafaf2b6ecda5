"""Starting the driver's JVM without spark-submit's scripts (allpairs/engines/spark/launch.py): the same command and
environment as spark-submit gives it, from the launcher's answer and from the kept one; spark-submit itself where
the scripts would do more.

A stand-in ``java`` (a shell script under a JAVA_HOME of the test's) runs the real one for Spark's launcher and, for
the driver, only writes down its arguments and environment: no driver JVM starts.
"""
from __future__ import annotations

import os
import subprocess

import pytest

pytest.importorskip("pyspark", reason="the Spark tests need the spark extra: pip install -e '.[test]'")

from allpairs.engines.spark import class_archive, launch  # noqa: E402
from allpairs.engines.spark.session import find_java  # noqa: E402

JAVA = find_java()
pytestmark = pytest.mark.skipif(JAVA is None, reason="no Java runtime (JAVA_HOME or java on PATH)")


def _recorded(record) -> tuple[list, dict]:
    argv = record.with_suffix(".argv").read_bytes().split(b"\0")[:-1]
    env = dict(line.split(b"=", 1) for line in record.with_suffix(".env").read_bytes().split(b"\0") if b"=" in line)
    env.pop(b"RECORD", None)
    env.pop(b"_PYSPARK_DRIVER_CONN_INFO_PATH", None)
    return argv, env


def test_the_driver_jvm_gets_spark_submits_command_and_environment(tmp_path, monkeypatch):
    monkeypatch.setenv(class_archive.ENV, str(tmp_path / "archives"))
    jdk = tmp_path / "jdk"
    (jdk / "bin").mkdir(parents=True)
    java = jdk / "bin" / "java"
    java.write_text(f'#!/bin/sh\ncase "$*" in *{launch.LAUNCHER}*) echo >> "$RECORD.launcher"; '
                    f'exec {os.path.realpath(JAVA)} "$@";; esac\n'
                    'printf "%s\\0" "$@" > "$RECORD.argv"; env -0 > "$RECORD.env"\n')
    java.chmod(0o755)
    home = class_archive._spark_home()
    pid = os.getpid()
    submit = [str(home / "bin" / "spark-submit"), "--conf", "spark.master=local[2]", "--conf",
              f"spark.driver.defaultJavaOptions=-Dlog=/x/jvm.{pid}.log -Xshare:auto", "--conf",
              "spark.driver.extraJavaOptions=-XX:+UseSerialGC", "pyspark-shell"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPARK_")}
    record = tmp_path / "record"
    env.update(JAVA_HOME=str(jdk), RECORD=str(record))

    def run(start, conn):
        env["_PYSPARK_DRIVER_CONN_INFO_PATH"] = str(tmp_path / conn)  # pyspark's, a new one each run
        assert start(subprocess.Popen, submit, stdin=subprocess.PIPE, env=env).wait(120) == 0
        return _recorded(record)

    def launched():
        return record.with_suffix(".launcher").read_text().count("\n")

    want = run(lambda popen, command, **kw: popen(command, **kw), "a")
    assert b"org.apache.spark.deploy.SparkSubmit" in want[0] and want[0][-1] == b"pyspark-shell"
    assert f"-Dlog=/x/jvm.{pid}.log".encode() in want[0] and want[1][b"PYTHONHASHSEED"] == b"0"
    assert run(launch.spawn, "b") == want and launched() == 2  # the launcher asked, its command kept
    assert len(list(launch.folder().glob("*.json"))) == 1
    assert run(launch.spawn, "c") == want and launched() == 2  # the kept command: no launcher
    # Where the scripts would source a spark-env.sh, they run.
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "spark-env.sh").write_text("export FROM_SPARK_ENV=1\n")
    env["SPARK_CONF_DIR"] = str(conf)
    assert run(launch.spawn, "d")[1].get(b"FROM_SPARK_ENV") == b"1" and launched() == 3
    assert launch._scripts_env(submit[0], env, subprocess.PIPE) is None
