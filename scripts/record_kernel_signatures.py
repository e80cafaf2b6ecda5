"""Record the kernel signatures the library uses, for the ahead-of-time build (``allpairs/_kernels/signatures.txt``).

Run from the repository root::

    python scripts/record_kernel_signatures.py                  # the test suite and the workloads below
    python scripts/record_kernel_signatures.py --no-tests       # the workloads only (quick)

Every compiled kernel call made from Python (a kernel calling another inside
compiled code is part of its caller) is noted with the numba types of its
arguments (:func:`allpairs._kernels.aot.type_name`, checked here against
``numba.typeof``) and the return type numba infers. The file is rewritten
with the union of what the test suite and the workloads called, sorted. Spark
tasks run their kernels in worker processes, which this does not see; the
Spark tests that run the tasks' code without Spark call the same kernels here. Re-run it after a
change to what a kernel takes, then reinstall (``pip install -e .``) to build them.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import shlex
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from allpairs._kernels import aot as _aot, jit as _numba  # noqa: E402

GO = REPO_ROOT.parent / "shared" / "datasets"
WORKLOADS = [
    "join -t 0.5 --count -s word:1 datasets/tiny",
    "join -t 0.5 -s word:1 datasets/tiny -o {tmp}/tiny.tsv",
    "join -t 0.5 --method lsh -s word:1 datasets/tiny",
    f"join --sets {GO}/kosarak-sample.dat -t 0.5 --count",
    f"join --sets {GO}/kosarak-sample.dat -t 0.5 -o {{tmp}}/k.tsv",
    f"join --sets {GO}/kosarak-sample.dat -t 0.5 --method lsh --count",
    f"join --lines {GO}/passwords-john.txt -t 0.6 -s char:2 --count",
    f"join --lines {GO}/passwords-john.txt -t 0.6 -s char:2 --method lsh --count",
    "join -t 0.5 --count --include *.go --exclude *_test.go --exclude testdata/** --min-bytes 2048 -s code:5 {go}",
    "sets -s code:5 --include *.go {go} -o {tmp}/go.sets",
    # The C-family and Python tokenizers: files of one language read in place, and mixed batches.
    "join -t 0.5 --count -s code:5 datasets/tiny",
    "join -t 0.5 --count -s code:5 --include *.py allpairs",
    "join -t 0.5 --count -s code:5 datasets",
    "join --sets {tmp}/go.sets -t 0.5 --count",
    f"compare --sets {GO}/kosarak-sample.dat -t 0.5",
    f"dedup --sets {GO}/kosarak-sample.dat -t 0.8",
    # A saved index: built, checked as it is loaded (memory-mapped, read-only arrays), queried, grown.
    f"index build --sets {GO}/kosarak-sample.dat -t 0.5 -o {{tmp}}/k.idx",
    f"index query {{tmp}}/k.idx --sets {GO}/kosarak-sample.dat -t 0.9 --count",
    f"index add {{tmp}}/k.idx --sets {GO}/kosarak-sample.dat",
    f"index query {{tmp}}/k.idx --sets {GO}/kosarak-sample.dat -t 0.9 --count",
]


def api_workloads() -> None:
    """Calls of the library the command line does not make: string tokens from Python, exact and LSH, and
    allpairs.compat."""
    import random

    import allpairs

    rng = random.Random(1)
    docs = [[f"w{rng.randint(0, 3000)}" for _ in range(rng.randint(1, 40))] for _ in range(20_000)]
    allpairs.join(docs, threshold=0.5)
    allpairs.join(docs, threshold=0.5, method="lsh")
    from allpairs import compat

    for func in ("jaccard", "cosine", "containment_min"):
        list(compat.all_pairs(docs[:3000], func, 0.5))
    index = compat.SearchIndex(docs[:3000], "containment", 0.5)
    for q in docs[:50]:
        index.query(q)


class Recorder:
    def __init__(self) -> None:
        self.lines: set[str] = set()
        self.skipped: set[str] = set()
        self._seen: set[tuple] = set()

    def install(self) -> None:
        original = _numba.Kernel.__call__
        recorder = self

        def call(kernel, *args):
            if _numba.kernel_mode() == "compiled":
                recorder.note(kernel, args)
            return original(kernel, *args)

        _numba.Kernel.__call__ = call

    def note(self, kernel, args) -> None:
        names = tuple(_aot.type_name(a) for a in args)
        key = (kernel.__module__, kernel.__qualname__, names)
        if key in self._seen:
            return
        self._seen.add(key)
        import numba

        label = f"{kernel.__module__}.{kernel.__qualname__}{names}"
        if None in names or any(_aot.numba_type(n) != numba.typeof(a) for n, a in zip(names, args)):
            self.skipped.add(label)
            return
        argtypes = tuple(_aot.numba_type(n) for n in names)
        dispatcher = kernel.dispatcher
        dispatcher.compile(argtypes)
        returns = str(dispatcher.overloads[argtypes].signature.return_type)
        try:
            if _aot.numba_type(returns) != dispatcher.overloads[argtypes].signature.return_type:
                raise ValueError(returns)
        except ValueError:
            self.skipped.add(label + f" -> {returns}")
            return
        self.lines.add(_aot.signature_line(kernel.__module__, kernel.__qualname__, names, returns))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-tests", action="store_true", help="record the workloads only")
    ap.add_argument("--keep", action="store_true", help="keep the lines already in the file (union)")
    ap.add_argument("pytest_args", nargs="*", help="extra pytest arguments")
    args = ap.parse_args()

    import tempfile

    from datasets import go

    rec = Recorder()
    rec.install()
    # The test suite first: running the program in-process (below) routes this process's signals to
    # its watcher, which the test suite's own subprocesses must not inherit.
    if args.keep:
        rec.lines.update(_aot.read_signatures())
    if not args.no_tests:
        import pytest

        code = pytest.main(["-q", "-x", "-p", "no:cacheprovider", "--ignore", "tests/test_aot.py",
                            *args.pytest_args])
        if code != 0:
            print(f"the test suite failed ({code}): the file is not rewritten", file=sys.stderr)
            return 1
    with tempfile.TemporaryDirectory() as tmp:
        go_src = go.find_go_src()
        from allpairs.__main__ import main as cli

        for cmd in WORKLOADS:
            argv = [a.format(tmp=tmp, go=go_src) for a in shlex.split(cmd)]
            print("recording: allpairs", " ".join(argv), file=sys.stderr)
            sys.argv = ["allpairs", *argv, "-q"]
            try:
                with _numba.use_kernels("compiled"), contextlib.redirect_stdout(io.StringIO()):
                    cli()
            except SystemExit as e:
                if e.code not in (0, None):
                    print(f"  exit {e.code}", file=sys.stderr)
    with _numba.use_kernels("compiled"):
        api_workloads()
    header = ("# Kernel signatures compiled ahead of time at install (allpairs/_kernels/aot.py); one a line:\n"
              "# module qualname (argument types) -> return type. Written by scripts/record_kernel_signatures.py.\n")
    _aot.SIGNATURES.write_text(header + "".join(line + "\n" for line in sorted(rec.lines)), encoding="utf-8")
    print(f"{len(rec.lines)} signatures written to {_aot.SIGNATURES.relative_to(REPO_ROOT)}; "
          f"{len(rec.skipped)} calls of kinds not compiled ahead of time", file=sys.stderr)
    for label in sorted(rec.skipped):
        print("  not recorded:", label, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
