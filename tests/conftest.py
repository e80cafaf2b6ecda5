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
def go_reference_src() -> Path:
    """The shared Go 1.27.3 src/ tree (REFERENCE.md section 1), unpacked once into
    the user's cache; skips the test when the archive is absent."""
    from datasets.go import shared_go_src

    try:
        return shared_go_src()
    except FileNotFoundError as exc:
        pytest.skip(str(exc).replace("\n", " "))


#: Oracle comparisons that run on more than one kernel path (``allpairs._kernels.jit``;
#: ``ALLPAIRS_KERNELS``): ``[compiled]`` (the functions built ahead of time where
#: the install built them, numba's otherwise) and ``[python]`` (the plain
#: functions, whose numpy arithmetic must give the same integers), each against
#: the oracle. Chosen to cover every kernel module at modest cost.
BOTH_KERNELS = {
    "test_exact": ("test_exact_join_equals_brute_force", "test_every_measure_self_join_equals_brute_force",
                   "test_every_measure_rs_join_equals_brute_force", "test_clusters_are_the_components_of_the_oracle_pairs",
                   "test_the_long_cluster_form_numbers_each_document_as_the_oracle_components_are",
                   "test_pair_exactly_at_threshold_is_found", "test_prefix_is_not_shortened_by_float_rounding"),
    "test_exact_subset": ("test_join_of_chosen_sets_equals_brute_force_on_them",),
    "test_order": ("test_order_invariants", "test_ties_in_frequency_go_by_first_occurrence"),
    "test_pairs": ("test_pairs_expand_sorted_by_left_then_right", "test_chunks_do_not_change_the_result",
                   "test_csv_and_json_round_trip_the_ids", "test_similarity_is_truncated_not_rounded"),
    "test_shingles": ("test_shingle_texts_agrees_with_the_python_oracle", "test_hash_sets_agrees_with_token_key_of_str",
                      "test_golden_shingle_keys"),
    "test_hash_kernel": ("test_xxh64_spans_agree_with_the_xxhash_package",),
    "test_codetok_kernel": ("test_the_kernel_takes_every_ascii_text_and_agrees_with_the_regex_path",),
    "test_minhash": ("test_signatures_equal_the_python_int_oracle", "test_golden_signature_values_are_pinned"),
    "test_bands": ("test_candidates_equal_the_dict_oracle",),
    "test_measures": ("test_kernel_alpha_equals_the_table_even_for_huge_sizes", "test_128_bit_products_compare_exactly",
                      "test_printed_cosine_is_truncated_exactly", "test_kernel_bounds_take_int32_sizes_as_the_join_passes_them",
                      "test_cosine_alpha_at_the_extreme_thresholds_of_huge_sets_is_exact"),
    "test_index": ("test_queries_match_the_oracle", "test_growing_index_matches_the_oracle",
                   "test_a_containment_query_at_999999999_over_10_9_returns_no_match_below_it",
                   "test_every_measure_answers_queries_of_any_size_at_the_extreme_thresholds"),
    "test_cli": ("test_a_cosine_join_at_0_700000001_counts_13_pairs_on_every_kernel_path",),
    "test_index_store": ("test_any_re_signed_change_of_the_arrays_is_refused_or_loads_an_index_that_works",),
    "test_dedup": ("test_dedup_matches_the_oracle",),
    "test_cli_fuzz": ("test_cli_fuzz_one_line_right_exit_code_no_traceback_no_stray_file",),
    "test_spark": ("test_task_joins_find_each_pair_once_with_its_exact_overlap",),
    "test_compat": ("test_all_pairs_gives_set_similarity_searchs_pairs_in_its_order_with_its_values_and_types",
                    "test_queries_give_set_similarity_searchs_results_in_its_order_with_its_values_and_types"),
    "test_api": ("test_pairs_index_and_slice_like_the_list_they_stand_for", "test_a_pair_gives_a_fraction_and_plain_data_for_json"),
}

#: Of those, the oracle tests that run a third way, ``[jit]``: always by numba's JIT, never
#: ahead of time, as on an install that could not build the ahead-of-time module for these
#: argument types. One per command and kernel family (join self and R–S, every measure; index;
#: dedup; compat; the CLI; the per-pair arithmetic; MinHash's wrap-around), so that the
#: ahead-of-time module is never the only thing keeping answers exact. numba compiles each
#: kernel once per signature (seconds each on a fresh install, then loaded from its cache).
JIT_TOO = {
    "test_exact": ("test_every_measure_self_join_equals_brute_force", "test_every_measure_rs_join_equals_brute_force"),
    "test_measures": ("test_kernel_alpha_equals_the_table_even_for_huge_sizes", "test_128_bit_products_compare_exactly",
                      "test_printed_cosine_is_truncated_exactly", "test_kernel_bounds_take_int32_sizes_as_the_join_passes_them"),
    "test_index": ("test_queries_match_the_oracle", "test_a_containment_query_at_999999999_over_10_9_returns_no_match_below_it"),
    "test_cli": ("test_a_cosine_join_at_0_700000001_counts_13_pairs_on_every_kernel_path",),
    "test_dedup": ("test_dedup_matches_the_oracle",),
    "test_compat": ("test_queries_give_set_similarity_searchs_results_in_its_order_with_its_values_and_types",),
    "test_cli_fuzz": ("test_cli_fuzz_one_line_right_exit_code_no_traceback_no_stray_file",),
    "test_minhash": ("test_golden_signature_values_are_pinned",),
}


def kernel_paths(module: str, test: str) -> list[str]:
    """The kernel paths a test runs on: those of :data:`BOTH_KERNELS` and :data:`JIT_TOO`, or none."""
    if test not in BOTH_KERNELS.get(module, ()):
        return []
    return ["compiled", "python"] + (["jit"] if test in JIT_TOO.get(module, ()) else [])


def pytest_generate_tests(metafunc):
    """Run each test of :data:`BOTH_KERNELS` as ``[compiled]`` and ``[python]`` (and ``[jit]`` if in :data:`JIT_TOO`)."""
    paths = kernel_paths(metafunc.module.__name__, metafunc.function.__name__)
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
