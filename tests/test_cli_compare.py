"""``allpairs compare`` on the command line: checks before the work, ``--missed``, ``--json``."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from allpairs.cli import app

REPO = Path(__file__).resolve().parents[1]
TINY = REPO / "datasets" / "tiny" / "corpus"
COMPARE = ["compare", "-t", "0.5", "-s", "word:1"]


def run(*args, input=None):
    return CliRunner().invoke(app, [str(a) for a in args], input=input, prog_name="allpairs")


def test_plot_without_matplotlib_is_refused_before_the_work_naming_the_extra(tmp_path):
    # A matplotlib that cannot be imported, found before the installed one.
    fake = tmp_path / "fake" / "matplotlib"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('No module named matplotlib')\n")
    out = tmp_path / "out"
    out.mkdir()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(fake.parent), str(REPO)])}
    r = subprocess.run([sys.executable, "-m", "allpairs", *COMPARE, str(TINY), "--plot", str(out / "c.png")],
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 2, r.stderr
    assert r.stdout == "", "the comparison ran before the missing matplotlib was noticed"
    assert r.stderr.splitlines() == ["allpairs: error: drawing needs matplotlib: pip install 'allpairs-join[plot]'"]
    assert list(out.iterdir()) == []
