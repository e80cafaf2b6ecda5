"""The Go reference scanner of :func:`allpairs.shingles.codetokens.tokenize`: it follows go/scanner
(Go 1.19-1.27) step by step, so that the regex path and the compiled kernel can be checked against it on
random texts without a Go toolchain."""
from __future__ import annotations

from .codetokens import _GO_KEYWORDS, _GO_OPERATORS, _GO_SEMI_KEYWORDS, _GO_SEMI_OPERATORS


_HEX = "0123456789abcdefABCDEF"


def _go_letter(ch: str) -> bool:
    return ch == "_" or ch.isalpha()


def _digit_value(ch: str) -> int:
    if "0" <= ch <= "9":
        return ord(ch) - ord("0")
    if "a" <= ch.lower() <= "f" and ch.isascii():
        return ord(ch.lower()) - ord("a") + 10
    return 16


def _go_escape_end(src: str, j: int, quote: str) -> int:
    """End of the escape whose backslash ends at ``j`` (go/scanner's scanEscape)."""
    ch = src[j] if j < len(src) else ""
    if ch and (ch in "abfnrtv\\" or ch == quote):
        return j + 1
    if ch and ch in "01234567":
        count, base = 3, 8
    elif ch == "x":
        j, count, base = j + 1, 2, 16
    elif ch == "u":
        j, count, base = j + 1, 4, 16
    elif ch == "U":
        j, count, base = j + 1, 8, 16
    else:
        return j  # unknown escape: the character is read again as content
    while count > 0:
        if j >= len(src) or _digit_value(src[j]) >= base:
            return j
        j += 1
        count -= 1
    return j


def _go_quoted_end(src: str, i: int, quote: str) -> int:
    """End of the string or rune literal opening at ``i`` (scanString, scanRune)."""
    j = i + 1
    while True:
        if j >= len(src) or src[j] == "\n":
            return j  # not terminated
        ch = src[j]
        j += 1
        if ch == quote:
            return j
        if ch == "\\":
            j = _go_escape_end(src, j, quote)


def _go_digits_end(src: str, j: int, base: int) -> int:
    allowed = "0123456789_" if base <= 10 else _HEX + "_"
    while j < len(src) and src[j] in allowed:
        j += 1
    return j


def _go_number_end(src: str, i: int) -> int:
    """End of the number literal starting at ``i`` (scanNumber)."""
    n, j, base = len(src), i, 10
    if src[j] != ".":
        if src[j] == "0":
            j += 1
            nxt = src[j] if j < n else ""
            if nxt and nxt in "xX":
                j, base = j + 1, 16
            elif nxt and nxt in "oObB":
                j, base = j + 1, (8 if nxt in "oO" else 2)
            else:
                base = 8
        j = _go_digits_end(src, j, base)
    if j < n and src[j] == ".":
        j = _go_digits_end(src, j + 1, base)
    if j < n and src[j] in "eEpP":
        j += 1
        if j < n and src[j] in "+-":
            j += 1
        j = _go_digits_end(src, j, 10)
    if j < n and src[j] == "i":
        j += 1
    return j


def _go_comment_end(src: str, i: int) -> int:
    if src[i + 1] == "/":
        end = src.find("\n", i)
        return len(src) if end < 0 else end
    end = src.find("*/", i + 2)
    return len(src) if end < 0 else end + 2


def _go_line_end_follows(src: str, i: int) -> bool:
    """Whether the comments starting at ``i`` reach a line end (findLineEnd)."""
    n = len(src)
    while i + 1 < n and src[i] == "/" and src[i + 1] in "/*":
        if src[i + 1] == "/":
            return True  # a line comment always ends the line
        k = i + 2
        while k < n:
            if src[k] == "\n":
                return True
            if src[k] == "*" and k + 1 < n and src[k + 1] == "/":
                k += 2
                break
            k += 1
        while k < n and src[k] in " \t\r":
            k += 1
        if k >= n or src[k] == "\n":
            return True
        i = k
    return False


def scan_go(src: str) -> tuple[list[str], int]:
    """Go tokens of ``src`` and the number of characters go/scanner would call illegal."""
    out: list[str] = []
    illegal = 0
    n = len(src)
    i = 1 if src.startswith("\ufeff") else 0
    semi = False  # go/scanner's insertSemi: a line end now ends a statement
    while True:
        while i < n and (src[i] in " \t\r" or (src[i] == "\n" and not semi)):
            i += 1
        if i >= n:
            if semi:
                out.append(";")
            return out, illegal
        ch = src[i]
        nxt = src[i + 1] if i + 1 < n else ""
        if _go_letter(ch):
            j = i + 1
            while j < n and (_go_letter(src[j]) or src[j].isdecimal()):
                j += 1
            word = src[i:j]
            out.append(word)
            semi = word not in _GO_KEYWORDS or word in _GO_SEMI_KEYWORDS
            i = j
        elif "0" <= ch <= "9" or (ch == "." and nxt and "0" <= nxt <= "9"):
            j = _go_number_end(src, i)
            out.append(src[i:j])
            semi, i = True, j
        elif ch == "\n":  # reached only when semi is set
            out.append(";")
            semi, i = False, i + 1
        elif ch in "\"'":
            j = _go_quoted_end(src, i, ch)
            out.append(src[i:j])
            semi, i = True, j
        elif ch == "`":
            j = src.find("`", i + 1)
            j = n if j < 0 else j + 1
            out.append(src[i:j].replace("\r", ""))
            semi, i = True, j
        elif ch == "/" and nxt and nxt in "/*":
            if semi and _go_line_end_follows(src, i):
                # The comment stands for the line end; it is skipped next round.
                out.append(";")
                semi = False
            else:
                i = _go_comment_end(src, i)
                semi = False
        else:
            for size in (3, 2, 1):
                op = src[i : i + size]
                if len(op) == size and op in _GO_OPERATOR_SET:
                    out.append(op)
                    semi = op in _GO_SEMI_OPERATORS
                    i += size
                    break
            else:
                illegal += 1
                i += 1  # an illegal character leaves semi as it was


_GO_OPERATOR_SET = frozenset(_GO_OPERATORS)
