"""Real inputs end to end: password lists (the similar-passwords exercise) and the raw Kosarak sample.

Each test finds its data (the shared folder, a system package, a package from
the index) or is skipped with the reason printed.
"""
from __future__ import annotations

from fractions import Fraction

import pytest
from typer.testing import CliRunner

from allpairs.cli import app

from naive import all_pairs, char_shingles


def _cli(*args):
    r = CliRunner().invoke(app, [str(a) for a in args], prog_name="allpairs")
    assert r.exit_code == 0, r.stderr
    return r.stdout


def _oracle_lines(passwords, t, n=3):
    """Expected TSV lines for --lines input with char:n shingles (ids are 1-based line numbers)."""
    sets = [char_shingles(p, n) for p in passwords]
    out = []
    for i, j, o, a, b in all_pairs(sets, t):
        sim = Fraction(o, a + b - o)
        shown = f"{sim.numerator * 10**6 // sim.denominator:07d}"
        out.append(f"{i + 1}\t{j + 1}\t{shown[0]}.{shown[1:]}\t{passwords[i]}\t{passwords[j]}")
    return out


@pytest.mark.parametrize("t", ["0.7", "0.5"])
def test_john_passwords_char3_equal_brute_force(tmp_path, t):
    import datasets.passwords as pw

    try:
        words = pw.john_passwords()
    except FileNotFoundError as e:
        pytest.skip(str(e).replace("\n", " "))
    words = words[:1500]
    f = tmp_path / "pw.txt"
    f.write_text("\n".join(words) + "\n")
    got = _cli("join", "--lines", "-t", t, "-q", "--no-header", f).splitlines()
    assert got == _oracle_lines(words, Fraction(t))
    assert len(got) > 50


def test_zxcvbn_passwords_char3_equal_brute_force(tmp_path):
    import datasets.passwords as pw

    try:
        words = pw.zxcvbn_passwords()
    except FileNotFoundError as e:
        pytest.skip(str(e).replace("\n", " "))
    words = words[:1200]
    f = tmp_path / "pw.txt"
    f.write_text("\n".join(words) + "\n")
    got = _cli("join", "--lines", "-t", "0.6", "-q", "--no-header", f).splitlines()
    assert got == _oracle_lines(words, Fraction(6, 10))


def test_raw_kosarak_counts_duplicates_as_pairs(shared_datasets):
    path = shared_datasets / "kosarak-sample.dat"
    if not path.exists():
        pytest.skip(f"Kosarak sample not found at {path}")
    # REFERENCE.md §4: 33.3 M pairs at t = 0.5 with the duplicates; 7,693 among distinct sets at 0.7.
    assert _cli("join", "--sets", "-t", "0.5", "--count", "-q", path) == "33325707\n"
