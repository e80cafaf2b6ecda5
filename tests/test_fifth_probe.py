"""What the fifth adversarial probe found (session 57), one regression test (or a few) per item."""
from __future__ import annotations

import pytest
from typer.testing import CliRunner

from allpairs.cli import app
from allpairs.errors import UsageError


def run(*args, input=None):
    return CliRunner().invoke(app, [str(a) for a in args], input=input, prog_name="allpairs")


# --- 1. a shingle size beyond int64 -----------------------------------------------------------------

@pytest.mark.parametrize("spec", ["char:99999999999999999999", "word:9223372036854775808", "code:2147483648"])
def test_a_shingle_size_too_large_for_the_kernels_is_a_usage_error_not_a_traceback(tmp_path, spec):
    f = tmp_path / "l.txt"
    f.write_text("hello world\nhello world\n")
    r = run("join", "-t", "0.5", "-s", spec, "--lines", f)
    assert r.exit_code == 2, (r.exit_code, r.output)
    assert "shingle size" in r.stderr and "2**31 - 1" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_the_largest_shingle_size_is_still_one_shingle_a_text():
    from allpairs.shingles.keys import ShingleSpec

    assert ShingleSpec.parse("char:2147483647").n == 2**31 - 1
    with pytest.raises(UsageError):
        ShingleSpec("word", 2**31)
