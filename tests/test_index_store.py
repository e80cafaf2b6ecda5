"""The index file as input: crafted and re-signed files, FIFOs, two runs adding at once.

An index file is checked by a SHA-256 that anyone can recompute, so a file
may hold anything. Each crafted file below is re-signed and given to the real
program (``index query`` and ``index add`` as subprocesses): one line on
stderr, exit 1, never a signal, never a traceback, the file left as it was.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import struct
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from allpairs.index import IndexFileError, SearchIndex
from allpairs.index.store import FORMAT, MAGIC

PREAMBLE = struct.Struct("<16sII32s")
SETS = "a b c\nb c d e\nx y\na b c d\nx y z\n"
ADDED = "p q r\na b c\nq r s t\n"  # new tokens (negative ranks) and a set indexed already


def program(*args, timeout=120, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "allpairs", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, **kwargs)


@pytest.fixture(scope="module")
def index_file(tmp_path_factory) -> tuple[Path, Path]:
    """An index of the issue's five sets plus three added (so it holds added tokens and a joined document)."""
    d = tmp_path_factory.mktemp("index")
    (d / "s1.sets").write_text(SETS)
    (d / "more.sets").write_text(ADDED)
    assert program("index", "build", "--sets", "-t", "0.5", d / "s1.sets", "-o", d / "s1.idx", "-q").returncode == 0
    assert program("index", "add", d / "s1.idx", "--sets", d / "more.sets", "-q").returncode == 0
    return d / "s1.idx", d / "s1.sets"


class Crafted:
    """An index file's bytes, its header and array views that may be changed, then re-signed."""

    def __init__(self, data: bytes):
        self.buf = bytearray(data)
        _, _, self.room, _ = PREAMBLE.unpack_from(self.buf)
        self.header = json.loads(bytes(self.buf[56:56 + self.room]))
        self.raw_header: bytes | None = None
        self.room_field: int | None = None

    def array(self, name: str) -> np.ndarray:
        spec = self.header["arrays"][name]
        count = int(np.prod(spec["shape"]))
        return np.frombuffer(self.buf, np.dtype(spec["dtype"]), count, spec["offset"]).reshape(spec["shape"])

    def signed(self) -> bytes:
        text = self.raw_header if self.raw_header is not None else json.dumps(self.header).encode()
        assert len(text) <= self.room, "the crafted header must fit in the room of the original"
        self.buf[56:56 + self.room] = text.ljust(self.room)
        digest = hashlib.sha256(self.buf[56:]).digest()
        room = self.room if self.room_field is None else self.room_field
        PREAMBLE.pack_into(self.buf, 0, MAGIC, FORMAT, room, digest)
        return bytes(self.buf)


def _set(path: list, value):
    """A change of one header field (``path`` of keys from the header's top)."""
    def change(c: Crafted):
        node = c.header
        for key in path[:-1]:
            node = node[key]
        if value is KeyError:
            del node[path[-1]]
        else:
            node[path[-1]] = value
    return change


def _put(name: str, index, value):
    def change(c: Crafted):
        c.array(name)[index] = value
    return change


def _raw(text: bytes):
    def change(c: Crafted):
        c.raw_header = text
    return change


def _room(n: int):
    def change(c: Crafted):
        c.room_field = n
    return change


def _swap_tokens(c: Crafted):
    t = c.array("tokens")
    t[0], t[1] = t[1], t[0]


ARRAY_NAMES = ("slot_keys", "lookup_keys", "lookup_ranks", "indptr", "tokens", "set_doc_ptr", "set_docs", "id_ptr",
               "id_bytes", "list_ptr", "post")


def _table_cases():
    """Every array's table entry with a wrong dtype, shape and offset, and missing; rarer kinds of each,
    one array apiece in turn."""
    cases = {}
    rare = [("big-endian dtype", "dtype", ">i4"), ("object dtype", "dtype", "|O"), ("negative shape", "shape", [-1]),
            ("three dimensions", "shape", [1, 1, 1]), ("negative offset", "offset", -64),
            ("offset in the header", "offset", 64)]
    for k, name in enumerate(ARRAY_NAMES):
        cases[f"{name}: float dtype"] = _set(["arrays", name, "dtype"], "<f8")
        cases[f"{name}: huge shape"] = _set(["arrays", name, "shape"], [2**40])
        cases[f"{name}: offset past the end"] = _set(["arrays", name, "offset"], 1 << 40)
        cases[f"{name}: missing"] = _set(["arrays", name], KeyError)
        what, field, value = rare[k % len(rare)]
        cases[f"{name}: {what}"] = _set(["arrays", name, field], value)
    cases["post: one dimension"] = lambda c: c.header["arrays"]["post"].update(
        shape=[c.header["arrays"]["post"]["shape"][0] * 3])
    cases["an unknown array"] = lambda c: c.header["arrays"].update(extra=dict(c.header["arrays"]["id_bytes"]))
    return cases


CASES = {
    # The issue's case: a posting's set id far below zero read and wrote count[y] (SIGSEGV).
    "post: set id -100000000": _put("post", (0, 0), -100000000),
    "post: set id = number of sets": lambda c: c.array("post").__setitem__((0, 0), len(c.array("indptr")) - 1),
    "post: negative position": _put("post", (0, 1), -1),
    "post: position past the set": _put("post", (0, 1), 1000),
    "post: wrong set size": _put("post", (0, 2), 99),
    "post: a position of its set that holds another token": lambda c: c.array("post").__setitem__(
        (int(np.flatnonzero((c.array("post")[:, 2] == 4) & (c.array("post")[:, 1] == 0))[0]), 1), 1),
    "post: size out of order": lambda c: c.array("post").__setitem__((slice(0, 2), 2), [9, 1]),
    "list_ptr: negative": _put("list_ptr", 1, -5),
    "list_ptr: end past the postings": _put("list_ptr", -1, 10**12),
    "list_ptr: start not zero": _put("list_ptr", 0, 1),
    "indptr: huge": _put("indptr", 1, 10**12),
    "indptr: falls": _put("indptr", 2, 0),
    "tokens: rank past the vocabulary": lambda c: c.array("tokens").__setitem__(0, c.header["meta"]["v0"] + 5),
    "tokens: rank below every added one": _put("tokens", 0, -(2**31)),
    "tokens: out of order within a set": _swap_tokens,
    "lookup_ranks: out of range": _put("lookup_ranks", 0, 2**31 - 1),
    "lookup_ranks: negative": _put("lookup_ranks", 0, -1000),
    "lookup_keys: unsorted": lambda c: c.array("lookup_keys").__setitem__(0, 2**64 - 1),
    "slot_keys: not the looked-up key": _put("slot_keys", 0, 12345),
    "set_docs: out of range": _put("set_docs", 0, 10**6),
    "set_docs: negative": _put("set_docs", 0, -1),
    "set_docs: a document twice": lambda c: c.array("set_docs").__setitem__(1, c.array("set_docs")[0]),
    "set_doc_ptr: falls": _put("set_doc_ptr", 1, 0),
    "set_doc_ptr: past the members": _put("set_doc_ptr", -1, 10**9),
    "id_ptr: past the id bytes": _put("id_ptr", -1, 10**9),
    "id_ptr: negative": _put("id_ptr", 1, -3),
    "meta: q = 0": _set(["meta", "q"], 0),
    "meta: q negative": _set(["meta", "q"], -2),
    "meta: p = 0": _set(["meta", "p"], 0),
    "meta: p > q": _set(["meta", "p"], 3),
    "meta: huge p": _set(["meta", "p"], 10**40),
    "meta: p a string": _set(["meta", "p"], "1"),
    "meta: p a float": _set(["meta", "p"], 0.5),
    "meta: p a boolean": _set(["meta", "p"], True),
    "meta: p missing": _set(["meta", "p"], KeyError),
    "meta: denominator over 10**9": lambda c: c.header["meta"].update(p=1, q=10**10),
    "meta: not in lowest terms": lambda c: c.header["meta"].update(p=2, q=4),
    "meta: unknown measure": _set(["meta", "measure"], "bogus"),
    "meta: measure a list": _set(["meta", "measure"], ["jaccard"]),
    "meta: label word:0": _set(["meta", "label"], "word:0"),
    "meta: label a number": _set(["meta", "label"], 5),
    "meta: normalize a string": _set(["meta", "normalize"], "yes"),
    "meta: min_shingles negative": _set(["meta", "min_shingles"], -1),
    "meta: v0 negative": _set(["meta", "v0"], -1),
    "meta: v0 past the vocabulary": _set(["meta", "v0"], 10**6),
    "meta: v0 huge": _set(["meta", "v0"], 10**30),
    "meta: key version": _set(["meta", "key_version"], 99),
    "meta: a list": _set(["meta"], [1, 2]),
    "header: total_bytes a string": _set(["total_bytes"], "5072"),
    "header: arrays a list": _set(["arrays"], []),
    "header: a list": _raw(b"[1, 2, 3]"),
    "header: JSON nested 2,000 deep": _raw(b"[" * 2000 + b"]" * 2000),
    "header: not UTF-8": _raw(b'{"meta": "\xff\xfe"}'),
    "header: length past the file": _room(2**31),
    **_table_cases(),
}


def _crafted_files(index_file, directory: Path) -> list[tuple[str, Path]]:
    src = index_file.read_bytes()
    out = []
    for k, (name, change) in enumerate(CASES.items()):
        c = Crafted(src)
        change(c)
        path = directory / f"evil{k}.idx"
        path.write_bytes(c.signed())
        out.append((name, path))
    return out


#: Runs the program once per command line, each in a process of its own forked from one that has
#: imported allpairs already (a real run of ``allpairs.__main__.main`` with its signal set-up, at a
#: fraction of an interpreter's start-up); prints each run's exit status, signal and stderr as JSON.
FORKED_RUNS = r"""
import json, os, sys, tempfile
import numpy, allpairs.cli, allpairs.index.files, allpairs.index.search
from allpairs.__main__ import main

results = []
for argv in json.loads(sys.argv[1]):
    err = tempfile.TemporaryFile()
    sys.stdout.flush(); sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        os.dup2(err.fileno(), 2)
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        sys.argv = ["allpairs", *argv]
        code = 0
        try:
            main()
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        except BaseException:
            import traceback
            traceback.print_exc()
            code = 99
        sys.stderr.flush()
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    err.seek(0)
    results.append({"argv": argv, "status": os.waitstatus_to_exitcode(status),
                    "stderr": err.read().decode("utf-8", "replace")})
print(json.dumps(results))
"""


def forked_runs(argvs: list[list[str]]) -> list[dict]:
    """Each command line run as the program, in a process of its own (see :data:`FORKED_RUNS`)."""
    r = subprocess.run([sys.executable, "-c", FORKED_RUNS, json.dumps([[str(a) for a in argv] for argv in argvs])],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout)


def test_a_crafted_re_signed_index_is_refused_in_one_line_never_a_signal(index_file, tmp_path):
    idx, sets = index_file
    files = _crafted_files(idx, tmp_path)
    before = {path: path.read_bytes() for _, path in files}
    argvs = [command for _, path in files
             for command in (["index", "query", path, "--sets", sets], ["index", "add", path, "--sets", sets])]
    outcomes = forked_runs(argvs)
    names = {str(path): name for name, path in files}
    bad = []
    for run in outcomes:
        lines = run["stderr"].splitlines()
        if run["status"] != 1 or len(lines) != 1 or not lines[0].startswith("allpairs: error: index ") \
                or "Traceback" in run["stderr"]:
            bad.append(f"{names[run['argv'][2]]} ({run['argv'][1]}): status {run['status']}, "
                       f"stderr {run['stderr'][-300:]!r}")
    assert not bad, f"{len(bad)} of {len(outcomes)} runs (a negative status is a signal):\n" + "\n".join(bad)
    assert len(outcomes) == 2 * len(CASES)
    assert all(path.read_bytes() == data for path, data in before.items()), "a crafted file was changed"


COLUMN_CASES = {
    "column0_ptr: past the bytes": _put("column0_ptr", -1, 10**9),
    "column0_ptr: falls": _put("column0_ptr", 2, 0),
    "column0_ptr: missing": _set(["arrays", "column0_ptr"], KeyError),
    "column0_bytes: wrong dtype": _set(["arrays", "column0_bytes", "dtype"], "<i8"),
    "meta: columns not a list": _set(["meta", "columns"], "text"),
    "meta: a column named twice": _set(["meta", "columns"], ["text", "text"]),
    "meta: a column more than the arrays": _set(["meta", "columns"], ["text", "other"]),
}


def test_a_crafted_index_with_carried_columns_is_refused_in_one_line(tmp_path):
    # An index of texts carries each line (the "text" column) beside its ids: its arrays are checked too.
    (tmp_path / "s1.txt").write_text(SETS)
    idx = tmp_path / "s1.idx"
    assert program("index", "build", "--lines", "-s", "word:1", "-t", "0.5", tmp_path / "s1.txt", "-o", idx,
                   "-q").returncode == 0
    argvs, names = [], {}
    for k, (name, change) in enumerate(COLUMN_CASES.items()):
        c = Crafted(idx.read_bytes())
        change(c)
        path = tmp_path / f"evil{k}.idx"
        path.write_bytes(c.signed())
        names[str(path)] = name
        argvs.append(["index", "query", path, "--lines", tmp_path / "s1.txt"])
    bad = [f"{names[r['argv'][2]]}: status {r['status']}, stderr {r['stderr'][-300:]!r}" for r in forked_runs(argvs)
           if r["status"] != 1 or not re.fullmatch(r"allpairs: error: index \S+ is damaged \(.*\); build it again\n",
                                                    r["stderr"])]
    assert not bad, "\n".join(bad)


def test_the_issue_crafted_posting_no_longer_crashes_and_names_the_array(index_file, tmp_path):
    idx, sets = index_file
    c = Crafted(idx.read_bytes())
    c.array("post")[0, 0] = -100000000
    evil = tmp_path / "evil.idx"
    evil.write_bytes(c.signed())
    last = len(c.array("indptr")) - 2  # the last set
    r = program("index", "query", evil, "--sets", sets)
    assert r.returncode == 1 and r.stderr == (
        f"allpairs: error: index {evil} is damaged (the set of a posting holds -100,000,000, outside 0 .. {last}); "
        "build it again\n")


@pytest.mark.kernel_paths("compiled", "python")
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(changes=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), min_size=1, max_size=4))
def test_any_re_signed_change_of_the_arrays_is_refused_or_loads_an_index_that_works(index_file, changes,
                                                                                      tmp_path_factory):
    # Random bytes changed anywhere after the header, the file re-signed: either the loader refuses it
    # in its own words, or what it loads answers queries and grows without any other exception.
    idx, sets = index_file
    c = Crafted(idx.read_bytes())
    start = 56 + c.room
    for at, value in changes:
        c.buf[start + at % (len(c.buf) - start)] = value
    path = tmp_path_factory.mktemp("fuzz") / "f.idx"
    path.write_bytes(c.signed())
    try:
        index = SearchIndex.load(path)
    except IndexFileError:
        return
    queries = [line.split() for line in SETS.splitlines()]
    index.query(queries)
    index.add([["a", "b", "c"], ["new", "tokens"]], ids=["added 1", "added 2"])  # ids no line number clashes with
    index.query(queries)
    index.save(path)
    SearchIndex.load(path)


def test_every_valid_index_passes_the_checks_after_builds_and_adds(tmp_path):
    # Many adds (with merges at every size), identical sets, added tokens: the checks refuse none of them.
    rng = np.random.default_rng(5)
    docs = [[f"t{int(x)}" for x in rng.zipf(1.5, size=rng.integers(1, 8))] for _ in range(400)]
    index = SearchIndex.build(docs[:50], 0.6)
    path = tmp_path / "i.idx"
    for k in range(50, 400, 35):
        index.add(docs[k:k + 35] + docs[:3])
        index.save(path)
        index = SearchIndex.load(path)
    assert index.num_docs == 400 + 10 * 3


def test_a_fifo_given_as_index_is_refused_at_once(tmp_path):
    fifo = tmp_path / "fifo.idx"
    os.mkfifo(fifo)
    (tmp_path / "q.sets").write_text("a b\n")
    for command in (["index", "query", fifo, "--sets", tmp_path / "q.sets"],
                    ["index", "add", fifo, "--sets", tmp_path / "q.sets"]):
        r = program(*command, timeout=60)  # before the fix: blocked forever opening the FIFO
        assert r.returncode == 1 and r.stderr == f"allpairs: error: index {fifo} is a FIFO, not an index file; " \
                                                 "give the file 'allpairs index build' wrote\n"


def test_a_device_given_as_index_is_refused(tmp_path):
    (tmp_path / "q.sets").write_text("a b\n")
    r = program("index", "query", "/dev/zero", "--sets", tmp_path / "q.sets", timeout=60)
    assert r.returncode == 1 and "is a character device, not an index file" in r.stderr


def _documents(path: Path, prefix: str, n: int) -> None:
    path.write_text("".join(f"{prefix}{k} {prefix}{k + 1} {prefix}{k + 2} common\n" for k in range(n)))


def test_two_runs_adding_to_one_index_at_once_keep_both_runs_documents(tmp_path):
    # Each run loads the index, adds, and renames its result over the file: without a lock the second
    # rename drops the first run's documents, and both exit 0.
    (tmp_path / "base.sets").write_text("a b c\n")
    idx = tmp_path / "i.idx"
    assert program("index", "build", "--sets", "-t", "0.5", tmp_path / "base.sets", "-o", idx, "-q").returncode == 0
    _documents(tmp_path / "one.sets", "x", 3000)
    _documents(tmp_path / "two.sets", "y", 3000)
    holder = os.open(idx, os.O_RDONLY)
    fcntl.flock(holder, fcntl.LOCK_EX)  # a third party holds the index: both runs must wait for it
    try:
        runs = [subprocess.Popen([sys.executable, "-m", "allpairs", "index", "add", str(idx), "--sets",
                                  str(tmp_path / f"{which}.sets")], stderr=subprocess.PIPE, text=True)
                for which in ("one", "two")]
        waited = []
        for run in runs:
            deadline = time.monotonic() + 60
            line = ""
            while run.poll() is None and time.monotonic() < deadline and "waiting" not in line:
                line = run.stderr.readline()
            waited.append(line.strip())
    finally:
        fcntl.flock(holder, fcntl.LOCK_UN)
        os.close(holder)
    for run in runs:
        run.communicate(timeout=120)
        assert run.returncode == 0
    assert waited == [f"allpairs: waiting for another run to finish with {idx}"] * 2
    index = SearchIndex.load(idx)
    assert index.num_docs == 1 + 3000 + 3000
    found = index.query([["x0", "x1", "x2", "common"], ["y2999", "y3000", "y3001", "common"]], 1)
    assert [m.query for m in found] == [0, 1]


def test_runs_adding_to_one_index_side_by_side_lose_nothing(tmp_path):
    (tmp_path / "base.sets").write_text("a b c\n")
    idx = tmp_path / "i.idx"
    assert program("index", "build", "--sets", "-t", "0.5", tmp_path / "base.sets", "-o", idx, "-q").returncode == 0
    for which in "pqr":
        _documents(tmp_path / f"{which}.sets", which, 2000)
    runs = [subprocess.Popen([sys.executable, "-m", "allpairs", "index", "add", str(idx), "--sets",
                              str(tmp_path / f"{which}.sets"), "-q"]) for which in "pqr"]
    assert [run.wait(timeout=300) for run in runs] == [0, 0, 0]
    index = SearchIndex.load(idx)
    assert index.num_docs == 1 + 3 * 2000
    assert len(index.query([[f"{w}5", f"{w}6", f"{w}7", "common"] for w in "pqr"], 1)) == 3
