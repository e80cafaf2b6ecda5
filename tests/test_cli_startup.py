"""The fixed cost of a run, held without timing: a plain ``join --sets`` imports only what it uses.

Each module below cost milliseconds of every run before it was imported at its point of use (issue 34,
item 3; the figure is in docs/benchmarks.md). ``sys.modules`` at the run's exit names every module it
imported, however it was imported."""
from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

#: Modules a plain exact ``join --sets`` does not need, with the feature that does.
NOT_FOR_A_PLAIN_JOIN = {
    "allpairs.exact.topk": "--top / --neighbors",
    "allpairs.pairs.ranked": "--top / --neighbors",
    "allpairs.pipeline.lsh_path": "--method lsh",
    "allpairs.lsh.bands": "--method lsh",
    "allpairs.lsh.minhash": "--method lsh",
    "allpairs.lsh.scurve": "--method lsh",
    "allpairs.lsh.keysets": "--method lsh",
    "allpairs.shingles.texts": "text inputs (shingling)",
    "allpairs.shingles.keys": "text inputs (the shingle spec, parsed or chosen from the texts)",
    "allpairs.shingles.code": "code:N shingles",
    "allpairs.shingles.codetokens": "code:N shingles",
    "allpairs.shingles.pool": "text inputs (worker processes)",
    "multiprocessing": "text inputs (worker processes)",
    "allpairs.corpus.tree": "directory inputs",
    "allpairs.corpus.walk": "directory inputs",
    "allpairs.corpus.records": "--jsonl",
    "allpairs.corpus.tables": "--csv / --tsv / --parquet",
    "allpairs.exact.subset": "--method lsh (the row joins within its buckets)",
    "allpairs.output.tables": "table output: --clusters, --format parquet",
    "allpairs.pairs.clusters": "--clusters (the union–find and the clusters' writers)",
    "allpairs.pairs.rows": "--format parquet",
    "allpairs.index": "the index commands and dedup",
    "allpairs.cli.sets": "sets (each command's module is imported when it runs)",
    "allpairs.cli.compare": "compare",
    "allpairs.cli.index": "the index commands",
    "allpairs.cli.dedup": "dedup",
    "allpairs.report": "compare",
    "allpairs.engines": "--spark",
    "allpairs.compat": "SetSimilaritySearch's interface",
    "html": "a notebook's view of a result",
    "rich": "progress bars (not with -q)",
    "typer": "command lines other than a plain join (which runs by allpairs.cli._fast)",
    "allpairs.cli._app": "command lines other than a plain join (the typer app)",
    "allpairs.cli._options": "command lines other than a plain join (typer's options)",
    "allpairs.cli.join": "command lines other than a plain join (typer's join command)",
    "numba": "kernels compiled at run time (the ahead-of-time ones load without it)",
    "pandas": "Series inputs and tables",
    "pyarrow": "--parquet",
    "pyspark": "--spark",
    "matplotlib": "compare's pictures",
    "numpy.ma": "nothing (np.unique's first call imports it: allpairs._kernels.csr.block_edges instead)",
    "concurrent.futures": "more than one thread (--jobs; a join of one task runs on the caller's thread)",
    "logging": "more than one thread (concurrent.futures imports it)",
    "json": "JSON output, a lone file's format guessed",
    "csv": "CSV output, a lone file's format guessed",
    "shutil": "removing a directory: spilled pairs, a dataset being written (it loads bz2 and lzma)",
    "tempfile": "-o (the temporary file beside the output), a spill to disk",
    "shlex": "-o onto a read-only file (the message quotes its name)",
    "unicodedata": "normalised text shingles",
    "hashlib": "the kernel sources' digest where the install's stamp (allpairs/_kernels/compiled.stamp) does not "
               "match them: pip install -e . after a kernel changes",
}


#: The program as the console script runs it, writing at exit the names of every module it imported
#: (sys.modules: whatever the path, the import statement or a package's lazy __getattr__).
PROGRAM = ("import atexit, sys\n"
           "out = sys.argv.pop(1)\n"
           "atexit.register(lambda: open(out, 'w').write('\\n'.join(sys.modules)))\n"
           "from allpairs.__main__ import main\n"
           "main()\n")


#: Modules a plain join's own code does not import, but a development install's start-up may (its editable
#: finder imports pathlib): checked in a run that skips ``site`` and finds the package by PYTHONPATH.
NOT_FOR_A_PLAIN_JOIN_FROM_ITS_CODE = {
    "pathlib": "nothing (it loads urllib.parse and ipaddress: 17.5 M instructions of a run)",
}


def _imported(tmp_path, *options: str, no_site: bool = False) -> set[str]:
    sets = tmp_path / "ten.sets"
    sets.write_text("".join(f"w{i} x{i} y{i} z{i % 3}\n" for i in range(10)))
    modules = tmp_path / "modules.txt"
    flags, env = [], None
    if no_site:  # the package from the repository, its dependencies from site-packages, no .pth file run
        flags = ["-S"]
        path = [str(Path(__file__).resolve().parents[1]), sysconfig.get_paths()["purelib"],
                sysconfig.get_paths()["platlib"]]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
    run = subprocess.run([sys.executable, *flags, "-c", PROGRAM, str(modules), "join", "-q", "-t", "0.5", *options,
                          "--sets", str(sets)], capture_output=True, text=True, timeout=300, env=env)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.startswith("left\tright\tsimilarity\n")
    return set(modules.read_text().split())


def test_a_plain_sets_join_imports_no_module_it_does_not_use(tmp_path):
    imported = _imported(tmp_path)
    wrong = {m: why for m in imported for name, why in NOT_FOR_A_PLAIN_JOIN.items()
             if m == name or m.startswith(f"{name}.")}
    assert not wrong, "a plain join --sets imported:\n" + "\n".join(f"{m} (for {why})" for m, why in sorted(wrong.items()))


def test_a_plain_sets_join_s_own_code_imports_no_pathlib(tmp_path):
    imported = _imported(tmp_path, no_site=True)
    assert "allpairs._kernels.compiled" in imported or "numba" in imported  # the kernels ran
    wrong = sorted(set(NOT_FOR_A_PLAIN_JOIN_FROM_ITS_CODE) & imported)
    assert not wrong, f"a plain join --sets imported {wrong} (for {[NOT_FOR_A_PLAIN_JOIN_FROM_ITS_CODE[m] for m in wrong]})"


@pytest.mark.parametrize("options, needed", [(("--top", "2"), "allpairs.exact.topk"),
                                             (("--method", "lsh"), "allpairs.lsh.minhash")])
def test_the_import_check_sees_a_module_a_run_does_use(tmp_path, options, needed):
    assert needed in _imported(tmp_path, *options)
