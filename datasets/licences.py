"""Licence texts and their near-copies: a corpus of many near-duplicate documents, one a line.

The shape of a licence-detection rule base (ScanCode's rules: tens of
thousands of notices and full texts, most of them near-copies of a few
hundred licences): every paragraph of at least :data:`MIN_WORDS` words of
Debian's machine-readable copyright files (``/usr/share/doc/*/copyright``,
where the same GPL, BSD and MIT paragraphs recur in hundreds of packages with
other names and years), and every licence of ``/usr/share/common-licenses``
whole and by paragraph, each distinct text once, in path order; then seeded
near-copies of them (a copy of an earlier document, chosen uniformly, cut to
an excerpt now and then and given a few one-word edits) up to ``n``
documents. The random choices come from :class:`datasets.synthetic._Uniforms`,
so a seed gives the same corpus wherever the same Debian packages are
installed (the base texts are the machine's own: another set of packages
gives another corpus).

Command line (one document a line, for ``allpairs sets --lines``)::

    python -m datasets.licences --n 35000 -o licences.txt
    python -m allpairs sets --lines licences.txt -s word:3 -o licences.sets -q
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from datasets import missing
import numpy as np

from datasets.synthetic import _Uniforms, _write_text, _zipf_cdf

__all__ = ["COPYRIGHT_GLOB", "LICENCES", "MIN_WORDS", "base_texts", "licence_documents"]

#: Debian's licence texts, and where each package's copyright file lies.
LICENCES = Path("/usr/share/common-licenses")
COPYRIGHT_GLOB = "/usr/share/doc/*/copyright"
#: Paragraphs shorter than this many words (headers, ``Files:`` stanzas) are left out.
MIN_WORDS = 10
#: Share of copies cut to an excerpt, and the most of a text an excerpt drops.
EXCERPT_SHARE, EXCERPT_DROP = 0.3, 0.2
#: Share of copies made of a base text (drawn by a Zipf popularity of exponent POPULARITY_SKEW, as a
#: few licences are copied far more than the rest); the others copy any earlier document, uniformly.
BASE_SHARE, POPULARITY_SKEW = 0.5, 1.0
#: A copy gets up to one edit per this many words (at least one).
WORDS_PER_EDIT = 8


def _paragraphs(text: str) -> list[list[str]]:
    return [p.split() for p in re.split(r"\n\s*\n", text) if len(p.split()) >= MIN_WORDS]


def base_texts(licences: Path = LICENCES, copyright_glob: str = COPYRIGHT_GLOB) -> list[list[str]]:
    """The distinct texts (as word lists) the copies are made from, in path order.

    Raises
    ------
    FileNotFoundError
        When neither the licences nor any copyright file is there.
    """
    root = Path(copyright_glob.split("*")[0])
    files = sorted(root.glob(copyright_glob[len(str(root)) + 1:])) if root.is_dir() else []
    whole = sorted(licences.iterdir()) if licences.is_dir() else []
    if not files and not whole:
        raise missing("Debian's licence texts", [str(licences), copyright_glob],
                      ["apt-get install base-files (every Debian system has them)"])
    texts: list[list[str]] = []
    for path in whole:
        if path.is_file():
            text = path.read_text(errors="replace")
            texts.append(text.split())
            texts.extend(_paragraphs(text))
    for path in files:
        texts.extend(_paragraphs(path.read_text(errors="replace")))
    seen: set[str] = set()
    distinct = []
    for words in texts:
        key = " ".join(words)
        if len(words) >= MIN_WORDS and key not in seen:
            seen.add(key)
            distinct.append(words)
    return distinct


def licence_documents(n: int = 35000, seed: int = 0, base: list[list[str]] | None = None) -> list[str]:
    """``n`` documents (one line each, words separated by a space): the base texts, then near-copies.

    A copy takes an earlier document (uniformly: copies of copies make the
    large clusters a rule base has), with chance :data:`EXCERPT_SHARE` drops
    up to :data:`EXCERPT_DROP` of it from the start or the end, then makes up
    to ``len // WORDS_PER_EDIT`` one-word edits (a word substituted by, or
    inserted as, a word of another base text; or a word deleted). Fewer than
    the base texts: the first ``n`` of them.
    """
    if n < 0:
        raise ValueError(f"n = {n} is negative")
    docs = [list(words) for words in (base_texts() if base is None else base)][:n]
    if not docs:
        return []
    pool = [w for words in docs for w in words]
    u = _Uniforms(seed)
    n_base = len(docs)
    popular = np.argsort(u.take(n_base), kind="stable")  # the base texts in a seeded order of popularity
    cdf = _zipf_cdf(n_base, POPULARITY_SKEW)
    while len(docs) < n:
        if u.one() < BASE_SHARE:
            source = int(popular[min(int(np.searchsorted(cdf, u.one(), side="right")), n_base - 1)])
        else:
            source = u.below(len(docs))
        body = list(docs[source])
        if u.one() < EXCERPT_SHARE and len(body) > MIN_WORDS:
            cut = min(len(body) - MIN_WORDS, u.below(int(EXCERPT_DROP * len(body)) + 1))
            body = body[cut:] if u.one() < 0.5 else body[: len(body) - cut]
        for _ in range(u.below(max(1, len(body) // WORDS_PER_EDIT) + 1)):
            op, at = u.one(), u.below(len(body))
            if op < 0.5:
                body[at] = pool[u.below(len(pool))]
            elif op < 0.75 or len(body) <= 1:
                body.insert(at, pool[u.below(len(pool))])
            else:
                del body[at]
        docs.append(body)
    return [" ".join(words) for words in docs]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m datasets.licences",
                                     description="Write licence texts and seeded near-copies, one document a line.")
    parser.add_argument("--n", type=int, default=35000, help="documents (default %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="PCG64 seed (default %(default)s)")
    parser.add_argument("-o", "--output", default="-", help="output file, - for stdout (default)")
    args = parser.parse_args(argv)
    try:
        _write_text(args.output, "".join(d + "\n" for d in licence_documents(args.n, args.seed)))
    except (ValueError, FileNotFoundError, OSError) as exc:
        print(f"python -m datasets.licences: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
