"""clang's raw lexer as an oracle for the C-family tokens of ``code:N``.

``clang -cc1 -x c++ -dump-raw-tokens FILE...`` lexes each file without
preprocessing and prints one token per line group: ``KIND 'SPELLING'``,
flags (``[StartOfLine]``, ``[UnClean='...']`` for a token with a line
splice in it), ``Loc=<FILE:LINE:COL>``.  The spelling is the token as C sees
it after translation phase 2 (splices removed).  Comments (``comment``) and
whitespace (``unknown`` of blanks only, line splices included) are dropped;
every other token is kept, ``unknown`` ones too (a stray ``@`` or ``\\``, an
unterminated literal up to the line end), as :func:`allpairs.shingles.codetokens.tokenize`
keeps them.
"""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

#: The raw-lexer command; ``-std`` is clang's default for C++ (gnu++14 in clang 14) unless given.
CLANG = ("clang", "-cc1", "-x", "c++", "-dump-raw-tokens")

_LOC = re.compile(r"\tLoc=<(.*):\d+:\d+>\n")
_TOKEN = re.compile(
    r"(\w+) '(.*)'\t((?: \[(?:StartOfLine|LeadingSpace|ExpandDisabled|UnClean='.*')\])*)", re.S)
_BLANK = re.compile(r"(?:[ \t\n\v\f\r]|\\[ \t\v\f]*(?:\r\n|\n|\r))*")


def available() -> str | None:
    """Why clang's raw lexer cannot be run here, or None when it can."""
    if shutil.which(CLANG[0]) is None:
        return "no clang on PATH (Debian: apt-get install clang)"
    return None


def clang_tokens(paths: list[Path], std: str | None = None, batch: int = 200) -> dict[str, list[str]]:
    """The kept raw tokens of each file, keyed by ``str(path)`` (one clang process per ``batch`` files)."""
    out: dict[str, list[str]] = {str(p): [] for p in paths}
    command = list(CLANG) + ([f"-std={std}"] if std else [])
    for start in range(0, len(paths), batch):
        names = [str(p) for p in paths[start:start + batch]]
        run = subprocess.run(command + names, capture_output=True, check=False)
        dump = run.stderr.decode("utf-8", "surrogateescape")
        pieces = _LOC.split(dump)  # token text, file name, token text, file name, ..., trailing text
        for text, name in zip(pieces[0::2], pieces[1::2]):
            m = _TOKEN.fullmatch(text)
            if m is None:
                raise ValueError(f"cannot read clang's token {text[:80]!r} of {name}")
            kind, spelling = m.group(1), m.group(2)
            if kind == "comment" or (kind == "unknown" and _BLANK.fullmatch(spelling)):
                continue
            out[name].append(spelling)
    return out


def first_difference(ours: list[str], theirs: list[str]) -> str | None:
    """Where two token lists part, in one line, or None when they agree."""
    if ours == theirs:
        return None
    k = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs)))
    return f"token {k}: ours {ours[k:k + 4]!r}, clang {theirs[k:k + 4]!r}"
