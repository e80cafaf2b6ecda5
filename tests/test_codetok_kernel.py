"""The compiled Go tokenizer gives the same code:N keys as the regex path, for any text.

The regex path (``codetokens.token_pattern("go").findall``, vocabulary ids,
``_shingle_kernel.code_stream``) is the definition; the kernel either agrees
with it key for key or declines the document, which then goes by the regex
path.  Both are compared here on random Go-ish texts and on the Go tree.
"""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from allpairs import shingles
from allpairs._codetok_kernel import go_token_keys
from allpairs.shingles import ShingleSpec, _CodeTokens, _go_shingles, _go_tables, _seed, _utf8

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


go_texts = st.lists(st.sampled_from(_PIECES), max_size=40).map("".join)
ascii_go_texts = st.lists(st.sampled_from([p for p in _PIECES if p.isascii()]), max_size=40).map("".join)


def regex_keys(texts: list[str], n: int) -> tuple[list[int], list[int]]:
    counts, keys = _CodeTokens("go")._regex_shingles(texts, n, _seed(ShingleSpec("code", n)))
    return counts.tolist(), keys.tolist()


def compiled_keys(texts: list[str], n: int) -> tuple[list[int], list[int]]:
    def refuse(docs, n, seed):
        raise AssertionError("the kernel declined a document")

    with np.errstate(over="ignore"):
        counts, keys = _go_shingles(texts, n, _seed(ShingleSpec("code", n)), refuse)
    return counts.tolist(), keys.tolist()


def accepted(text: str) -> bool:
    buf, doc_ptr = _utf8([text])
    return bool(go_token_keys(buf, doc_ptr, *_go_tables())[2][0])


@settings(max_examples=400, deadline=None)
@given(ascii_go_texts, st.integers(1, 3))
def test_the_kernel_takes_every_ascii_text_and_agrees_with_the_regex_path(text, n):
    assert compiled_keys([text], n) == regex_keys([text], n)


@settings(max_examples=300, deadline=None)
@given(st.lists(go_texts, max_size=5), st.integers(1, 3))
def test_go_shingles_agree_with_the_regex_path_with_unicode_declined_documents_included(texts, n):
    with np.errstate(over="ignore"):
        spec = ShingleSpec("code", n)
        counts, keys = shingles._go_shingles(texts, n, _seed(spec), _CodeTokens("go")._regex_shingles)
    assert (counts.tolist(), keys.tolist()) == regex_keys(texts, n)


@settings(max_examples=200, deadline=None)
@given(go_texts)
def test_the_kernel_declines_only_texts_with_non_ascii_outside_literals_and_comments(text):
    if text.isascii():
        assert accepted(text)
    if accepted(text):
        assert compiled_keys([text], 1) == regex_keys([text], 1)


def test_non_ascii_in_strings_and_comments_is_compiled_but_in_identifiers_declined():
    assert accepted('x := "é" // ü\n/* 日本 */ y := `𝔘\r`\n')
    assert not accepted("é := 1\n")
    assert not accepted("xé := 1\n")
    assert not accepted("\ufeffpackage p\n")
    assert not accepted("x := 1² \n")


def test_shingle_texts_go_matches_the_regex_path_file_by_file_on_the_go_tree(go_reference_src):
    paths = sorted(
        p for p in go_reference_src.rglob("*.go")
        if "testdata" not in p.parts and not p.name.endswith("_test.go")
    )
    texts = [p.read_text(encoding="utf-8") for p in paths]
    indptr, keys = shingles.shingle_texts(texts, "code:5", languages=["go"] * len(texts), workers=1)
    assert (np.diff(indptr).tolist(), keys.tolist()) == regex_keys(texts, 5)
    buf, doc_ptr = _utf8(texts)
    ok = go_token_keys(buf, doc_ptr, *_go_tables())[2]
    assert ok.mean() > 0.9  # the comparison is mostly of the kernel, not of the fallback
