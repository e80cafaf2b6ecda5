"""The C and C++ tokens of ``code:N`` against a real lexer: clang's raw lexer (tests/clang_lexer.py).

Skipped, saying why, where clang is not installed (Debian: ``apt-get install
clang``; CI installs it).  ``scripts/check_c_tokens.py`` runs the same
comparison over every header under /usr/include.
"""
from __future__ import annotations

from pathlib import Path

import pytest

import clang_lexer
from allpairs.shingles.codetokens import tokenize

#: C++20, so that ``<=>`` is one token for clang as it is here (clang 14's default, C++14, splits it).
STD = "c++20"

# Where C and C++ differ from the rest of the C family, and what clang's lexer is particular about.
SNIPPETS = {
    "line splices": "#define SQ(x) \\\n  ((x) * \\\n   (x))\nint a\\\nb = 1; // a comment \\\n still the comment\nc",
    "a splice with blanks before the line end, and CR LF": "#define A 1 \\  \r\n + 2\r\nx",
    "pointers to pointers": "char **argv; int ***p; x **= 2; a->*b; a.*c; a <=> b; x >>= 1; y ... z",
    "preprocessing numbers": "0xe+1 1.2.3 1e+5 0x1p-3 1'000'000 10ULL 1.5f .5 1..2 0b101 1_000 7e-",
    "literals with prefixes": "L\"w\" u8\"x\" u\"y\" U\"z\" L'a' u8'b' x\"q\" b\"not a prefix\" 'ab' '\\''",
    "raw strings": 'R"(a\\b)" R"d(x)" y)d" LR"(w)" u8R"--(q)--" R"x(z)x"',
    "unterminated literals": "a = \"open\nb = 'open\nc = ''",
    "characters that start no token": "@interface X; `tick` $dollar a\\b",
    "user-defined literal suffixes": '"a"s "b"_x "c"PRIx64 "d"sv "e"min "f"mins \'g\'_y 10ms 1.5_km R"(r)"_z',
    "comments": "a /* b\n */ c // d\ne /**/ f /*/ g */ h",
}


@pytest.fixture(scope="module")
def clang():
    why = clang_lexer.available()
    if why is not None:
        pytest.skip(why)
    return clang_lexer


@pytest.mark.parametrize("name", sorted(SNIPPETS))
def test_c_tokens_are_clangs_raw_tokens(clang, tmp_path, name):
    path = tmp_path / "snippet.h"
    path.write_bytes(SNIPPETS[name].encode())
    theirs = clang.clang_tokens([path], std=STD)[str(path)]
    assert clang.first_difference(tokenize(SNIPPETS[name], "c"), theirs) is None


@pytest.mark.long_running
def test_c_headers_under_usr_include_get_clangs_raw_tokens(clang):
    root = Path("/usr/include")
    paths = sorted(p for p in root.rglob("*.h") if p.is_file())
    if len(paths) < 100:
        pytest.skip(f"only {len(paths)} headers under {root} (Debian: libc6-dev, linux-libc-dev)")
    texts = {}
    for p in paths[::20]:  # a fixed sample: clang and the comparison take about a second per 100 headers
        try:
            texts[str(p)] = p.read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            continue
    theirs = clang.clang_tokens([Path(p) for p in texts], std=STD)
    differ = {p: clang.first_difference(tokenize(text, "c"), theirs[p]) for p, text in texts.items()}
    differ = {p: why for p, why in differ.items() if why is not None}
    assert not differ, f"{len(differ)} of {len(texts)} headers differ: {sorted(differ.items())[:5]}"
