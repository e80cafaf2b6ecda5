"""The compiled tokenizers give the same code:N keys as the regex path, for any text.

The regex path (``codetokens.token_pattern(language).findall``, vocabulary
ids, ``shingles._kernel.code_stream``) is the definition; each kernel (Go,
the C family, Python) either agrees with it key for key or declines the
document, which then goes by the regex path.  Both are compared here on
random source-like texts and on real trees: the Go tree, the Python standard
library of the running interpreter, the C headers under /usr/include.
"""
from __future__ import annotations

import sysconfig
from pathlib import Path

import numpy as np
import pytest
import xxhash
from hypothesis import given, note, settings
from hypothesis import strategies as st

from allpairs.shingles import codetokens
import allpairs.shingles as shingles
from allpairs.shingles._codetok_kernel import go_token_keys
from allpairs.corpus import read_directory
from allpairs.shingles.code import CodeTokens, _go_tables, _tokenizer, compiled_shingles
from allpairs.shingles.keys import ShingleSpec, seed_of
from allpairs.shingles.utf8 import utf8_of

# Pieces that exercise every branch of the Go regex: operators (longest
# match), numbers of every base with '.', exponents, '_' and 'i', strings,
# runes and raw strings with escapes and line ends, comments of both kinds
# (spanning lines or not, unterminated), keywords with and without a
# semicolon after them, characters that start no token, CR, BOM, non-ASCII.
_PIECES = [
    " ", "  ", "\t", "\n", "\n\n", "\r\n", "\r", "\f", "\x00",
    "x", "y1", "_", "_a9", "Z", "é", "ü1", "日本", "²", "\ufeff", "\ud800", "𝔘",
    "break", "continue", "fallthrough", "return", "func", "if", "else", "go", "goto",
    "package", "var", "chan", "interface", "range", "select", "typeX", "return_",
    "0", "7", "09", "123", "1_000", "0x", "0X1F", "0xab.cdp-3", "0x1p", "0o17", "0O", "0b101",
    "0B", "1.", "1.5", ".5", "..5", "1e9", "1E+9", "2.5e-3i", "1p4", "3i", "0x.8", "1__2", "e", "p", "i",
    "+", "-", "*", "/", "%", "&", "|", "^", "<", ">", "=", "!", "~", "(", ")", "[", "]",
    "{", "}", ",", ";", ".", ":", "<<=", ">>=", "&^=", "...", "..", "&&", "||", "<-", "++", "--",
    "==", "!=", "<=", ">=", ":=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<", ">>", "&^",
    "@", "#", "?", "$", "\\", "\x7f",
    '"', "'", "`", '"abc"', '"a\\"b"', '"\\', '"\\\n', '"é\\é"', "'a'", "'\\''", "'\\x4", "'\\u00e9'",
    "`raw`", "`a\r\nb`", "`é\r`", "`", "\\`",
    "//", "// c\n", "//é", "/*", "*/", "/**/", "/* a */", "/*\n*/", "/*/", "/* é\r\n */", "*", "/ *",
]

# The same for the C family: identifiers with '$', string and raw-string
# prefixes (and near misses such as bR"( or r##), numbers with separators and
# suffixes, character literals with every escape form, Rust lifetimes, C#
# verbatim strings, template literals, backslashes, every operator.
_C_PIECES = [
    " ", "  ", "\t", "\n", "\r\n", "\r", "\f", "\v", "\x00", "\x7f",
    "x", "y1", "_", "$el", "a$", "é", "ü1", "日本", "²", "\ufeff", "\ud800", "𝔘", "\u00a0",
    "L", "u", "U", "u8", "b", "r", "br", "R", "uR", "u8R", "LR", "bR", "@", "r#", "r##", "r###", "##",
    "0", "7", "09", "1_000", "0x", "0X1F", "0x1p-3", "0x1.8P+4", "0x'1", "1'000", "1'", "1.", ".5", "1..2",
    "1e9", "1E+9", "e", "p", "10ULL", "1.5f", "1u32", "10n", "0b101",
    '"', "'", "`", '"abc"', '"a\\"b"', "'a'", "'\\''", "'\\x41'", "'\\x'", "'\\u{41}'", "'\\u{'",
    "'\\u0041'", "'\\U00000041'", "'\\U0041'", "'\\101'", "'\\1234'", "'\\18'", "'é'", "'\\é'",
    "'a", "'ab'", "'static", "'_", "'1", "'\\n'",
    "\\", '\\"', "\\'", "\\\n", "\\x", "\\u", "\\U", "${", "{", "}", "(", ")",
    'R"(', ')"', '"#', '"##', '"###', '@"', '""', '"é"', "`é`",
    "//", "/*", "*/", "/**/", "/*/", "// c\n", "/* é */", "//é\n",
    *codetokens._C_OPERATORS,
]

# And for Python: string prefixes (valid, invalid, too long), triple quotes
# (closed, unterminated, ending in a backslash), numbers of every base, '#'
# comments, characters that start no Python token.
_PY_PIECES = [
    " ", "  ", "\t", "\n", "\r\n", "\r", "\f", "\v", "\x00", "\x7f",
    "x", "y1", "_", "é", "ü1", "日本", "²", "\ufeff", "\ud800", "𝔘", "\u00a0",
    "r", "b", "f", "t", "u", "U", "R", "F", "rb", "Rb", "bR", "fr", "tr", "ur", "rr", "br", "rbf",
    "0", "7", "09", "1_000", "0x", "0X1F", "0o17", "0O", "0b1", "0B", "1.", ".5", "1..2", "1e9", "1E+9",
    "1j", "1.5e-3J", "e", "j",
    '"', "'", "'''", '"""', '"abc"', "'a'", "'''a'''", '"""a"""', '"é"', "'\\''",
    "\\", '\\"', "\\'", "\\\n", "{", "}", "$", "?", "`",
    "#", "# c\n", "#é\n",
    *codetokens._PY_OPERATORS,
]

# And for C and C++: line splices (with blanks, CR LF, CR) between, inside and around tokens, literals
# and comments; raw strings with delimiters; preprocessing numbers; the C++ operators.
_CXX_PIECES = [
    " ", "\t", "\n", "\r\n", "\r", "\f", "\v", "\x00", "\x7f", "x", "y1", "_", "$el", "é", "ü1", "\u00a0",
    "L", "u", "U", "u8", "R", "uR", "u8R", "LR", "b", "r",
    "0", "7", "1'000", "1'", "0x1p-3", "1e+5", "1.5f", ".5", "1..2", "e", "p", "E", "+", "-",
    "'", '"', '"abc"', "'a'", "'\\''", '"é"', "\\", "\\\n", "\\ \n", "\\\r\n", "\\\r", "\\\t\n",
    'R"(', ')"', 'R"d(', ')d"', 'R"é(', "d", "(", ")", "//", "/*", "*/", "/", "*", "// c\n", "/* x */", "//é\n",
    "@", "`", "#", "##", "s", "_x", "min", "ms", "if", "sv", "PRIx64", *codetokens._CXX_OPERATORS,
]

LANGUAGES = ("go", "c", "c-family", "python")
_ALL_PIECES = {"go": _PIECES, "c": _CXX_PIECES, "c-family": _C_PIECES, "python": _PY_PIECES}
TEXTS = {lang: st.lists(st.sampled_from(pieces), max_size=40).map("".join) for lang, pieces in _ALL_PIECES.items()}
# C's kernel declines a line splice inside a literal or between two non-blank characters, ASCII or not.
ASCII_TEXTS = {lang: st.lists(st.sampled_from([p for p in pieces if p.isascii() and (lang != "c" or "\\" not in p)]),
                              max_size=40).map("".join)
               for lang, pieces in _ALL_PIECES.items()}


def regex_keys(texts: list[str], n: int, language: str = "go") -> tuple[list[int], list[int]]:
    counts, keys = CodeTokens(language)._regex_shingles(texts, n, seed_of(ShingleSpec("code", n)))
    return counts.tolist(), keys.tolist()


def compiled_keys(texts: list[str], n: int, language: str = "go") -> tuple[list[int], list[int]]:
    def refuse(docs, n, seed, distinct=False):
        raise AssertionError("the kernel declined a document")

    with np.errstate(over="ignore"):
        counts, keys = compiled_shingles(texts, language, n, seed_of(ShingleSpec("code", n)), refuse)
    return counts.tolist(), keys.tolist()


def shingled_keys(texts: list[str], n: int, language: str = "go") -> tuple[list[int], list[int]]:
    """The compiled path with its fallback for declined documents, as shingle_texts runs it."""
    with np.errstate(over="ignore"):
        counts, keys = compiled_shingles(texts, language, n, seed_of(ShingleSpec("code", n)),
                                          CodeTokens(language)._regex_shingles)
    return counts.tolist(), keys.tolist()


def accepted(text: str, language: str = "go") -> bool:
    buf, doc_ptr = utf8_of([text])
    kernel, tables = _tokenizer(language)
    with np.errstate(over="ignore"):
        return bool(kernel(buf, doc_ptr, np.empty(len(buf) + 1, np.uint64), *tables)[1][0])


@pytest.mark.kernel_paths("compiled", "python")
@pytest.mark.parametrize("language", LANGUAGES)
@settings(max_examples=300, deadline=None)
@given(data=st.data(), n=st.integers(1, 3))
def test_the_kernel_takes_every_ascii_text_and_agrees_with_the_regex_path(language, data, n):
    text = data.draw(ASCII_TEXTS[language], label="text")
    assert compiled_keys([text], n, language) == regex_keys([text], n, language)


@pytest.mark.parametrize("language", LANGUAGES)
@settings(max_examples=200, deadline=None)
@given(data=st.data(), n=st.integers(1, 3))
def test_shingles_agree_with_the_regex_path_with_unicode_declined_documents_included(language, data, n):
    texts = data.draw(st.lists(TEXTS[language], max_size=5), label="texts")
    assert shingled_keys(texts, n, language) == regex_keys(texts, n, language)


@pytest.mark.parametrize("language", LANGUAGES)
@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_the_kernel_declines_only_texts_with_non_ascii_outside_literals_and_comments(language, data):
    text = data.draw(TEXTS[language], label="text")
    if text.isascii() and (language != "c" or "\\" not in text):
        assert accepted(text, language)
    if accepted(text, language):
        assert compiled_keys([text], 1, language) == regex_keys([text], 1, language)


_MASK, _GOLDEN = (1 << 64) - 1, 0x9E3779B97F4A7C15


def _mix(z: int) -> int:
    """splitmix64's finaliser on Python ints (the mixing step of a shingle key)."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


@pytest.mark.parametrize("language", ["c", "c-family", "python"])
@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_code1_keys_are_the_xxhash_of_the_reference_tokens(language, data):
    # Independent of the regex path's vocabulary and of the hash kernel: tokenize() and the xxhash package.
    text = data.draw(TEXTS[language], label="text")
    tokens = codetokens.tokenize(text, language)
    note(f"reference tokens: {tokens!r}")
    seed = xxhash.xxh64_intdigest(b"code:1")
    expected = [_mix((seed * _GOLDEN + xxhash.xxh64_intdigest(t.encode("utf-8", "surrogatepass"))) & _MASK)
                for t in tokens]
    assert shingled_keys([text], 1, language)[1] == expected


def test_non_ascii_in_strings_and_comments_is_compiled_but_in_identifiers_declined():
    assert accepted('x := "é" // ü\n/* 日本 */ y := `𝔘\r`\n')
    assert not accepted("é := 1\n")
    assert not accepted("xé := 1\n")
    assert not accepted("\ufeffpackage p\n")
    assert not accepted("x := 1² \n")


@pytest.mark.parametrize("src", [
    "s = \"é\"; c = 'é'; d = '\\é'; // ü\n/* 日本 */ t = `𝔘\r`; r#\"ß\"#; R\"(ß)\"; @\"ß\"",
    "s = u8\"é\" L'é' b\"é\"",
])
def test_c_non_ascii_in_literals_and_comments_is_compiled(src):
    assert accepted(src, "c-family")
    assert compiled_keys([src], 2, "c-family") == regex_keys([src], 2, "c-family")


@pytest.mark.parametrize("src", ["é = 1", "xé = 1", "1é", "0x1é", "'é", "'aé", "\ufeffint x;", "x\u00a0= 1"])
def test_c_non_ascii_where_unicode_rules_decide_is_declined(src):
    assert not accepted(src, "c-family")
    assert shingled_keys([src], 1, "c-family") == regex_keys([src], 1, "c-family")


@pytest.mark.parametrize("src", [
    "s = 'é' + \"ß\" + '''日本\n''' + rb'\\é'  # ü\nt = 1",
    "x = f\"{a}é\" # 𝔘",
])
def test_python_non_ascii_in_strings_and_comments_is_compiled(src):
    assert accepted(src, "python")
    assert compiled_keys([src], 2, "python") == regex_keys([src], 2, "python")


@pytest.mark.parametrize("src", ["é = 1", "xé = 1", "x = 1 ² 2", "\ufeffimport os"])
def test_python_non_ascii_where_unicode_rules_decide_is_declined(src):
    assert not accepted(src, "python")
    assert shingled_keys([src], 1, "python") == regex_keys([src], 1, "python")


# The edge cases that codetokens' docstring documents, with the tokens the regex gives.
@pytest.mark.parametrize("language, src, tokens", [
    ("c-family", "a >>>= b <=> c ... d ..= e ??= f ->g ## h::i", [
        "a", ">>>=", "b", "<=>", "c", "...", "d", "..=", "e", "??=", "f", "->", "g", "##", "h", "::", "i"]),
    ("c-family", 'r#"a "b" c"# r##"x"#y"## r###"z"### br#"q"# r"p" br"\\d"',
     ['r#"a "b" c"#', 'r##"x"#y"##', 'r###"z"###', 'br#"q"#', 'r"p"', 'br"\\d"']),
    ("c-family", 'r#"open r"open', ["r", "#", '"open r"', "open"]),
    ("c-family", 'R"(a "q" \\ b)" u8R"(x)" LR"(y)" bR"(z)"',
     ['R"(a "q" \\ b)"', 'u8R"(x)"', 'LR"(y)"', "bR", '"(z)"']),
    ("c-family", 'L"w" u"x" U"y" u8"z" b"v" L\'w\' u8\'z\' b\'\\x41\' xL"q"',
     ['L"w"', 'u"x"', 'U"y"', 'u8"z"', 'b"v"', "L'w'", "u8'z'", "b'\\x41'", "xL", '"q"']),
    ("c-family", "'\\101' '\\x4f' '\\u{1F600}' '\\u00e9' '\\U0001F600' '\\'' '\\\\' '\\1234'",
     ["'\\101'", "'\\x4f'", "'\\u{1F600}'", "'\\u00e9'", "'\\U0001F600'", "'\\''", "'\\\\'",
      "'", "\\", "1234", "'"]),
    ("c-family", "fn f<'a, 'static>(x: &'a T) { 'outer: loop {} } 'ab'",
     ["fn", "f", "<", "'a", ",", "'static", ">", "(", "x", ":", "&", "'a", "T", ")", "{", "'outer", ":",
      "loop", "{", "}", "}", "'", "ab", "'"]),
    ("c-family", '@"a""b" @"open', ['@"a""b"', "@", '"open']),
    ("c-family", "`a\n${b}\\`c` `open\\", ["`a\n${b}\\`c`", "`open", "\\"]),
    ("c-family", '"a\\\nb" "open\nx "end\\', ['"a\\\nb"', '"open', "x", '"end', "\\"]),
    ("c-family", "1'000'000 0x'1F 1.5e-3f 10ULL 1..2 0x1.8p+3L .5e 1u32 10n",
     ["1'000'000", "0x'1F", "1.5e-3f", "10ULL", "1", "..", "2", "0x1.8p+3L", ".5e", "1u32", "10n"]),
    ("c-family", "a /* b */ c // d\r\ne /* open", ["a", "c", "e"]),
    ("c-family", "a\x00b\x7fc", ["a", "b", "c"]),
    ("python", "x = r'\\'' + Rb\"x\" + rb'''a\n''' + f\"{a}\" + t'' + u'y' + ur'z' + rbf'w'",
     ["x", "=", "r'\\''", "+", 'Rb"x"', "+", "rb'''a\n'''", "+", 'f"{a}"', "+", "t''", "+", "u'y'",
      "+", "ur", "'z'", "+", "rbf", "'w'"]),
    ("python", "'''a''''", ["'''a'''", "'"]),
    ("python", "''''", ["''''"]),
    ("python", "'''open\n\"\"\"", ["'''open\n\"\"\""]),
    ("python", "'''ends in \\", ["''", "'ends in "]),
    ("python", "'open\nx", ["'open", "x"]),
    ("python", "a **= b //= c >>= d ... e -> f := g @= h != i", [
        "a", "**=", "b", "//=", "c", ">>=", "d", "...", "e", "->", "f", ":=", "g", "@=", "h", "!=", "i"]),
    ("python", "x = 1 # c\r\ny = 0x_FF + 0o17 + 0b1 + 1_0.5e-3j + 1..2 + 1else", [
        "x", "=", "1", "y", "=", "0x_FF", "+", "0o17", "+", "0b1", "+", "1_0.5e-3j", "+", "1.", ".2", "+",
        "1e", "lse"]),
    ("python", "a $ b ? c ` d \\\n e\x00f", ["a", "b", "c", "d", "e", "f"]),
])
def test_documented_edge_cases_are_compiled_as_the_regex_gives_them(language, src, tokens):
    assert codetokens.tokenize(src, language) == tokens
    assert accepted(src, language)
    assert compiled_keys([src], 1, language) == regex_keys([src], 1, language)


@pytest.mark.parametrize("src, tokens", [
    ("#define A(x) \\\n  ((x) + \\  \r\n 1)", ["#", "define", "A", "(", "x", ")", "(", "(", "x", ")", "+", "1", ")"]),
    ("a // comment \\\n still comment\nb /* c *\\\n/ d", ["a", "b", "d"]),
    ("x \\\ny\\\n z", ["x", "y", "z"]),
    ('R"d(a)" b)d" LR"(c)" u8R"--(e)--" R"(x', ['R"d(a)" b)d"', 'LR"(c)"', 'u8R"--(e)--"', "R", '"(x']),
    ("0xe+1 1.2.3 1'000u 7e- x**y a->*b", ["0xe+1", "1.2.3", "1'000u", "7e-", "x", "*", "*", "y", "a", "->*", "b"]),
    ("'open\n\"open\n'' b'x'", ["'open", '"open', "''", "b", "'x'"]),
    ('"a"s "b"_x "c"PRIx64 "d"sv "e"mins \'f\'_y \'g\'s R"(r)"_z', [
        '"a"s', '"b"_x', '"c"', "PRIx64", '"d"sv', '"e"', "mins", "'f'_y", "'g'", "s", 'R"(r)"_z']),
])
def test_c_splices_between_tokens_are_compiled_as_the_regex_gives_them(src, tokens):
    assert codetokens.tokenize(src, "c") == tokens
    assert accepted(src, "c")
    assert compiled_keys([src], 1, "c") == regex_keys([src], 1, "c")


@pytest.mark.parametrize("src", ["a\\\nb", '"a\\\nb"', "x+\\\n+", "'\\\n'", 'R"(\\\n)"', "/\\\n* c */"])
def test_c_splices_that_may_join_tokens_or_lie_in_literals_are_declined(src):
    assert not accepted(src, "c")
    assert shingled_keys([src], 1, "c") == regex_keys([src], 1, "c")


@pytest.mark.long_running
def test_shingle_texts_go_matches_the_regex_path_file_by_file_on_the_go_tree(any_go_src):
    paths = sorted(
        p for p in any_go_src.rglob("*.go")
        if "testdata" not in p.parts and not p.name.endswith("_test.go")
    )
    texts = [p.read_text(encoding="utf-8") for p in paths]
    indptr, keys = shingles.shingle_texts(texts, "code:5", languages=["go"] * len(texts), workers=1)
    assert (np.diff(indptr).tolist(), keys.tolist()) == regex_keys(texts, 5)
    buf, doc_ptr = utf8_of(texts)
    ok = go_token_keys(buf, doc_ptr, *_go_tables())[2]
    assert ok.mean() > 0.9  # the comparison is mostly of the kernel, not of the fallback


def _tree_matches_the_regex_path(root: Path, include: list[str], exclude: list[str], every: int = 1) -> None:
    """Files under ``root`` read as the CLI reads them (UTF-8 in one buffer, shingled in place, two
    threads): the same code:5 keys as the regex path, file by file."""
    corpus = read_directory(root, include=include, exclude=exclude)
    if every > 1:  # a fixed sample of a big tree (the regex path it is compared with is slow)
        corpus = read_directory([root / i for i in corpus.ids[::every]])
    assert len(corpus.ids) > 100, f"only {len(corpus.ids)} files under {root}"
    indptr, keys = shingles.shingle_texts(corpus.texts, "code:5", languages=corpus.languages, jobs=2)
    texts = list(corpus.texts)
    counts = np.diff(indptr)
    for language in sorted(set(corpus.languages), key=str):
        members = [i for i, lang in enumerate(corpus.languages) if lang == language]
        expected_counts, expected = regex_keys([texts[i] for i in members], 5, language or "c-family")
        got = [keys[indptr[i]:indptr[i + 1]].tolist() for i in members]
        offsets = np.concatenate([[0], np.cumsum(expected_counts)])
        for j, i in enumerate(members):
            assert got[j] == expected[offsets[j]:offsets[j + 1]], f"{corpus.ids[i]}: keys differ"
        assert counts[members].tolist() == expected_counts
    # The comparison is mostly of the kernels, not of the fallback.
    for language in set(corpus.languages):
        members = [i for i, lang in enumerate(corpus.languages) if lang == language]
        buf, doc_ptr = utf8_of([texts[i] for i in members])
        kernel, tables = _tokenizer(language or "c-family")
        ok = kernel(buf, doc_ptr, np.empty(len(buf) + 1, np.uint64), *tables)[1]
        assert ok.mean() > 0.95, f"{language}: {int((~ok).sum())} of {len(ok)} files declined"


def test_the_python_standard_library_gets_the_regex_paths_keys_file_by_file():
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    if not (stdlib / "os.py").is_file():
        pytest.skip(f"no Python standard library sources at {stdlib}")
    _tree_matches_the_regex_path(stdlib, ["*.py"], ["site-packages/**", "test/**"], every=2)


def test_the_c_headers_under_usr_include_get_the_regex_paths_keys_file_by_file():
    root = Path("/usr/include")
    if not (root / "stdio.h").is_file():
        pytest.skip("no C headers at /usr/include (install libc6-dev or equivalent)")
    _tree_matches_the_regex_path(root, ["*.h"], [], every=8)
