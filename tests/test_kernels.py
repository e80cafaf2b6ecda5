"""How kernels run: compiled by numba or as plain Python (allpairs._kernels.jit), and that both print the same bytes."""
from __future__ import annotations

import importlib
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from allpairs._kernels import jit as _numba
from allpairs.shingles._hash_kernel import xxh64, xxh64_spans
from allpairs._kernels.jit import kernel_mode, kernels_for, use_kernels
from allpairs.cli import app
from allpairs.errors import UsageError

REPO = Path(__file__).resolve().parents[1]
TINY = REPO / "datasets" / "tiny" / "corpus"


def run_both(*args) -> dict[str, str]:
    """stdout of one ``allpairs`` command line with the kernels compiled and as plain Python."""
    out = {}
    for mode in ("compiled", "python"):
        with use_kernels(mode):
            r = CliRunner().invoke(app, [str(a) for a in args], prog_name="allpairs")
        assert r.exit_code == 0, (mode, r.stderr)
        out[mode] = r.stdout
    return out


def python(code: str, **env) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter (numba not yet imported) with ``env`` added."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO,
                          env={**os.environ, **env}, timeout=300)


@pytest.mark.parametrize("fmt", ["tsv", "csv", "jsonl"])
def test_tiny_corpus_prints_the_same_bytes_either_way(fmt):
    out = run_both("join", "-t", "0.5", "-s", "word:1", "--format", fmt, TINY)
    assert out["compiled"] == out["python"] and out["compiled"].count("\n") >= 10


@pytest.mark.parametrize("args", [["-t", "0.7"], ["-t", "0.5", "--measure", "cosine"],
                                  ["-t", "0.6", "--method", "lsh", "--clusters"]])
def test_passwords_print_the_same_bytes_either_way(john_passwords_file, args):
    out = run_both("join", "--lines", john_passwords_file, *args)
    assert out["compiled"] == out["python"] and out["compiled"]


def test_a_kosarak_subsample_prints_the_same_bytes_either_way(shared_datasets, tmp_path):
    seen, lines = set(), []
    with open(shared_datasets / "kosarak-sample.dat", encoding="ascii") as f:
        for line in f:
            if frozenset(line.split()) not in seen:
                seen.add(frozenset(line.split()))
                lines.append(line)
            if len(lines) == 400:
                break
    path = tmp_path / "k400.sets"
    path.write_text("".join(lines), encoding="ascii")
    out = run_both("join", "--sets", path, "-t", "0.5", "--format", "csv")
    assert out["compiled"] == out["python"] and out["compiled"].count("\n") > 1000


def test_go_readers_print_the_same_bytes_either_way(go_reference_src):
    out = run_both("join", "-t", "0.5", "--include", "/bytes/reader.go", "--include", "/strings/reader.go",
                   "-s", "code:5", "--format", "csv", go_reference_src)
    assert out["compiled"] == out["python"]
    assert out["compiled"].splitlines()[1] == "bytes/reader.go,strings/reader.go,0.687407,464,580,559"


def test_auto_runs_plain_python_only_inside_a_small_scope():
    with use_kernels("auto"):
        assert kernel_mode() == "compiled"  # a direct kernel call (a Spark worker, a script)
        with kernels_for(100):
            assert kernel_mode() == "python"
            with kernels_for(_numba.PLAIN_BELOW):
                assert kernel_mode() == "compiled"
            with kernels_for(None):  # size unknown (stdin)
                assert kernel_mode() == "compiled"
            assert kernel_mode() == "python"
        assert kernel_mode() == "compiled"
    with use_kernels("compiled"), kernels_for(100):
        assert kernel_mode() == "compiled"
    with use_kernels("python"), kernels_for(10**12):
        assert kernel_mode() == "python"


def test_a_kernel_gives_the_same_value_either_way_and_calls_kernels_compiled():
    buf = np.frombuffer(b"the quick brown fox jumps over the lazy dog", np.uint8)
    offsets = np.array([0, 3, 4, 9, 10, 43], np.int64)
    got = {}
    for mode in ("compiled", "jit", "python"):  # compiled: ahead of time where built; jit: by numba
        with use_kernels(mode):
            got[mode] = (int(xxh64(buf, 0, len(buf), np.uint64(7))), xxh64_spans(buf, offsets, np.uint64(0)).tolist())
    assert got["compiled"] == got["jit"] == got["python"]
    assert xxh64_spans.dispatcher.signatures  # jit: it calls xxh64 through its module's global


def test_compiled_kernels_release_the_gil_and_are_cached():
    assert xxh64.dispatcher.targetoptions["nogil"] and type(xxh64.dispatcher._cache).__name__ == "FunctionCache"


def test_a_kernel_pickles_by_name():
    assert pickle.loads(pickle.dumps(xxh64_spans)) is xxh64_spans


def test_an_unknown_mode_is_a_usage_error():
    with pytest.raises(UsageError, match="ALLPAIRS_KERNELS='fast' is not one of auto, compiled, jit, python"):
        with use_kernels("fast"):
            pass


def test_an_unknown_mode_in_the_environment_is_one_line_and_exit_2():
    r = subprocess.run([sys.executable, "-m", "allpairs", "join", "-t", "0.5", str(TINY)], capture_output=True,
                       text=True, env={**os.environ, "ALLPAIRS_KERNELS": "fast"}, timeout=300)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == ("allpairs: error: ALLPAIRS_KERNELS='fast' is not one of auto, compiled, jit, python; "
                        "leave it unset (auto) or give one of them\n")


def test_a_small_join_never_imports_numba():
    r = python("import sys\n"
               "from allpairs.__main__ import main\n"
               f"sys.argv = ['allpairs', 'join', '-t', '0.5', '-s', 'word:1', {str(TINY)!r}]\n"
               "try:\n    main()\nexcept SystemExit as e:\n    assert e.code == 0, e.code\n"
               "print('numba' in sys.modules, file=sys.stderr)", ALLPAIRS_KERNELS="auto")  # the default mode
    assert r.returncode == 0 and r.stderr.splitlines()[-1] == "False", r.stderr
    assert r.stdout == (TINY.parent / "golden-word1-t0.5.tsv").read_text(encoding="utf-8")


def test_numba_disable_jit_runs_every_kernel_as_plain_python_without_numba():
    r = python("import sys, numpy as np\n"
               "from allpairs._kernels import jit as _numba\n"
               "from allpairs.shingles._hash_kernel import xxh64\n"
               "xxh64(np.zeros(1000, np.uint8), 0, 1000, np.uint64(0))  # outside a join: compiled unless disabled\n"
               "print(_numba.kernel_mode(), 'numba' in sys.modules)", NUMBA_DISABLE_JIT="1")
    assert r.returncode == 0 and r.stdout.split() == ["python", "False"], r.stderr


def test_a_compile_clock_counts_kernels_compiled_after_numba_is_imported_lazily(tmp_path):
    (tmp_path / "fresh.py").write_text("from allpairs._kernels.jit import kernel\n\n\n"
                                       "@kernel\ndef add_one(x):\n    return x + 1\n", encoding="utf-8")
    code = ("import sys\n"
            "from allpairs._kernels import jit as _numba\n"
            "import fresh\n"
            "clock, watching = _numba.compile_clock()\n"
            "with watching:\n"
            "    assert 'numba' not in sys.modules\n"
            "    fresh.add_one(41)\n"
            "print(clock.kernels, clock.seconds > 0)")
    env = {"PYTHONPATH": str(tmp_path), "NUMBA_CACHE_DIR": str(tmp_path / "cache"),  # an empty cache: compiled
           "ALLPAIRS_KERNELS": "auto"}  # the default mode, whatever the run's environment forces
    first, second = python(code, **env), python(code, **env)
    assert first.returncode == 0 and first.stdout.split() == ["1", "True"], first.stderr
    assert second.returncode == 0 and second.stdout.split() == ["0", "False"], second.stderr  # loaded


def test_a_small_input_with_much_join_work_joins_compiled(monkeypatch):
    j = importlib.import_module("allpairs.pipeline.run")  # where join() calls exact_pairs
    seen = []
    real = j.exact_pairs
    monkeypatch.setattr(j, "exact_pairs", lambda *a, **k: (seen.append(kernel_mode()), real(*a, **k))[1])
    sets = [[0, i] for i in range(1, 1001)]  # 16 KB of tokens, every set sharing token 0: 499,500 pairs
    with use_kernels("auto"):
        assert len(j.join(sets, 0.3).pairs) == 499_500
        assert len(j.join(sets[:10], 0.3).pairs) == 45
    assert seen == ["compiled", "python"]


def test_numba_failing_to_load_under_a_memory_limit_is_one_line_exit_1(tmp_path):
    # What ulimit -v does to `import numba` when a big run imports it mid-run: llvmlite fails to map.
    # (jit: the kernels built ahead of time would not need numba at all.)
    (tmp_path / "numba").mkdir()
    (tmp_path / "numba" / "__init__.py").write_text("raise OSError('failed to map segment from shared object')\n")
    big = tmp_path / "big.sets"
    big.write_text("".join(f"{i} {i + 1} {i + 2}\n" for i in range(0, 30_000, 3)), encoding="ascii")
    r = subprocess.run([sys.executable, "-m", "allpairs", "join", "--sets", str(big), "-t", "0.5", "--count"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=300,
                       env={**os.environ, "PYTHONPATH": str(tmp_path), "ALLPAIRS_KERNELS": "jit"})
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == ("allpairs: error: cannot load the compiled kernels (failed to map segment from shared "
                        "object); if memory is limited (ulimit -v), raise the limit, or set ALLPAIRS_KERNELS=python "
                        "(slow on large inputs)\n")


def test_a_few_long_string_tokens_count_as_a_big_input_not_as_a_few_keys():
    from allpairs.corpus import Corpus
    from allpairs.pipeline import input_bytes

    few_long = Corpus(ids=["a", "b"], sets=[["x" * 40_000, "y"], ["x" * 40_000]])
    assert input_bytes(few_long) >= 65_536
    assert input_bytes(Corpus(ids=["a"], sets=[[1, 2, 3]])) == 24


# --- issue 23: the oracle tests run on all three kernel paths, at large denominators ---

#: The oracle test of each command (join self and R–S, index, dedup, compat, the CLI) and of the
#: per-pair arithmetic: each must run compiled, by numba's JIT and as plain Python.
ORACLE_TESTS = {
    "test_exact": ("test_every_measure_self_join_equals_brute_force", "test_every_measure_rs_join_equals_brute_force"),
    "test_index": ("test_queries_match_the_oracle",),
    "test_dedup": ("test_dedup_matches_the_oracle",),
    "test_compat": ("test_queries_give_set_similarity_searchs_results_in_its_order_with_its_values_and_types",),
    "test_cli_fuzz": ("test_cli_fuzz_one_line_right_exit_code_no_traceback_no_stray_file",),
    "test_measures": ("test_kernel_alpha_equals_the_table_even_for_huge_sizes",
                      "test_kernel_bounds_take_int32_sizes_as_the_join_passes_them"),
}


def test_the_oracle_tests_run_on_every_kernel_path():
    # What pytest collects, not what a table says: a renamed test or a lost parameter fails here.
    files = [str(REPO / "tests" / f"{module}.py") for module in ORACLE_TESTS]
    r = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *files],
                       capture_output=True, text=True, cwd=REPO, timeout=300)
    collected = set(r.stdout.split())
    for module, tests in ORACLE_TESTS.items():
        for test in tests:
            for path in ("compiled", "jit", "python"):
                assert f"tests/{module}.py::{test}[{path}]" in collected, (module, test, path, r.stdout[-2000:])


def test_the_oracle_strategies_draw_every_large_denominator_threshold_and_near_hits():
    from fractions import Fraction

    from hypothesis import find, settings

    from strategies import LARGE_DENOMINATORS, corpus_and_threshold, large_denominator_thresholds

    quick = settings(max_examples=5000, database=None)
    for t in LARGE_DENOMINATORS:
        assert find(large_denominator_thresholds, lambda v, t=t: v == t, settings=quick) == t
    assert find(corpus_and_threshold(), lambda c: c[1].denominator == 10**9 and c[1] != Fraction(1, 10**9),
                settings=quick)
    assert find(corpus_and_threshold(), lambda c: c[1].denominator > 10**6, settings=quick)


def test_a_kernel_that_overflows_on_the_plain_path_stops_with_one_line_not_a_wrong_answer():
    # numpy scalars keep an int32's width (numba computes on 64 bits): the plain path must
    # refuse to go on rather than print what a wrapped product gives.
    bad = _numba.kernel(lambda a, b: a * b)
    with use_kernels("python"):
        with pytest.raises(_numba.KernelOverflowError, match="overflowed on the plain-Python path"):
            bad(np.int32(2**30), np.int32(4))
        assert _numba.kernel(wraps=True)(lambda a, b: a * b)(np.uint64(2**63), np.uint64(2)) == 0
        assert bad(np.int64(2**30), np.int64(4)) == 2**32


def test_numba_s_cache_is_a_folder_per_digest_of_every_kernel_source_so_a_changed_callee_never_runs_stale(
        tmp_path, monkeypatch):
    # numba checks only the file of the kernel it compiled; a merge changed in verify/_kernel.py kept
    # running inlined in exact/_kernel.py's probe from the old cache.
    code = ("import numpy as np, numba; from allpairs._kernels import jit, aot\n"
            "from allpairs.shingles._hash_kernel import xxh64\n"
            "xxh64(np.frombuffer(b'abc', np.uint8), np.int64(0), np.int64(3), np.uint64(0))\n"
            "print(numba.config.CACHE_DIR); print(aot.source_digest()[:16])")
    r = python(code, ALLPAIRS_KERNELS="jit", NUMBA_CACHE_DIR=str(tmp_path))
    assert r.returncode == 0, r.stderr
    folder, digest = r.stdout.split()
    assert folder == str(tmp_path / digest)
    assert any((tmp_path / digest).rglob("*.nbi")), "numba cached nothing in the folder of these sources"
    monkeypatch.setattr(_numba._aot, "source_digest", lambda: "0" * 64)
    assert _numba.cache_folder(str(tmp_path)) == str(tmp_path / ("0" * 16))
