"""Run the examples of README.md and docs/*.md and write what they print as their shown output, in place.

Run from the repository root, after a change that alters an output on purpose::

    python scripts/update_doc_examples.py                # every document of tests/doc_examples.py
    python scripts/update_doc_examples.py README.md      # one

An example whose output still matches is left as it is (its ``...``
wildcards kept); one that differs gets the lines it printed, with the
machine-dependent ones (timings, peak memory) wildcarded. Review the diff
before committing: a changed number is either the feature's intent or a bug.
``tests/test_docs_examples.py`` checks the same examples.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from doc_examples import DOCUMENTS, REPO, update_document  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("documents", nargs="*", default=[d for d in DOCUMENTS if (REPO / d).exists()],
                    help="Markdown files relative to the repository root (default: %(default)s)")
    args = ap.parse_args(argv)
    for name in args.documents:
        path = REPO / name
        if not path.is_file():
            ap.error(f"{name}: no such file in {REPO}")
        with tempfile.TemporaryDirectory(prefix="allpairs-doc-examples-") as scratch:
            changed = update_document(path, Path(scratch))
        print(f"{name}: {changed} example output(s) rewritten", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
