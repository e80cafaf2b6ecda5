"""Shared test set-up: the repository root on sys.path, and where the real data is.

The repository root goes first on ``sys.path`` so that ``import datasets``
finds this project's loaders and not the unrelated PyPI package of that name.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path[:1]:
    sys.path.insert(0, str(REPO_ROOT))


def shared_datasets_dir() -> Path | None:
    """The shared data folder: ``$ALLPAIRS_DATASETS``, else ``../shared/datasets``
    beside the repository; None when it does not exist."""
    env = os.environ.get("ALLPAIRS_DATASETS")
    path = Path(env).expanduser() if env else Path(__file__).resolve().parents[2] / "shared" / "datasets"
    return path if path.is_dir() else None


@pytest.fixture(scope="session")
def shared_datasets() -> Path:
    """The shared data folder; skips the test (saying where it looked) when absent."""
    path = shared_datasets_dir()
    if path is None:
        where = os.environ.get("ALLPAIRS_DATASETS") or str(REPO_ROOT.parent / "shared" / "datasets")
        pytest.skip(f"shared data folder not found at {where} (set ALLPAIRS_DATASETS)")
    return path


@pytest.fixture(scope="session")
def any_go_src() -> Path:
    """A Go src/ tree of any version (``datasets.go.find_go_src``: the shared 1.27.3 tree, else the Go
    toolchain's or Debian golang-src's), for tests that pin no count of it; skips when there is none."""
    from datasets.go import find_go_src

    try:
        return find_go_src()
    except FileNotFoundError as exc:
        pytest.skip(str(exc).replace("\n", " "))


@pytest.fixture(scope="session")
def john_passwords_file(tmp_path_factory) -> Path:
    """John the Ripper's password list as a file, a password a line: the shared ``passwords-john.txt``, else
    Debian's john-data list with its comment lines removed; skips the test (saying how to get either) when absent."""
    from datasets.passwords import JOHN_SHARED, john_passwords

    folder = shared_datasets_dir()
    if folder is not None and (folder / JOHN_SHARED).is_file():
        return folder / JOHN_SHARED
    try:
        words = john_passwords()
    except FileNotFoundError as exc:
        pytest.skip(str(exc).replace("\n", " "))
    path = tmp_path_factory.mktemp("john") / JOHN_SHARED
    path.write_text("".join(word + "\n" for word in words), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def go_reference_src() -> Path:
    """The shared Go 1.27.3 src/ tree (REFERENCE.md section 1), unpacked once into
    the user's cache; skips the test when the archive is absent."""
    from datasets.go import shared_go_src

    try:
        return shared_go_src()
    except FileNotFoundError as exc:
        pytest.skip(str(exc).replace("\n", " "))


#: The kernel paths a test marked ``@pytest.mark.kernel_paths(...)`` runs on (``allpairs._kernels.jit``;
#: ``ALLPAIRS_KERNELS``): ``compiled`` (the functions built ahead of time where the install built them,
#: numba's otherwise), ``python`` (the plain functions, whose numpy arithmetic must give the same
#: integers) and ``jit`` (always numba's JIT, never ahead of time, as on an install that could not build
#: the module for these argument types), each against the oracle. The marks are chosen to cover every
#: kernel module at modest cost; ``jit`` on one test per command and kernel family, so that the
#: ahead-of-time module is never the only thing keeping answers exact.
KERNEL_PATHS = ("compiled", "python", "jit")


def pytest_configure(config):
    config.addinivalue_line("markers", "kernel_paths(*paths): run the test once on each kernel path "
                                       "(compiled, python, jit) with every kernel run that way")
    config.addinivalue_line("markers", "long_running: a test of about 10 s or more outside the Spark session's "
                                       "group, run right after the group's tests are handed out")


def kernel_paths(item_or_definition) -> list[str]:
    """The kernel paths a test is marked to run on, or none."""
    mark = item_or_definition.get_closest_marker("kernel_paths")
    if mark is None:
        return []
    unknown = [p for p in mark.args if p not in KERNEL_PATHS]
    if unknown or not mark.args:
        raise pytest.UsageError(f"kernel_paths takes some of {KERNEL_PATHS}, not {mark.args}")
    return list(mark.args)


def pytest_generate_tests(metafunc):
    """Run each test marked ``kernel_paths`` once per path it names."""
    paths = kernel_paths(metafunc.definition)
    if paths:
        if "kernels" not in metafunc.fixturenames:
            metafunc.fixturenames.append("kernels")
        # Session scope: the parameter holds no state (the mode is set around the call below),
        # and hypothesis accepts it beside @given.
        metafunc.parametrize("kernels", paths, scope="session")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """Around a test parametrized by ``kernels``: every kernel runs that way (compiled, jit or plain Python)."""
    callspec = getattr(item, "callspec", None)
    mode = callspec.params.get("kernels") if callspec is not None else None
    if mode is None:
        return (yield)
    from allpairs._kernels.jit import use_kernels

    with use_kernels(mode):
        return (yield)


#: The xdist group of every test that takes the ``spark`` fixture: one worker runs them all, so a
#: run with ``-n 2 --dist loadgroup`` (the README's test command) starts one SparkSession, not one per
#: worker. Tests that start Spark in a command-line subprocess have a JVM of their own and run anywhere.
SPARK_GROUP = "spark-session"


def _name_group(config, item, group: str) -> None:
    """On an xdist worker of ``--dist loadgroup``, name ``item`` ``nodeid@group`` as xdist would.

    xdist 3.8 sets ``item._nodeid``; from pytest 9.2 a node's id is ``item._id`` (a NodeId), so xdist's
    name is never seen, the scheduler finds no group, and each worker started a SparkSession of its
    own and ran Spark tests beside the other's (two JVMs on two cores; the group was never one)."""
    if not getattr(config.option, "loadgroup", False) or item.nodeid.endswith("@" + group):
        return
    if hasattr(item, "_id") and not hasattr(item, "_nodeid"):
        from _pytest.nodeid import NodeId

        item._id = NodeId.parse(f"{item.nodeid}@{group}")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """The session's Spark tests first and in one xdist group: the worker that takes the group starts
    on it at once, and the other tests fill the other worker meanwhile (run last, the group was the
    suite's tail). Then the tests marked ``long_running`` (most start JVMs of their own): the other
    worker starts on them, so that neither worker ends the run alone on one (in file order they came
    last, test_spark*.py). First of the hooks, so that xdist's worker, which reads the group marks in
    its own pytest_collection_modifyitems, finds them (see also ``_name_group``)."""
    uses_spark = [item for item in items if "spark" in getattr(item, "fixturenames", ())]
    for item in uses_spark:
        item.add_marker(pytest.mark.xdist_group(SPARK_GROUP))
        _name_group(config, item, SPARK_GROUP)
    chosen = set(map(id, uses_spark))
    long = [item for item in items if id(item) not in chosen and item.get_closest_marker("long_running")]
    chosen |= set(map(id, long))
    items[:] = uses_spark + long + [item for item in items if id(item) not in chosen]


@pytest.fixture(scope="session")
def spark():
    """One SparkSession on local[2] for the whole test run (starting one costs 10–30 s); skips the test
    without pyspark, pyarrow or a Java runtime."""
    pytest.importorskip("pyspark", reason="the Spark tests need the spark extra: pip install -e '.[test]'")
    pytest.importorskip("pyarrow", reason="the Spark tests need the spark extra: pip install -e '.[test]'")
    from allpairs.engines.spark import get_session
    from allpairs.engines.spark.session import find_java

    if find_java() is None:
        pytest.skip("no Java runtime (JAVA_HOME or java on PATH): apt-get install -y openjdk-17-jre-headless")
    session = get_session("local[2]", conf={"spark.sql.shuffle.partitions": "2", "spark.default.parallelism": "2"})
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
