"""Real programs that import SetSimilaritySearch give byte-identical output with allpairs.compat in its place.

Each program runs twice, unchanged, in its own process (``compat_clients/run_client.py``): once with
SetSimilaritySearch 1.0.1 and once with ``allpairs.compat.install()`` (or the bare
``sys.modules`` substitution), and everything it writes is compared byte for byte.

- SetSimilaritySearch's own ``scripts/all_pairs.py`` (from its sdist, fetched from the package index
  at test time) on the Kosarak sample, with every similarity function;
- dpu-utils' ``DuplicateDetector`` (its ``deduplication.py`` from the dpu-utils sdist) on Go sources;
- programs of the same shape as clients that are on no package index (our own code, in
  ``compat_clients/``): checks shaped like SetSimilaritySearch's own tests (not in its sdist), an exact
  top-k search reading ``SearchIndex``'s internals (as datasketch's benchmark does; its sdist has no
  benchmark/), and a translation-memory fuzzy matcher keeping the first of equal scores.

The sdists are kept in the user's cache (``$ALLPAIRS_CACHE`` or ``~/.cache/allpairs``); a test skips,
saying so, only when the package index cannot be reached.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import pytest

from datasets.go import cache_dir

CLIENTS = Path(__file__).resolve().parent / "compat_clients"
RUN = CLIENTS / "run_client.py"
#: What pip says when the package index cannot be reached (then, and only then, the test skips).
OFFLINE = ("Could not find a version", "No matching distribution", "Network is unreachable",
           "Failed to establish a new connection", "Temporary failure in name resolution",
           "Max retries exceeded", "ConnectionError", "Name or service not known")


def sdist(name: str, version: str) -> Path:
    """The unpacked sdist of ``name==version``, downloaded with pip into the cache once."""
    target = cache_dir() / "compat-clients" / f"{name}-{version}"
    if target.is_dir():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        got = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
                              "--disable-pip-version-check", f"{name}=={version}", "-d", tmp],
                             capture_output=True, text=True)
        if got.returncode != 0:
            said = got.stdout + got.stderr
            if any(marker in said for marker in OFFLINE):
                pytest.skip(f"{name}=={version}: the package index cannot be reached ({said.strip().splitlines()[-1]})")
            pytest.fail(f"pip download {name}=={version} failed:\n{said}")
        (archive,) = Path(tmp).glob("*.tar.gz")
        with tarfile.open(archive) as tar:
            top = tar.getnames()[0].split("/")[0]
            if hasattr(tarfile, "data_filter"):
                tar.extractall(tmp, filter="data")
            else:  # Python < 3.11.4
                tar.extractall(tmp)
        try:
            os.rename(Path(tmp) / top, target)
        except OSError:  # another process put it there first
            if not target.is_dir():
                raise
    return target


@pytest.fixture(scope="module")
def set_similarity_search_sdist() -> Path:
    return sdist("SetSimilaritySearch", "1.0.1")


@pytest.fixture(scope="module")
def dpu_utils_sdist() -> Path:
    return sdist("dpu-utils", "0.6.1")


def run(mode: str, program: Path, *args, cwd: Path) -> bytes:
    env = dict(os.environ, PYTHONHASHSEED="0")  # the programs print sets of strings
    done = subprocess.run([sys.executable, str(RUN), mode, str(program), *map(str, args)], cwd=cwd, env=env,
                          capture_output=True)
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    return done.stdout


def outputs(tmp_path: Path, mode: str, program: Path, *args, files=()) -> dict:
    """Everything the program writes: its standard output and each file named in ``files`` (then removed)."""
    out = {"stdout": run(mode, program, *args, cwd=tmp_path)}
    for name in files:
        out[name] = (tmp_path / name).read_bytes()
        (tmp_path / name).unlink()
    return out


def same_output(tmp_path, program, *args, files=(), modes=("install",)) -> dict:
    theirs = outputs(tmp_path, "setsimilaritysearch", program, *args, files=files)
    assert any(theirs.values()), "the program wrote nothing: nothing would be compared"
    for mode in modes:
        ours = outputs(tmp_path, mode, program, *args, files=files)
        for what in theirs:
            assert ours[what] == theirs[what], f"{program.name} {' '.join(map(str, args))}: {what} differs ({mode})"
    return theirs


def kosarak_tuples(shared_datasets: Path, path: Path, first: int, count: int) -> None:
    """Kosarak transactions ``first .. first + count`` as the script's ``SetID Token`` lines."""
    with open(shared_datasets / "kosarak-sample.dat") as f:
        lines = f.read().splitlines()[first:first + count]
    path.write_text("".join(f"{i} {token}\n" for i, line in enumerate(lines) for token in line.split()))


@pytest.mark.parametrize("func, threshold", [("jaccard", 0.5), ("cosine", 0.8), ("containment_min", 0.6)])
def test_set_similarity_search_script_writes_the_same_csv_for_every_symmetric_function(
        tmp_path, shared_datasets, set_similarity_search_sdist, func, threshold):
    kosarak_tuples(shared_datasets, tmp_path / "kosarak.txt", 0, 1000)
    theirs = same_output(tmp_path, set_similarity_search_sdist / "scripts" / "all_pairs.py",
                         "--input-sets", "kosarak.txt", "--output-pairs", "pairs.csv", "--similarity-func", func,
                         "--similarity-threshold", threshold, files=["pairs.csv"])
    assert theirs["pairs.csv"].count(b"\n") > 1000


def test_set_similarity_search_script_writes_the_same_csv_for_containment_across_two_files(
        tmp_path, shared_datasets, set_similarity_search_sdist):
    kosarak_tuples(shared_datasets, tmp_path / "indexed.txt", 0, 1000)
    kosarak_tuples(shared_datasets, tmp_path / "queries.txt", 1000, 300)
    theirs = same_output(tmp_path, set_similarity_search_sdist / "scripts" / "all_pairs.py",
                         "--input-sets", "indexed.txt", "queries.txt", "--output-pairs", "pairs.csv",
                         "--similarity-func", "containment", "--similarity-threshold", 0.7, files=["pairs.csv"])
    assert theirs["pairs.csv"].count(b"\n") > 1000


def test_checks_shaped_like_set_similarity_searchs_tests_print_the_same_with_install_and_bare_substitution(
        tmp_path):
    same_output(tmp_path, CLIENTS / "sss_checks.py", modes=("install", "bare"))


def test_exact_top_k_reading_the_index_internals_prints_the_same(tmp_path, shared_datasets):
    with open(shared_datasets / "kosarak-sample.dat") as f:
        (tmp_path / "sets.txt").write_text("".join(f.readlines()[:1500]))
    theirs = same_output(tmp_path, CLIENTS / "topk_internals.py", "sets.txt", 10, 200, modes=("install", "bare"))
    assert theirs["stdout"].count(b"\n") == 201


def go_comments(src: Path, prefix: str, most: int) -> str:
    """The first ``most`` comment lines of three words or more from the Go files under ``prefix``: segments."""
    lines = []
    for path in sorted((src / prefix).rglob("*.go")):
        for line in path.read_text(errors="replace").splitlines():
            text = line.strip()
            if text.startswith("//") and len(text[2:].split()) >= 3:
                lines.append(text[2:].strip())
    return "\n".join(lines[:most]) + "\n"


@pytest.mark.parametrize("func", ["containment_min", "jaccard"])
def test_a_translation_memory_fuzzy_matcher_writes_the_same_matches(tmp_path, go_reference_src, func):
    # go/types is generated from types2: its comments are a memory full of near and exact matches,
    # and a quarter of them repeat a word.
    (tmp_path / "tm.txt").write_text(go_comments(go_reference_src, "go/types", 6000))
    (tmp_path / "in.txt").write_text(go_comments(go_reference_src, "cmd/compile/internal/types2", 2000))
    theirs = same_output(tmp_path, CLIENTS / "tm_fuzzy.py", "tm.txt", "in.txt", "matches.txt", "--function", func,
                         "--minscore", 0.5, files=["matches.txt"])
    assert theirs["matches.txt"].count(b"\n") > 500


def test_dpu_utils_duplicate_detector_finds_the_same_clusters_in_the_same_order(tmp_path, go_reference_src,
                                                                               dpu_utils_sdist):
    theirs = same_output(tmp_path, CLIENTS / "dedup_go.py", dpu_utils_sdist, go_reference_src, "internal/goarch",
                         "internal/goos", "internal/runtime/syscall", "syscall", "go/types",
                         "cmd/compile/internal/types2")
    assert b" clusters" in theirs["stdout"] and b"exclude [" in theirs["stdout"]


def test_an_offline_package_index_skips_rather_than_fails(monkeypatch, tmp_path):
    monkeypatch.setenv("ALLPAIRS_CACHE", str(tmp_path))
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)  # no extra indexes or local wheel folders
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")  # a closed port: nothing answers
    monkeypatch.setenv("PIP_RETRIES", "0")
    monkeypatch.setenv("PIP_TIMEOUT", "1")
    with pytest.raises(pytest.skip.Exception, match="cannot be reached"):
        sdist("SetSimilaritySearch", "1.0.1")
    assert not any(tmp_path.rglob("*.py"))
    shutil.rmtree(tmp_path / "compat-clients", ignore_errors=True)
