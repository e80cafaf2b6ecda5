"""Spark's JVM started as ``spark-submit`` starts it, without its scripts and, once seen, its launcher JVM.

pyspark starts the driver's JVM through ``bin/spark-submit``: bash scripts (``spark-class``,
``load-spark-env.sh``, forking ``dirname`` and ``ps``), then a first JVM, Spark's launcher
(``org.apache.spark.launcher.Main``), which prints the command of the second, the driver's, that
``spark-class`` then execs. On 2 cores at load 4 the launcher alone takes 0.08-0.13 s, every run, before
the driver's JVM begins. :func:`spawn` does what the scripts do, here, and runs the launcher only for a
command line, environment and installation it has not seen: its command is kept in a file named by a
hash of all of them (the class archive's folder, ``launch/``; the process id, which the class archive's
log name holds, stands there as a placeholder). Wherever the scripts would do more than this mirrors (a
``spark-env.sh`` to source, ``SPARK_PREPEND_CLASSES``, ``SPARK_TESTING``, ``SPARK_LAUNCHER_OPTS``, a
``--properties-file``, a ``find_spark_home.py`` beside them, no ``java``), or the launcher fails or
prints what this does not read, ``spark-submit`` runs as before (and says why where it fails).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

from . import class_archive

#: The launcher's class and the class it builds the command of (as ``spark-class`` and ``spark-submit`` name them).
LAUNCHER = "org.apache.spark.launcher.Main"
SUBMIT = "org.apache.spark.deploy.SparkSubmit"
#: ``load-spark-env.sh``'s Scala version line (the script exports it).
_SCALA = re.compile(r"^export SPARK_SCALA_VERSION=([0-9.]+)$", re.M)
#: Commands kept at most (the oldest removed first).
KEPT = 64
#: Stands for this process's id in a kept command.
PID = "\0pid\0"


def _scripts_env(script: str, env: dict, stdin) -> dict | None:
    """The environment in which ``spark-submit`` (at ``script``) runs the launcher and the driver's JVM: what
    it, ``find-spark-home`` and ``load-spark-env.sh`` export; None where they would do more than that."""
    env = {k: v for k, v in env.items() if k != "_"}  # bash's last command, which its exec does not pass on
    bin_dir = os.path.dirname(script)
    if not env.get("SPARK_HOME"):
        if os.path.isfile(os.path.join(bin_dir, "find_spark_home.py")):
            return None  # the script asks an interpreter
        env["SPARK_HOME"] = os.path.normpath(os.path.join(bin_dir, ".."))  # `cd "$(dirname "$0")"/..; pwd`
    env["PYTHONHASHSEED"] = "0"
    home = env["SPARK_HOME"]
    if os.path.normpath(os.path.join(home, "bin")) != os.path.normpath(bin_dir):
        return None  # spark-class is taken from SPARK_HOME, not beside this script
    if any(env.get(name) for name in ("SPARK_PREPEND_CLASSES", "SPARK_TESTING", "SPARK_LAUNCHER_OPTS")):
        return None
    if stdin != subprocess.PIPE:  # load-spark-env.sh sets SPARK_BEELINE_OPTS where stdin is no pipe
        return None
    if not env.get("SPARK_ENV_LOADED"):
        env["SPARK_ENV_LOADED"] = "1"
        env["SPARK_CONF_DIR"] = env.get("SPARK_CONF_DIR") or os.path.join(home, "conf")
        if os.path.isfile(os.path.join(env["SPARK_CONF_DIR"], "spark-env.sh")):
            return None
    try:
        scala = _SCALA.findall(Path(home, "bin", "load-spark-env.sh").read_text(errors="replace"))
    except OSError:
        return None
    if len(scala) != 1:
        return None
    env["SPARK_SCALA_VERSION"] = scala[0]
    return env


def _runner(env: dict) -> str | None:
    if env.get("JAVA_HOME"):
        return os.path.join(env["JAVA_HOME"], "bin", "java")
    return "java" if shutil.which("java", path=env.get("PATH")) else None


def _stat(path: str) -> str:
    try:
        st = os.stat(path)
    except OSError:
        return f"{path} -"
    return f"{path} {st.st_size} {st.st_mtime_ns}"


def _key(args: list, env: dict, runner: str) -> str:
    """What the launcher's command depends on, hashed: the arguments, the environment (not pyspark's file
    of this run), the working folder, the java it runs, the jars and conf folders' files."""
    pid = str(os.getpid())
    parts = [json.dumps([a.replace(pid, PID) for a in args]), os.getcwd(),
             _stat(os.path.realpath(shutil.which(runner, path=env.get("PATH")) or runner))]
    parts += [f"{k}={v.replace(pid, PID)}" for k, v in sorted(env.items()) if k != "_PYSPARK_DRIVER_CONN_INFO_PATH"]
    for folder in (os.path.join(env["SPARK_HOME"], "jars"), env.get("SPARK_CONF_DIR", "")):
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            names = []
        parts += [_stat(os.path.join(folder, name)) for name in names]
    return hashlib.sha256("\n".join(parts).encode("utf-8", "surrogateescape")).hexdigest()[:32]


def _launcher_command(runner: str, home: str, args: list, env: dict, stderr, preexec_fn) -> list | None:
    """The driver's command as the launcher prints it (``spark-class``'s reading of it), or None."""
    try:
        done = subprocess.run([runner, "-Xmx128m", "-cp", os.path.join(home, "jars", "*"), LAUNCHER, SUBMIT, *args],
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=stderr, env=env,
                              preexec_fn=preexec_fn)
    except OSError:
        return None
    out = done.stdout
    if done.returncode != 0 or not out.startswith(b"\0\n") or not out.endswith(b"\0"):
        return None  # spark-submit runs and says why
    return [os.fsdecode(token).replace("\r", "") for token in out[2:-1].split(b"\0")]


def _kept(where: Path | None, key: str) -> list | None:
    if where is None:
        return None
    try:
        command = json.loads((where / f"{key}.json").read_text())
    except (OSError, ValueError):
        return None
    pid = str(os.getpid())
    return [token.replace(PID, pid) for token in command] if isinstance(command, list) else None


def _keep(where: Path | None, key: str, command: list) -> None:
    if where is None:
        return
    pid = str(os.getpid())
    try:
        where.mkdir(parents=True, exist_ok=True)
        tmp = where / f"{key}.{pid}.tmp"
        tmp.write_text(json.dumps([token.replace(pid, PID) for token in command]))
        os.replace(tmp, where / f"{key}.json")
        kept = sorted(where.glob("*.json"), key=lambda p: p.stat().st_mtime_ns)
        for old in kept[:-KEPT]:
            old.unlink()
    except OSError:
        pass  # not kept: the next run asks the launcher again


def folder() -> Path | None:
    """Where the launcher's commands are kept (None: ``ALLPAIRS_CLASS_ARCHIVE=off``, none kept)."""
    base = class_archive.folder()
    return None if base is None else base / "launch"


def spawn(popen, command: list, **kwargs):
    """Start what ``popen(command, **kwargs)`` starts, pyspark's ``[.../bin/spark-submit, args...]``: the
    driver's JVM, with the environment the scripts give it, from a kept command or the launcher's; else
    (see the module) by ``popen`` itself."""
    script, args = command[0], list(command[1:])
    env = kwargs.get("env")
    if (env is None or os.path.basename(script) != "spark-submit" or "--properties-file" in args
            or not os.path.isabs(script)):
        return popen(command, **kwargs)
    env = _scripts_env(script, env, kwargs.get("stdin"))
    runner = None if env is None else _runner(env)
    if runner is None or not os.path.isdir(os.path.join(env["SPARK_HOME"], "jars")):
        return popen(command, **kwargs)
    where = folder()
    key = _key(args, env, runner)
    driver = _kept(where, key)
    if driver is None:
        driver = _launcher_command(runner, env["SPARK_HOME"], args, env, kwargs.get("stderr"), kwargs.get("preexec_fn"))
        if driver is None:
            return popen(command, **kwargs)
        _keep(where, key, driver)
    return popen(driver, **dict(kwargs, env=env))
