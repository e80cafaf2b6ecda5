"""How many C headers get the same code tokens as clang's raw lexer.

    python scripts/check_c_tokens.py [ROOT] [--language c] [--std c++20] [--show 20] [--cache FILE]

Every ``*.h`` under ROOT (default /usr/include) that is UTF-8: the tokens of
:func:`allpairs.shingles.codetokens.tokenize` against ``clang -cc1 -x c++
-dump-raw-tokens`` (comments and whitespace dropped, see tests/clang_lexer.py).
Prints the agreement, then the first difference of the first ``--show``
files that differ, grouped by the pair of tokens where they part.
"""
from __future__ import annotations

import argparse
import collections
import pickle
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO_ROOT), str(REPO_ROOT / "tests")]
from clang_lexer import available, clang_tokens, first_difference  # noqa: E402

from allpairs.shingles.codetokens import tokenize  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", nargs="?", default="/usr/include")
    parser.add_argument("--language", default="c")
    parser.add_argument("--std", default=None)
    parser.add_argument("--show", type=int, default=20)
    parser.add_argument("--cache", help="keep clang's tokens in this pickle file and reuse them")
    args = parser.parse_args()
    if (why := available()) is not None:
        print(why, file=sys.stderr)
        return 1
    paths, texts = [], []
    not_utf8 = 0
    for p in sorted(Path(args.root).rglob("*.h")):
        if not p.is_file():
            continue
        try:
            texts.append(p.read_bytes().decode("utf-8"))
        except UnicodeDecodeError:
            not_utf8 += 1
            continue
        paths.append(p)
    cache = Path(args.cache) if args.cache else None
    if cache is not None and cache.is_file():
        theirs = pickle.loads(cache.read_bytes())
    else:
        theirs = clang_tokens(paths, std=args.std)
        if cache is not None:
            cache.write_bytes(pickle.dumps(theirs))
    differ = []
    kinds: collections.Counter = collections.Counter()
    for p, text in zip(paths, texts):
        where = first_difference(tokenize(text, args.language), theirs[str(p)])
        if where is not None:
            differ.append((p, where))
            ours, clang = where.split(": ours ", 1)[1].split(", clang ")
            kinds[(ours[:40], clang[:40])] += 1
    print(f"{len(paths) - len(differ)} of {len(paths)} headers agree with clang's raw lexer "
          f"({not_utf8} not UTF-8 left out; language {args.language!r}, std {args.std or 'default'})")
    for p, where in differ[: args.show]:
        print(f"  {p}: {where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
