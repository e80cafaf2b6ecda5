"""Every example of README.md and docs/*.md prints what the document shows (tests/doc_examples.py).

When a feature changes an output on purpose, ``python scripts/update_doc_examples.py``
rewrites the shown outputs; review the diff.
"""
from __future__ import annotations

import re
import subprocess

import pytest

from doc_examples import DOCUMENTS, REPO, blocks, check_document, masked, matches


@pytest.mark.long_running
@pytest.mark.parametrize("name", [d for d in DOCUMENTS if (REPO / d).exists()])
def test_every_example_prints_what_the_document_shows(name, tmp_path):
    problems = check_document(REPO / name, tmp_path)
    assert not problems, (f"{len(problems)} example(s) of {name} print something else "
                          "(python scripts/update_doc_examples.py rewrites them):\n\n" + "\n\n".join(problems))
    strays = sorted(p.name for p in tmp_path.iterdir())
    assert set(strays) <= {"datasets", "scratch"}, f"{name}: examples wrote outside scratch/ (which git ignores): {strays}"


def test_the_readme_has_examples_of_both_kinds():
    found = blocks((REPO / "README.md").read_text(encoding="utf-8"))
    assert {b.kind for b in found} == {"console", "pycon"}
    assert sum(len(b.commands) for b in found) >= 10


def test_the_first_sh_block_is_what_ci_runs():
    # .ci/run's own extraction: the lines of the first ```sh block
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    awk = re.search(r"awk '([^']+)' README.md", ci).group(1)
    block = subprocess.run(["awk", awk, "README.md"], cwd=REPO, capture_output=True, text=True,
                           check=True).stdout.splitlines()
    assert block[:2] == ["python3 -m venv .venv && .venv/bin/pip install -e '.[test]'",
                         ".venv/bin/python -m pytest -n 2 --dist loadgroup"]


def test_a_stale_number_does_not_match():
    shown = ["allpairs: 39 LSH buckets of more than 64 distinct sets (largest 5,273) were joined exactly"]
    printed = ["allpairs: 41 LSH buckets of more than 64 distinct sets (largest 5,512) were joined exactly"]
    assert not matches(shown, printed)
    assert matches(printed, printed)


def test_dots_in_a_line_match_any_text_and_a_dots_line_any_lines():
    printed = ["a", "allpairs: time read 0.01s; peak memory 43 MiB", "b", "c", ""]
    assert matches(["a", "allpairs: time ...; peak memory ...", "b", "c"], printed)
    assert matches(["a", "...", "c"], printed)
    assert matches(["...", "b", "c"], printed)
    assert not matches(["a", "...", "d"], printed)
    assert not matches(["a", "allpairs: time ...; peak memory ..."], printed)  # lines left over
    assert not matches(["a", "b"], ["a", "b", "c"])
    assert not matches(["a", "b", "c"], ["a", "b"])


def test_an_update_keeps_wildcards_and_masks_timings():
    shown = ["x 1", "allpairs: time ...; peak memory ..."]
    printed = ["x 2", "allpairs: time read 0.02s, join 0.00s; peak memory 44 MiB"]
    assert masked(shown, printed) == ["x 2", "allpairs: time ...; peak memory ..."]
    assert masked([], printed) == ["x 2", "allpairs: time ...; peak memory ..."]


def _slug(heading: str) -> str:
    """GitHub's anchor of a Markdown heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@pytest.mark.parametrize("name", [d for d in DOCUMENTS if (REPO / d).exists()])
def test_every_relative_link_and_anchor_resolves(name):
    path = REPO / name
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", path.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        linked = (path.parent / file).resolve() if file else path
        if not linked.exists():
            broken.append(target)
        elif anchor and linked.suffix == ".md":
            headings = re.findall(r"^#+ (.+)$", linked.read_text(encoding="utf-8"), flags=re.M)
            if anchor not in {_slug(h) for h in headings}:
                broken.append(target)
    assert not broken, f"{name}: links that lead nowhere: {broken}"
