"""The kernels compiled ahead of time (allpairs._kernels.aot): matched by exact types, found only for current sources,
and giving the same output as numba's JIT without loading numba."""
from __future__ import annotations

import importlib
import inspect
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numba
import numpy as np
import pytest

from allpairs._kernels import aot as _aot
from allpairs._kernels.jit import Kernel

REPO = Path(__file__).resolve().parents[1]

MATCHED = [
    np.zeros(3, np.int64), np.zeros(3, np.uint64), np.zeros(3, np.int32), np.zeros(3, np.uint32),
    np.zeros(3, np.int8), np.zeros(3, np.uint8), np.zeros(3, np.int16), np.zeros(3, np.float64),
    np.zeros(3, np.float32), np.zeros(3, bool), np.zeros(0, np.int64), np.zeros((2, 3), np.int32),
    np.zeros((2, 3), np.int32, order="F"), np.zeros((4, 4), bool)[:, ::2], np.zeros(8, np.int64)[::2],
    np.zeros((2, 3), np.uint64).T, np.frombuffer(b"abc", np.uint8), np.zeros(1, np.int64)[0:1],
    0, -5, 2**63 - 1, -(2**63), 2**63, 2**64 - 1, True, False, np.True_, 1.5, np.int32(3), np.uint64(7),
    np.int64(-1), np.float64(2.0), np.uint8(1), None,
]
NOT_MATCHED = [
    np.zeros(3, ">i8"), np.zeros(3, object), np.zeros(3, "U2"), np.zeros(3, np.complex128),
    np.frombuffer(b"\0" * 17, np.uint8)[1:].view(np.int64), 2**64, -(2**63) - 1, [1, 2], "a", (1, 2),
]


@pytest.mark.parametrize("value", MATCHED, ids=lambda v: f"{type(v).__name__}:{getattr(v, 'dtype', v)!s}")
def test_type_names_are_numbas_own(value):
    name = _aot.type_name(value)
    assert name == str(numba.typeof(value))
    assert _aot.numba_type(name) == numba.typeof(value)


@pytest.mark.parametrize("value", NOT_MATCHED, ids=lambda v: f"{type(v).__name__}:{getattr(v, 'dtype', '')!s}")
def test_values_of_other_kinds_are_left_to_numba(value):
    assert _aot.type_name(value) is None


def test_tuple_and_return_types_read_back():
    for name in ["Tuple(array(int64, 1d, C), array(int32, 2d, C), int64)", "UniTuple(array(uint64, 1d, C) x 2)",
                 "none", "readonly array(uint8, 1d, A)", "bool"]:
        assert str(_aot.numba_type(name)) == name


def test_every_signature_names_a_kernel_and_reads_back():
    lines = _aot.read_signatures()
    assert len(lines) >= 30 and lines == sorted(set(lines))
    for line in lines:
        module, qualname, args, returns = _aot.parse_line(line)
        kernel = getattr(importlib.import_module(module), qualname)
        assert isinstance(kernel, Kernel), line
        assert len(inspect.signature(kernel.py_func).parameters) == len(args), \
            f"{line}: the kernel's arguments changed; re-run scripts/record_kernel_signatures.py"
        assert _aot.signature_line(module, qualname, args, returns) == line
        for name in (*args, returns):
            assert str(_aot.numba_type(name)) == name, line


def test_the_digest_covers_every_kernel_module():
    names = {p.relative_to(_aot.PACKAGE_ROOT).as_posix() for p in _aot.kernel_sources()}
    assert {"shingles/_hash_kernel.py", "_kernels/mix.py", "exact/_kernel.py", "lsh/_kernel.py", "index/_kernel.py"} <= names
    assert "_kernels/jit.py" not in names and "pipeline/__init__.py" not in names


def test_a_changed_kernel_source_matches_no_built_function(tmp_path):
    root = tmp_path / "allpairs"
    shutil.copytree(_aot.PACKAGE_ROOT, root, ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    before = _aot.source_digest(root)
    assert before == _aot.source_digest(_aot.PACKAGE_ROOT)
    path = root / "verify" / "_kernel.py"
    path.write_text(path.read_text() + "\n# a change\n")
    after = _aot.source_digest(root)
    assert after != before
    line = _aot.read_signatures()[0]
    assert _aot.symbol(after, line) != _aot.symbol(before, line)


def test_the_table_is_empty_when_sources_changed(monkeypatch):
    monkeypatch.setattr(_aot, "stamped", lambda *args: None)  # no stamp matches changed sources
    monkeypatch.setattr(_aot, "source_digest", lambda root=None: "0" * 64)
    assert _aot._Table._load() == {}


def test_a_stamp_gives_the_digest_and_names_until_a_kernel_source_changes(tmp_path):
    root = tmp_path / "allpairs"
    shutil.copytree(_aot.PACKAGE_ROOT, root, ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.stamp"))
    stamp = tmp_path / "stamp"
    digest = _aot.write_stamp(tmp_path, root)
    (tmp_path / _aot.STAMP_NAME).rename(stamp)
    assert digest == _aot.source_digest(root) == _aot.source_digest(_aot.PACKAGE_ROOT)
    got, names = _aot.stamped(root, stamp)
    assert got == digest
    assert names == {line: _aot.symbol(digest, line) for line in _aot.read_signatures()}
    path = root / "verify" / "_kernel.py"
    st = path.stat()
    text = path.read_bytes()
    # The same bytes written anew (as pip install writes every file): trusted by their CRC-32.
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1))
    assert _aot.stamped(root, stamp) == (digest, names)
    # Other bytes of the same size at another time: not trusted.
    changed = text.replace(b"def ", b"def_", 1)
    assert len(changed) == len(text) and changed != text
    path.write_bytes(changed)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 2))
    assert _aot.stamped(root, stamp) is None
    path.write_bytes(text)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert _aot.stamped(root, stamp) is not None
    path.write_text(path.read_text() + "\n# a change\n")
    assert _aot.stamped(root, stamp) is None
    path.unlink()
    assert _aot.stamped(root, stamp) is None
    assert _aot.stamped(root, tmp_path / "no such stamp") is None


def test_a_stamp_without_crc_lines_trusts_modification_times_only(tmp_path):
    root = tmp_path / "allpairs"
    shutil.copytree(_aot.PACKAGE_ROOT, root, ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.stamp"))
    _aot.write_stamp(tmp_path, root)
    stamp = tmp_path / _aot.STAMP_NAME
    # A stamp of an earlier build: no crc32 lines.
    stamp.write_text("".join(line + "\n" for line in stamp.read_text().splitlines() if not line.startswith("crc32 ")))
    assert _aot.stamped(root, stamp) is not None
    path = root / "verify" / "_kernel.py"
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1))
    assert _aot.stamped(root, stamp) is None


def test_the_install_stamps_the_kernel_sources_it_built():
    if not _built():
        pytest.skip("the install could not compile the kernels (no C compiler?)")
    digest, names = _aot.stamped()
    assert digest == _aot.source_digest()
    assert names == {line: _aot.symbol(digest, line) for line in _aot.read_signatures()}


def _built() -> bool:
    try:
        importlib.import_module(_aot.MODULE)
        return True
    except ImportError:
        return False


RUN = """
import hashlib, sys
import allpairs
from allpairs.corpus import read_sets
res = allpairs.join(read_sets(sys.argv[1]), threshold=0.5)
pairs = sorted(map(tuple, res.pairs))
print(len(pairs), hashlib.sha256(repr(pairs).encode()).hexdigest(), "numba" in sys.modules)
"""


def test_a_join_runs_the_built_kernels_without_numba_and_matches_the_jit(shared_datasets, tmp_path):
    if not _built():
        if shutil.which("cc") is None and shutil.which("gcc") is None:
            pytest.skip("no C compiler here, so the install could not build the ahead-of-time kernels")
        pytest.fail("a C compiler is here but allpairs._kernels.compiled was not built: reinstall (pip install -e .) "
                    "and read its warning")
    f = tmp_path / "k.dat"
    f.write_text("".join(open(shared_datasets / "kosarak-sample.dat").readlines()[:8000]))
    out = {}
    for mode in ("compiled", "jit"):
        r = subprocess.run([sys.executable, "-c", RUN, str(f)], capture_output=True, text=True, cwd=REPO,
                           env={**os.environ, "ALLPAIRS_KERNELS": mode}, timeout=600)
        assert r.returncode == 0, r.stderr
        out[mode] = r.stdout.split()
    assert out["compiled"][:2] == out["jit"][:2] and int(out["jit"][0]) > 1000
    assert out["compiled"][2] == "False", "the built kernels should have served every call"
    assert out["jit"][2] == "True"


CLI = """
import sys
from allpairs.__main__ import main
sys.argv = ["allpairs", *sys.argv[1:]]
try:
    main()
finally:
    sys.stderr.write("numba imported: %s\\n" % ("numba" in sys.modules))
"""


@pytest.mark.parametrize("args", [
    ["join", "--sets", "{kosarak}", "-t", "0.5", "-o", "{out}"],
    ["join", "--sets", "{kosarak}", "-t", "0.5", "--method", "lsh", "--count"],
    ["join", "--lines", "{passwords}", "-t", "0.6", "-s", "char:2", "--count"],
    ["join", "-t", "0.5", "-s", "code:5", "--count", "{go}"],
    ["join", "-t", "0.5", "-s", "code:5", "--count", "--include", "*.py", "{repo}/allpairs"],
    ["join", "-t", "0.5", "-s", "code:5", "--count", "{repo}/datasets/tiny"],
    ["join", "-t", "0.5", "-s", "code:5", "--count", "{repo}/datasets"],
    ["dedup", "--sets", "{kosarak}", "-t", "0.8"],
    ["compare", "--sets", "{kosarak}", "-t", "0.5"],
    ["index", "build", "--sets", "{kosarak}", "-t", "0.5", "-o", "{out}"],
    ["index", "query", "{index}", "--sets", "{kosarak}", "-t", "0.9", "--count"],
    ["index", "add", "{index}", "--sets", "{kosarak}"],
], ids=["exact-sets-tsv", "lsh-sets", "char-lines", "go-code", "python-code", "c-code", "mixed-code", "dedup",
        "compare", "index-build", "index-query", "index-add"])
def test_the_usual_commands_are_served_by_the_built_kernels_alone(args, request, tmp_path):
    # A kernel whose arguments changed type would fall back to numba: correct, but a second slower.
    if not _built():
        pytest.skip("the ahead-of-time kernels are not built here (see the test above)")
    # Each case asks only for the data it reads (Kosarak lives in the shared data folder alone).
    data = {"kosarak": lambda: request.getfixturevalue("shared_datasets") / "kosarak-sample.dat",
            "passwords": lambda: request.getfixturevalue("john_passwords_file"),
            "go": lambda: request.getfixturevalue("any_go_src") / "strings"}
    values = {name: get() for name, get in data.items() if any("{" + name + "}" in a for a in args)}
    values.update(out=tmp_path / "out.tsv", repo=REPO, index=tmp_path / "k.idx")
    if "{index}" in args:  # an index to query or grow, built (as ever) by the built kernels
        subprocess.run([sys.executable, "-m", "allpairs", "index", "build", "--sets", str(values["kosarak"]), "-t",
                        "0.5", "-o", str(values["index"]), "-q"], check=True, timeout=600)
    argv = [a.format(**values) for a in args]
    r = subprocess.run([sys.executable, "-c", CLI, *argv, "-q"], capture_output=True, text=True, cwd=REPO,
                       env={**os.environ, "ALLPAIRS_KERNELS": "compiled"}, timeout=600)
    assert r.returncode == 0, r.stderr
    assert r.stderr.strip().endswith("numba imported: False"), (
        f"{r.stderr}: a kernel met argument types that were not built; re-run scripts/record_kernel_signatures.py")


CPUINFO = "processor\t: 0\nvendor_id\t: GenuineIntel\nflags\t\t: fpu sse2 {}\nbugs\t\t: spectre_v1\n"


def test_the_wide_build_is_used_only_on_a_cpu_with_every_x86_64_v3_feature():
    every = sorted(_aot.WIDE_FLAGS)
    assert _aot.wide_cpu(CPUINFO.format(" ".join(every)))
    for missing in every:
        assert not _aot.wide_cpu(CPUINFO.format(" ".join(f for f in every if f != missing))), missing
    assert not _aot.wide_cpu("processor\t: 0\n")  # no flags line at all (another architecture's file)
    assert not _aot.wide_cpu(CPUINFO.format("avx2_like fma3"))  # names match whole words only


def _both_builds():
    """The baseline's modules and the wide one, or the test skipped where the wide build is not used or built."""
    if not _aot.wide_cpu():
        pytest.skip("this CPU lacks x86-64-v3 features: the wide build is not used here")
    try:
        return [importlib.import_module(m) for m in _aot.BASELINE_MODULES], importlib.import_module(_aot.WIDE_MODULE)
    except ImportError:
        if not _built():
            pytest.skip("the ahead-of-time kernels were not built here (see the test above)")
        pytest.fail("allpairs._kernels.compiled was built but allpairs._kernels.compiled_wide was not: reinstall")


def test_the_wide_minhash_gives_the_baselines_signatures(shared_datasets):
    # Both builds of the same kernel, called directly, on real sets (Kosarak) and empty ones.
    bases, wide = _both_builds()
    from allpairs.lsh.minhash import permutation_params
    from allpairs.shingles import hash_sets

    lines = open(shared_datasets / "kosarak-sample.dat").read().splitlines()[:3000]
    indptr, keys = hash_sets([ln.split() for ln in lines] + [[], []])
    a, b = permutation_params(64, 7)
    digest = _aot.source_digest()
    checked = 0
    for line in _aot.read_signatures():
        module, qualname, args, _ = _aot.parse_line(line)
        if (module, qualname) not in _aot.WIDE_KERNELS or args[-1] != "array(uint32, 2d, C)":
            continue
        outs = []
        base = next(m for m in bases if hasattr(m, _aot.symbol(digest, line)))  # the baseline is built in parts
        for built in (base, wide):
            out = np.zeros((len(indptr) - 1, 64), np.uint32)
            getattr(built, _aot.symbol(digest, line))(indptr, keys, a, b, np.uint32(0xFFFFFFFF),
                                                      np.uint32(0xFFFFFFFF), out)
            outs.append(out)
        assert (outs[0] == outs[1]).all() and (outs[0][-1] == 0xFFFFFFFF).all()
        checked += 1
    assert checked == 1


def test_the_wide_bitmaps_give_the_baselines_and_the_plain_functions_signatures(shared_datasets):
    # Both builds of the set signatures (the join's bitmap filter), called directly, on real sets (Kosarak, of
    # every length the loop may be cut at), negative tokens and empty sets, writable arrays or read-only ones.
    bases, wide = _both_builds()
    from allpairs.verify._kernel import bitmaps

    lines = (shared_datasets / "kosarak-sample.dat").read_text().splitlines()[:3000]
    sets = [[int(w) for w in ln.split()] for ln in lines] + [[], list(range(-40, 40, 3)), [-(1 << 31)], []]
    indptr = np.cumsum([0] + [len(s) for s in sets]).astype(np.int64)
    tokens = np.array([w for s in sets for w in s], np.int32)
    with np.errstate(over="ignore"):  # the hash wraps modulo 2**64, as the kernel's plain path lets it
        expected = bitmaps.py_func(indptr, tokens)
    digest = _aot.source_digest()
    checked = 0
    for line in _aot.read_signatures():
        module, qualname, args, _ = _aot.parse_line(line)
        if (module, qualname) != ("allpairs.verify._kernel", "bitmaps"):
            continue
        a, b = indptr.copy(), tokens.copy()
        if args[0].startswith("readonly"):
            a.setflags(write=False)
            b.setflags(write=False)
        base = next(m for m in bases if hasattr(m, _aot.symbol(digest, line)))
        for built in (base, wide):
            assert (getattr(built, _aot.symbol(digest, line))(a, b) == expected).all()
        checked += 1
    assert checked == 2
