"""Program tokenizers for ``code:N`` shingles: Go, the C family, Python.

Two forms of each tokenizer live here:

* :func:`tokenize` is the plain-Python reference: text in, list of token
  strings out.  For Go it is a character-by-character scanner written after
  the rules of Go's own ``go/scanner`` package; for the C family and Python
  it applies :func:`token_pattern` and drops comments.
* :func:`token_pattern` and :func:`token_classes` are the regex form: one
  compiled regular expression whose ``findall`` yields every token of a text
  in one C-level pass, and a class per *distinct* token that tells a compiled
  kernel what to do with it (keep it, drop it, or treat it as a line end for
  Go's automatic semicolons).  It defines what the compiled form below
  yields, and :func:`allpairs.shingles.shingle_texts` falls back to it.

The third, compiled form of the regex path is what
:func:`allpairs.shingles.shingle_texts` runs: :mod:`allpairs.shingles._codetok_kernel`
(Go), :mod:`allpairs.shingles._codetok_c_cxx_kernel` (C and C++) and
:mod:`allpairs.shingles._codetok_c_python_kernel` (the rest of the C family, Python)
find and hash the tokens
over UTF-8 bytes, trying the regex's branches in the same order, with the
same result for any text and no Python string per token.  They hand back to
the regex path the documents where a non-ASCII character stands outside
strings and comments where Unicode letter rules decide (the start of a
token, or right after an identifier, a number or a lifetime): 7 of the 1,786
files of Python 3.11's standard library, none of the headers under a Debian
12 /usr/include, 13 of the 5,009 Go files of Go 1.27.3.

What each language yields (comments are always dropped):

Go
    Exactly the tokens of ``go/scanner`` in its default mode: identifiers and
    keywords; operators with multi-character ones as one token (``:=``,
    ``<<=``, ``&^=``, ``...``, ``<-``); literals verbatim (integers with
    ``0x``/``0o``/``0b`` prefixes and ``_`` separators, floats including hex
    floats and exponents, imaginary ``i``, runes and interpreted strings with
    their escapes, raw strings in backquotes across lines, with carriage
    returns removed as Go does); and the automatic semicolons of the Go
    specification, spelled ``;`` like an explicit one.  A semicolon is
    inserted at a line end or at the end of the file when the line's last
    token is an identifier, a literal, one of ``break continue fallthrough
    return`` or one of ``++ -- ) ] }``; a ``/* */`` comment that spans lines
    counts as a line end.  Characters that start no Go token (``@``, ``#``,
    ``?``, ``$``, a stray backslash) are skipped, where ``go/scanner`` reports
    an error.
C and C++ (``"c"``: C, C++, Objective-C, CUDA)
    As clang's raw lexer gives them in C++20 mode (checked by
    tests/test_codetokens_clang.py): line splices (a backslash, blanks, a
    line end) removed first, as translation phase 2 does; identifiers
    (``$`` allowed); preprocessing numbers (``0xe+1``, ``1.2.3``,
    ``1'000``: a sign only after ``e E p P``); strings and characters with
    the prefixes ``u8 L u U``, raw strings ``R"d(...)d"``, a closed
    literal's user-defined suffix (``_km``, or a standard one such as
    ``"s"s``); an unterminated literal up to the line end; the C++
    operators by longest match (``**`` is two tokens, ``->*`` and ``<=>``
    one); ``@``, a backquote and a stray backslash as tokens of their own.
    Not followed: digraphs, universal character names, splices kept inside
    raw strings.
Rest of the C family (``"c-family"``: Java, JavaScript, TypeScript, Rust, C#, Swift, Kotlin, ...)
    Identifiers (``$`` allowed), numbers with any suffix (``10ULL``,
    ``1.5f``, ``1_000u32``, ``10n``), string and character literals with
    their usual prefixes (``L u U u8 b``), Rust raw strings ``r#"..."#`` (up
    to three ``#``), C++ raw strings ``R"(...)"`` without a delimiter, C#
    verbatim strings ``@"..."``, JavaScript template literals, Rust
    lifetimes ``'a`` as one token, and operators by longest match.  ``//``
    and ``/* */`` comments are dropped.  Regular-expression literals of
    JavaScript are not recognised (they come out as operators and words).
Python
    Identifiers, numbers (``0x``, ``0o``, ``0b``, ``_``, exponents, ``j``),
    strings with every prefix (``r b u f t`` and their pairs) single- or
    triple-quoted, operators by longest match (``**=``, ``//=``, ``->``,
    ``:=``, ``...``).  ``#`` comments are dropped; no NEWLINE, INDENT or
    DEDENT tokens are produced, and f-strings that nest the same quote
    (Python 3.12) are not split correctly.

Unknown languages (``None``) use the ``"c-family"`` tokenizer.
"""
from __future__ import annotations

import functools
import re
import sys
import unicodedata

from allpairs.errors import UsageError
from ..corpus.languages import language_for_path  # noqa: F401 (re-exported: the tokenizer for a file)

#: The tokenizer names accepted by :func:`tokenize`; ``None`` means "c-family".
LANGUAGES = ("go", "c", "c-family", "python")

# Token classes, one per distinct token, read by the compiled kernel.
#: An ordinary token; after it a line end inserts nothing.
PLAIN = 0
#: A Go token after which a line end (or the end of the file) inserts ``;``.
SEMI_AFTER = 1
#: A Go line end: a newline, or a ``/* */`` comment that spans lines.
LINE_END = 2
#: Not a token: comments, and the empty string that ``findall`` yields for them.
DROP = 3

_GO_KEYWORDS = frozenset(
    "break case chan const continue default defer else fallthrough for func go goto if "
    "import interface map package range return select struct switch type var".split()
)
#: The keywords after which Go inserts a semicolon at a line end.
_GO_SEMI_KEYWORDS = frozenset(("break", "continue", "fallthrough", "return"))
_GO_SEMI_OPERATORS = frozenset(("++", "--", ")", "]", "}"))
_GO_OPERATORS = (
    "<<= >>= &^= ... && || <- ++ -- == != <= >= := += -= *= /= %= &= |= ^= << >> &^ "
    "+ - * / % & | ^ < > = ! ~ ( ) [ ] { } , ; . :"
).split()
_C_OPERATORS = (
    ">>>= <<= >>= ... === !== **= >>> <=> ..= &&= ||= ??= "
    "-> ++ -- << >> <= >= == != && || += -= *= /= %= &= |= ^= :: => ** ?? .. ## "
    "+ - * / % & | ^ ~ ! < > = ? : ; , . ( ) [ ] { } # @ \\ '"
).split()
# C and C++ (C++20): no ** ?? === >>> and the like, which are two tokens or more there.
_CXX_OPERATORS = (
    "... ->* <<= >>= <=> -> ++ -- << >> <= >= == != && || += -= *= /= %= &= |= ^= :: ## .* "
    "+ - * / % & | ^ ~ ! < > = ? : ; , . ( ) [ ] { } # @ \\ `"
).split()
_PY_OPERATORS = (
    "**= //= >>= <<= ... -> := ** // << >> <= >= == != += -= *= /= %= &= |= ^= @= "
    "+ - * / % @ & | ^ ~ < > ( ) [ ] { } , : ; . = !"
).split()


def _alternation(operators: list[str]) -> str:
    """A regex that matches the longest of ``operators`` (alternatives are tried in order)."""
    ordered = sorted(operators, key=len, reverse=True)
    return "|".join(re.escape(op) for op in ordered)


# Code-point ranges of :func:`_not_go_letters` under Python's own Unicode tables, so that
# Python 3.10-3.13 need not scan all of Unicode (about a second); a test checks them.
_NOT_GO_LETTERS_13 = (
    (0xb2, 0xb3), (0xb9, 0xb9), (0xbc, 0xbe), (0x9f4, 0x9f9), (0xb72, 0xb77),
    (0xbf0, 0xbf2), (0xc78, 0xc7e), (0xd58, 0xd5e), (0xd70, 0xd78), (0xf2a, 0xf33),
    (0x1369, 0x137c), (0x16ee, 0x16f0), (0x17f0, 0x17f9), (0x19da, 0x19da), (0x2070, 0x2070),
    (0x2074, 0x2079), (0x2080, 0x2089), (0x2150, 0x2182), (0x2185, 0x2189), (0x2460, 0x249b),
    (0x24ea, 0x24ff), (0x2776, 0x2793), (0x2cfd, 0x2cfd), (0x3007, 0x3007), (0x3021, 0x3029),
    (0x3038, 0x303a), (0x3192, 0x3195), (0x3220, 0x3229), (0x3248, 0x324f), (0x3251, 0x325f),
    (0x3280, 0x3289), (0x32b1, 0x32bf), (0xa6e6, 0xa6ef), (0xa830, 0xa835), (0x10107, 0x10133),
    (0x10140, 0x10178), (0x1018a, 0x1018b), (0x102e1, 0x102fb), (0x10320, 0x10323), (0x10341, 0x10341),
    (0x1034a, 0x1034a), (0x103d1, 0x103d5), (0x10858, 0x1085f), (0x10879, 0x1087f), (0x108a7, 0x108af),
    (0x108fb, 0x108ff), (0x10916, 0x1091b), (0x109bc, 0x109bd), (0x109c0, 0x109cf), (0x109d2, 0x109ff),
    (0x10a40, 0x10a48), (0x10a7d, 0x10a7e), (0x10a9d, 0x10a9f), (0x10aeb, 0x10aef), (0x10b58, 0x10b5f),
    (0x10b78, 0x10b7f), (0x10ba9, 0x10baf), (0x10cfa, 0x10cff), (0x10e60, 0x10e7e), (0x10f1d, 0x10f26),
    (0x10f51, 0x10f54), (0x10fc5, 0x10fcb), (0x11052, 0x11065), (0x111e1, 0x111f4), (0x1173a, 0x1173b),
    (0x118ea, 0x118f2), (0x11c5a, 0x11c6c), (0x11fc0, 0x11fd4), (0x12400, 0x1246e), (0x16b5b, 0x16b61),
    (0x16e80, 0x16e96), (0x1d2e0, 0x1d2f3), (0x1d360, 0x1d378), (0x1e8c7, 0x1e8cf), (0x1ec71, 0x1ecab),
    (0x1ecad, 0x1ecaf), (0x1ecb1, 0x1ecb4), (0x1ed01, 0x1ed2d), (0x1ed2f, 0x1ed3d), (0x1f100, 0x1f10c),
)
# Unicode 15 adds the Kaktovik numerals (U+1D2C0-U+1D2D3).
_NOT_GO_LETTERS_15 = tuple(sorted(_NOT_GO_LETTERS_13 + ((0x1d2c0, 0x1d2d3),)))
_NOT_GO_LETTERS = {"13.0.0": _NOT_GO_LETTERS_13, "14.0.0": _NOT_GO_LETTERS_13,
                   "15.0.0": _NOT_GO_LETTERS_15, "15.1.0": _NOT_GO_LETTERS_15}


@functools.lru_cache(maxsize=1)
def _not_go_letters() -> str:
    """Characters that Python's ``\\w`` accepts but Go's identifiers do not.

    ``\\w`` is ``str.isalnum()`` plus ``_``; Go letters are ``str.isalpha()``
    (Unicode category L) plus ``_`` and Go digits ``str.isdecimal()`` (Nd).
    The difference is numeric characters such as ``²`` or ``Ⅻ``; they are
    returned as a regex character-class body (a few dozen ranges).
    """
    ranges = _NOT_GO_LETTERS.get(unicodedata.unidata_version) or _scan_not_go_letters()
    return "".join(f"\\U{a:08x}-\\U{b:08x}" for a, b in ranges)


def _scan_not_go_letters() -> list[tuple[int, int]]:
    """The ranges of :func:`_not_go_letters`, found by testing every code point."""
    ranges: list[list[int]] = []
    for cp in range(sys.maxunicode + 1):
        ch = chr(cp)
        if ch.isalnum() and not (ch.isalpha() or ch.isdecimal()):
            if ranges and ranges[-1][1] == cp - 1:
                ranges[-1][1] = cp
            else:
                ranges.append([cp, cp])
    return [(a, b) for a, b in ranges]


def _identifier(excluded: str = "", extra: str = "") -> str:
    """An identifier: a letter or ``_`` (or ``extra``), then letters, digits, ``_``.

    Letters and digits are those of Python's ``\\w`` less the ``excluded``
    class body.  ASCII runs are matched by a tight ASCII class and only the
    rare non-ASCII character pays for the Unicode class; with the layout
    below this makes findall about 2.5 times as fast on real source.
    """
    ascii_cont = f"[A-Za-z0-9_{extra}]*+"
    return (
        rf"(?:[A-Za-z_{extra}]|[^\x00-\x7f\W\d{excluded}]){ascii_cont}"
        rf"(?:[^\x00-\x7f\W{excluded}]{ascii_cont})*+"
    )


# The regexes below share one layout, chosen for the speed of findall:
#   leading blanks, consumed with the next match (so that blank positions are
#   not each tried as a failing match start) | comments outside the group
#   (findall yields "" for them) | ( the frequent branches first: identifiers,
#   numbers; then literals; operators last, longest first ).
# Branch order matters only where two branches can start at the same
# character: comments before "/", numbers before ".", literals with a letter
# prefix before identifiers (the first identifier branch refuses to be
# followed by a quote; an unrestricted one comes after the literals).


def _go_regex() -> str:
    digits, hexdigits = "[0-9_]*+", "[0-9a-fA-F_]*+"
    number = (
        rf"(?:0[xX]{hexdigits}(?:\.{hexdigits})?"
        rf"|0[oObB]{digits}(?:\.{digits})?"
        rf"|[0-9]{digits}(?:\.{digits})?"
        rf"|\.[0-9]{digits})"
        rf"(?:[eEpP][+-]?{digits})?i?"
    )
    return (
        r"[ \t\r]*+(?://[^\n]*+|("
        + _identifier(_not_go_letters())
        # A newline with the blank lines after it: one line end.
        + r"|\n[ \t\r\n]*+"
        + rf"|{number}"
        + r"|/\*[\s\S]*?(?:\*/|\Z)"  # block comment: a line end if it spans lines
        r"|`[^`]*+`?"  # raw string, may span lines
        # Interpreted strings and runes end at their quote or before a newline;
        # a backslash consumes the next character unless it is a newline, which
        # gives the same extent as go/scanner's escape handling.
        r'|"(?:[^"\\\n]|\\[^\n]?)*+"?'
        r"|'(?:[^'\\\n]|\\[^\n]?)*+'?"
        + rf"|{_alternation(_GO_OPERATORS)}))"
    )


def _c_regex() -> str:
    prefix = r"(?:u8|[LuUb])?"
    escape = r"\\(?:[0-7]{1,3}|x[0-9a-fA-F]+|u\{[0-9a-fA-F]*\}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[^\n])"
    rust_raw = "|".join(rf'b?r{"#" * k}"[\s\S]*?"{"#" * k}' for k in (3, 2, 1))
    number = (
        r"(?:0[xX](?:[0-9a-fA-F_]|'(?=[0-9a-fA-F]))*+(?:\.[0-9a-fA-F_]*+)?(?:[pP][+-]?[0-9_]*+)?"
        r"|(?:[0-9](?:[0-9_]|'(?=[0-9]))*+(?:\.(?!\.)[0-9_]*+)?|\.[0-9][0-9_]*+)(?:[eE][+-]?[0-9_]*+)?"
        r")\w*+"
    )
    ident = _identifier(extra="$")
    return (
        r"[ \t\r\n\f\v]*+(?://[^\n]*+|/\*[\s\S]*?(?:\*/|\Z)|("
        rf"{ident}(?![\"'#])"
        rf"|{number}"
        r'|"(?:[^"\\\n]|\\[\s\S])*+"?'
        rf"|'(?:[^'\\\n]|{escape})'"
        r"|'[^\W\d]\w*+(?!')"  # Rust lifetime or label
        rf"|{rust_raw}"
        r'|b?r"[^"]*+"'
        r'|(?:u8|[LuU])?R"\([\s\S]*?\)"'
        r'|@"(?:[^"]|"")*+"'
        rf'|{prefix}"(?:[^"\\\n]|\\[\s\S])*+"?'
        rf"|{prefix}'(?:[^'\\\n]|{escape})'"
        r"|`(?:[^`\\]|\\[\s\S])*+`?"
        rf"|{ident}"
        rf"|{_alternation(_C_OPERATORS)}))"
    )


def _cxx_regex() -> str:
    """C and C++ after line splicing, as clang's raw lexer tokenizes them (C++20)."""
    ident = _identifier(extra="$")
    prefix = r"(?:u8|[LuU])?"
    # A preprocessing number (C11 6.4.8, C++20 [lex.ppnumber]): a sign only after e E p P.
    number = r"\.?[0-9](?:[0-9A-Za-z_.]|(?<=[eEpP])[+-]|'(?=[0-9A-Za-z_]))*+"
    # A closed literal's user-defined suffix (C++20 [lex.ext]): one starting with _, or, after a string, one
    # of the standard library's as a whole identifier (clang's isValidUDSuffix).
    suffix = r"(?:_[A-Za-z0-9_]*+|(?:min|ms|us|ns|il|if|sv|[shidy])(?![A-Za-z0-9_]))?"
    char_suffix = r"(?:_[A-Za-z0-9_]*+)?"
    return (
        r"[ \t\r\n\f\v]*+(?://[^\n]*+|/\*[\s\S]*?(?:\*/|\Z)|("
        rf"{ident}(?![\"'])"
        rf"|{number}"
        rf'|{prefix}R"([^ ()\\\t\v\f\r\n]{{0,16}})\([\s\S]*?\)\2"{suffix}'  # raw string R"d(...)d"
        # An unterminated literal runs to the line end (clang's "unknown" token).
        rf'|{prefix}"(?:[^"\\\n]|\\[\s\S])*+(?:"{suffix})?'
        rf"|{prefix}'(?:[^'\\\n]|\\[\s\S])*+(?:'{char_suffix})?"
        rf"|{ident}"
        rf"|{_alternation(_CXX_OPERATORS)}))"
    )


#: A line splice of C and C++ (translation phase 2): a backslash, blanks (as clang and gcc allow), a line end.
_SPLICE = re.compile(r"\\[ \t\v\f]*(?:\r\n|\n|\r)")


def _python_regex() -> str:
    prefix = r"(?:[rRbBfFtT]{1,2}|[uU])?"
    ident = _identifier()
    return (
        r"[ \t\r\n\f]*+(?:#[^\n]*+|("
        rf"{ident}(?![\"'])"
        r"|(?:0[xX][0-9a-fA-F_]*+|0[oObB][0-9_]*+"
        r"|(?:[0-9][0-9_]*+(?:\.[0-9_]*+)?|\.[0-9][0-9_]*+)(?:[eE][+-]?[0-9_]*+)?)[jJ]?"
        rf"|{prefix}'''(?:[^'\\]|\\[\s\S]|'(?!''))*+(?:'''|\Z)"
        rf'|{prefix}"""(?:[^"\\]|\\[\s\S]|"(?!""))*+(?:"""|\Z)'
        rf"|{prefix}'(?:[^'\\\n]|\\[\s\S])*+'?"
        rf'|{prefix}"(?:[^"\\\n]|\\[\s\S])*+"?'
        rf"|{ident}"
        rf"|{_alternation(_PY_OPERATORS)}))"
    )


def _check_language(language: str | None) -> str:
    if language is None:
        return "c-family"
    if language not in LANGUAGES:
        raise UsageError(
            f"unknown program language {language!r}; use one of {', '.join(LANGUAGES)} "
            "(or None for the C-family tokenizer)"
        )
    return language


@functools.lru_cache(maxsize=None)
def token_pattern(language: str | None) -> re.Pattern[str]:
    """The compiled tokenizer of ``language`` for :meth:`re.Pattern.findall`.

    ``pattern.findall(text)`` returns every token of ``text`` in order, with
    comments among them: a dropped comment comes out as ``""`` (line
    comments) or as its text (block comments, which Go needs to tell whether
    they span lines), and for Go each newline comes out as ``"\\n"``.
    :func:`token_class` says which of them are tokens.
    """
    language = _check_language(language)
    source = {"go": _go_regex, "c": _cxx_regex, "c-family": _c_regex, "python": _python_regex}[language]()
    return re.compile(source)


@functools.lru_cache(maxsize=None)
def token_findall(language: str | None):
    """``text -> list of str``: :func:`token_pattern`'s ``findall``, after line splicing for ``"c"``
    (whose pattern has a second group, a raw string's delimiter)."""
    findall = token_pattern(language).findall
    if _check_language(language) != "c":
        return findall
    splice = _SPLICE.sub

    def c_findall(text: str) -> list[str]:
        return [token for token, _ in findall(splice("", text) if "\\" in text else text)]

    return c_findall


def token_class(token: str, language: str | None) -> int:
    """The class of one string that ``token_pattern(language).findall`` returned.

    One of :data:`PLAIN`, :data:`SEMI_AFTER` (Go only: a line end after it
    inserts ``;``), :data:`LINE_END` (Go only) and :data:`DROP`.
    """
    return token_classes([token], language)[0]


def token_classes(tokens: list[str], language: str | None) -> list[int]:
    """:func:`token_class` of each of ``tokens`` (one call per batch of new tokens)."""
    language = _check_language(language)
    if language != "go":
        # Comments are matched outside the group for C and Python: they are "".
        return [PLAIN if token else DROP for token in tokens]
    fixed = _GO_FIXED_CLASSES
    return [fixed[t] if t in fixed else _go_open_class(t) for t in tokens]


def _go_open_class(token: str) -> int:
    """Class of a Go token that is no operator and no keyword."""
    if not token:
        return DROP  # a line comment
    first = token[0]
    if first == "\n":
        return LINE_END
    if first == "/":  # "/" and "/=" are operators: this is a block comment
        return LINE_END if "\n" in token else DROP
    return SEMI_AFTER  # identifier, number, string, rune


#: Classes of the Go tokens with a fixed spelling: operators and keywords.
_GO_FIXED_CLASSES = {
    **{op: SEMI_AFTER if op in _GO_SEMI_OPERATORS else PLAIN for op in _GO_OPERATORS},
    **{kw: SEMI_AFTER if kw in _GO_SEMI_KEYWORDS else PLAIN for kw in _GO_KEYWORDS},
}


def token_spelling(token: str, language: str | None) -> str:
    """The spelling a token is hashed by: Go drops carriage returns from raw strings."""
    if language == "go" and token.startswith("`") and "\r" in token:
        return token.replace("\r", "")
    return token


def tokenize(text: str, language: str | None) -> list[str]:
    """The program tokens of ``text``, comments dropped (plain-Python reference).

    Parameters
    ----------
    text : str
        Source code.
    language : {"go", "c", "c-family", "python"} or None
        The tokenizer; ``None`` means "c-family".

    Returns
    -------
    list of str
        The tokens in order.  For Go the automatic semicolons are included
        and spelled ``";"``; see the module docstring for what each language
        yields.

    Raises
    ------
    UsageError
        If ``language`` is not one of :data:`LANGUAGES` or None.
    """
    language = _check_language(language)
    if language == "go":
        from .goscan import scan_go  # here: goscan reads this module's Go tables

        return scan_go(text)[0]
    return [tok for tok in token_findall(language)(text) if tok]
