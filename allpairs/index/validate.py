"""What a loaded index file holds, checked once, vectorised, before any kernel sees it.

The kernels of :mod:`allpairs.index._kernel` run without bounds checks and
assume what :meth:`SearchIndex.save` writes: ranks within the vocabulary,
offsets that rise to the end of their arrays, postings naming real sets at
real positions. A file that anyone can edit (and re-sign: the SHA-256 is not
keyed) must not make them read or write out of bounds, nor give silently
wrong answers, so every header field and every array is checked here against
what the writer would have produced: dtype, shape, monotonicity, range, and
the postings against the sets they index. Each check is a numpy pass over an
array, or for the sets and postings one compiled sequential pass over each
(:func:`~allpairs.index._kernel.check_postings`), linear in the file and
cheap against its checksum. A failure is one :class:`~allpairs.index.store.IndexFileError` line
naming the array and the first offending value.
"""
from __future__ import annotations

import os
from fractions import Fraction
from typing import Callable

import numpy as np

from ..errors import UsageError
from ..measures import JOIN_MEASURES, parse_threshold
from ..shingles import ShingleSpec
from ._kernel import (CHECK_POSTING_ORDER, CHECK_POSTING_POSITION, CHECK_POSTING_SET, CHECK_POSTINGS_COUNT,
                      CHECK_POSTINGS_DIFFER, CHECK_TOKEN_ORDER, CHECK_TOKEN_RANGE, check_postings)
from .store import IndexFileError

#: The arrays of an index file: dtype and number of dimensions.
ARRAYS = {
    "slot_keys": ("<u8", 1), "lookup_keys": ("<u8", 1), "lookup_ranks": ("<i4", 1),
    "indptr": ("<i8", 1), "tokens": ("<i4", 1), "set_doc_ptr": ("<i8", 1), "set_docs": ("<i4", 1),
    "id_ptr": ("<i8", 1), "id_bytes": ("|u1", 1), "list_ptr": ("<i8", 1), "post": ("<i4", 2),
}

#: The most columns an index carries beside its ids.
MAX_COLUMNS = 1000

#: Ids (sets, documents, tokens) are int32.
_MAX_ID = 2**31 - 1


def _damaged(path, what: str) -> IndexFileError:
    return IndexFileError(f"index {path} is damaged ({what}); build it again")


def _int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def check_meta(meta: dict, path, *, key_version: int, tokens_label: str) -> dict:
    """The header's meta fields, each of the type and range the writer gives it; raises IndexFileError."""
    for key in ("key_version", "measure", "p", "q", "label", "normalize", "min_shingles", "v0"):
        if key not in meta:
            raise _damaged(path, f"no {key!r}")
    if meta["key_version"] != key_version:
        raise IndexFileError(f"index {path} holds shingle keys of version {meta['key_version']!r}, this "
                             f"allpairs makes version {key_version}; build it again with this version")
    measure = meta["measure"]
    if not isinstance(measure, str) or measure not in JOIN_MEASURES:
        raise IndexFileError(f"index {path} uses the measure {measure!r}, unknown to this allpairs")
    p, q = meta["p"], meta["q"]
    if not (_int(p) and _int(q)) or q <= 0 or p <= 0:
        raise _damaged(path, f"threshold p = {p!r}, q = {q!r}: both must be whole numbers above 0")
    try:
        t = parse_threshold(Fraction(p, q), measure)
    except UsageError:
        shown = f"{p}/{q}" if len(str(p)) + len(str(q)) < 40 else "p/q of more than 40 digits"
        raise _damaged(path, f"threshold {shown} is none that {measure} takes") from None
    if (t.p, t.q) != (p, q):
        raise _damaged(path, f"threshold {p}/{q} is not in lowest terms")
    label = meta["label"]
    if not isinstance(label, str):
        raise _damaged(path, f"shingle label {label!r}")
    if label != tokens_label:
        try:
            spec = ShingleSpec.parse(label)
        except UsageError:
            spec = None
        if spec is None or str(spec) != label:
            raise _damaged(path, f"shingle label {label!r}")
    if not isinstance(meta["normalize"], bool):
        raise _damaged(path, f"normalize {meta['normalize']!r} is not true or false")
    if not _int(meta["min_shingles"]) or not 0 <= meta["min_shingles"] <= _MAX_ID:
        raise _damaged(path, f"min_shingles {meta['min_shingles']!r}")
    if not _int(meta["v0"]) or not 0 <= meta["v0"] <= _MAX_ID:
        raise _damaged(path, f"v0 {meta['v0']!r}")
    columns = meta.get("columns", [])  # absent from files written before documents carried columns
    if not isinstance(columns, list) or len(columns) > MAX_COLUMNS or len(set(map(repr, columns))) < len(columns) \
            or not all(isinstance(c, str) for c in columns):
        raise _damaged(path, f"carried columns {str(columns)[:80]}: not a list of distinct names")
    return meta


def _expected_arrays(meta: dict) -> dict[str, tuple[str, int]]:
    """The arrays an index file with this meta holds: :data:`ARRAYS` and two per carried column."""
    out = dict(ARRAYS)
    for k in range(len(meta.get("columns", []))):
        out[f"column{k}_ptr"], out[f"column{k}_bytes"] = ("<i8", 1), ("|u1", 1)
    return out


def _first_bad(ok: np.ndarray) -> int:
    return int(np.argmin(ok))


def _offsets(path, name: str, ptr: np.ndarray, end: int, *, strict: bool = False) -> None:
    """``ptr`` starts at 0, never falls (rises at every step if ``strict``) and ends at ``end``."""
    if ptr[0] != 0 or ptr[-1] != end:
        raise _damaged(path, f"{name} runs from {int(ptr[0]):,} to {int(ptr[-1]):,}, not from 0 to {end:,}")
    step = np.diff(ptr)
    ok = step > 0 if strict else step >= 0
    if not ok.all():
        k = _first_bad(ok)
        raise _damaged(path, f"{name} {'does not rise' if strict else 'falls'} at {k:,}: "
                             f"{int(ptr[k]):,} then {int(ptr[k + 1]):,}")


def _within(path, name: str, values: np.ndarray, lo: int, hi: int) -> None:
    """Every value in ``lo .. hi`` (inclusive)."""
    if len(values) and (values.min() < lo or values.max() > hi):
        bad = values[(values < lo) | (values > hi)][0]
        raise _damaged(path, f"{name} holds {int(bad):,}, outside {lo:,} .. {hi:,}")


def check_arrays(arrays: dict[str, np.ndarray], meta: dict, path,
                 index_prefix: Callable[[np.ndarray], np.ndarray]) -> None:
    """Every array of an index file against the others and the meta; raises IndexFileError.

    ``index_prefix(sizes)`` is the rule's indexing prefix of sets of those sizes
    (the postings must hold exactly those tokens of every set).
    """
    expected = _expected_arrays(meta)
    missing = sorted(set(expected) - set(arrays))
    extra = sorted(set(arrays) - set(expected))
    if missing or extra:
        raise _damaged(path, f"arrays missing: {', '.join(missing) or 'none'}; unknown: {', '.join(extra) or 'none'}")
    for name, (dtype, ndim) in expected.items():
        a = arrays[name]
        if a.dtype.str != dtype or a.ndim != ndim or (ndim == 2 and a.shape[1] != 3):
            raise _damaged(path, f"array {name!r} is {a.dtype.str} of shape {a.shape}, not {dtype} "
                                 f"of {'(n, 3)' if ndim == 2 else '(n,)'}")
    a = arrays
    v0 = meta["v0"]
    n_tok = len(a["slot_keys"])
    if n_tok > _MAX_ID or v0 > n_tok:
        raise _damaged(path, f"v0 {v0:,} with {n_tok:,} tokens")
    for name in ("indptr", "set_doc_ptr", "id_ptr", "list_ptr"):
        if len(a[name]) == 0:
            raise _damaged(path, f"{name} is empty")
    m = len(a["indptr"]) - 1
    n_docs = len(a["id_ptr"]) - 1
    if m > _MAX_ID or n_docs > _MAX_ID:
        raise _damaged(path, f"{m:,} sets and {n_docs:,} documents: more than int32 ids allow")
    low = -(n_tok - v0)  # the rank of the last token added after the build (slots v0 .. n_tok - 1)

    # The vocabulary: keys sorted and distinct, each rank naming the slot that holds its key.
    keys, ranks = a["lookup_keys"], a["lookup_ranks"]
    if len(keys) != n_tok or len(ranks) != n_tok:
        raise _damaged(path, f"lookup tables of {len(keys):,} and {len(ranks):,} entries for {n_tok:,} tokens")
    if n_tok > 1 and not (keys[1:] > keys[:-1]).all():
        raise _damaged(path, "lookup_keys not sorted or not distinct")
    _within(path, "lookup_ranks", ranks, low, v0 - 1)
    slots = np.where(ranks >= 0, ranks, v0 - 1 - ranks.astype(np.int64))
    if n_tok and not (a["slot_keys"][slots] == keys).all():
        raise _damaged(path, "lookup_ranks do not match slot_keys")

    # The sets' offsets, and the documents behind each set: every document in exactly one set; ids as
    # offsets into the id bytes.
    indptr, tokens = a["indptr"], a["tokens"]
    _offsets(path, "indptr", indptr, len(tokens))
    sizes = np.diff(indptr)
    if m and sizes.max() > _MAX_ID:
        raise _damaged(path, "a set larger than int32 sizes allow")
    set_doc_ptr, set_docs = a["set_doc_ptr"], a["set_docs"]
    if len(set_doc_ptr) != m + 1:
        raise _damaged(path, f"set_doc_ptr has {len(set_doc_ptr):,} entries for {m:,} sets")
    _offsets(path, "set_doc_ptr", set_doc_ptr, len(set_docs), strict=True)
    if len(set_docs) != n_docs:
        raise _damaged(path, f"{len(set_docs):,} set members for {n_docs:,} documents")
    _within(path, "set_docs", set_docs, 0, n_docs - 1)
    if n_docs and not (np.bincount(set_docs, minlength=n_docs) == 1).all():
        raise _damaged(path, "a document in no set or in two")
    for name in ["id"] + [f"column{k}" for k in range(len(meta.get("columns", [])))]:
        if len(a[f"{name}_ptr"]) != n_docs + 1:
            raise _damaged(path, f"{name}_ptr has {len(a[f'{name}_ptr']):,} entries for {n_docs:,} documents")
        _offsets(path, f"{name}_ptr", a[f"{name}_ptr"], len(a[f"{name}_bytes"]))
    if meta.get("id_type", "str") not in ("str", "int"):
        raise _damaged(path, f"id_type {meta['id_type']!r} is neither 'str' nor 'int'")
    if meta.get("id_type") == "int":
        _int_ids(path, a["id_ptr"], a["id_bytes"])

    # Each set's ranks, and the postings: one list per token slot, each posting (set, position, size)
    # of a token of the set's indexing prefix, listed under that token, sorted by (size, set); every
    # prefix token listed once. One compiled pass over each (random access would cost more than the load).
    list_ptr, post = a["list_ptr"], a["post"]
    if len(list_ptr) != n_tok + 1:
        raise _damaged(path, f"list_ptr has {len(list_ptr):,} entries for {n_tok:,} tokens")
    _offsets(path, "list_ptr", list_ptr, len(post))
    plen = np.clip(np.asarray(index_prefix(sizes), np.int64), 0, sizes)  # the kernel reads no further
    key = np.frombuffer(os.urandom(40), np.uint64) | np.array([0, 1, 1, 1, 1], np.uint64)
    code, at = check_postings(indptr, tokens, plen, list_ptr, post, low, v0, key)
    if code:
        what = {
            CHECK_TOKEN_RANGE: lambda: f"tokens holds {int(tokens[at]):,} at {at:,}, outside {low:,} .. {v0 - 1:,}",
            CHECK_TOKEN_ORDER: lambda: f"tokens of a set not in increasing order at {at:,}",
            CHECK_POSTINGS_COUNT: lambda: f"{len(post):,} postings where the sets' indexing prefixes hold {at:,}",
            CHECK_POSTING_SET: lambda: f"the set of a posting holds {int(post[at, 0]):,}, outside 0 .. {m - 1:,}",
            CHECK_POSTING_POSITION: lambda: (f"posting {at:,} at position {int(post[at, 1]):,} of a set of "
                                             f"{int(post[at, 2]):,}"),
            CHECK_POSTING_ORDER: lambda: f"postings of a token not in order of (size, position, set) at {at:,}",
            CHECK_POSTINGS_DIFFER: lambda: "the postings are not the sets' indexing prefixes",
        }[code]
        raise _damaged(path, what())


#: The most digits of an int id: what Python's ``str(int)`` writes and ``int(str)`` reads by default
#: (``sys.int_info.default_max_str_digits``), so that every int id :meth:`SearchIndex.save` writes loads.
MAX_INT_ID_DIGITS = 4300


def _int_ids(path, ptr: np.ndarray, blob: np.ndarray) -> None:
    """Ids said to be ints: each a whole number of at most :data:`MAX_INT_ID_DIGITS` digits, a minus sign
    only in front (int64's 19 digits and Python's larger ints too: a saved index loads the ids it saved)."""
    lengths = np.diff(ptr)
    digit = (blob >= ord("0")) & (blob <= ord("9"))
    minus = blob == ord("-")
    leading = np.zeros(len(blob), bool)
    leading[ptr[:-1][lengths > 0]] = True
    signed = np.zeros(len(lengths), bool)
    signed[lengths > 0] = minus[ptr[:-1][lengths > 0]]
    if not (digit | (minus & leading)).all() or (lengths == 0).any() or (lengths - signed > MAX_INT_ID_DIGITS).any() \
            or (signed & (lengths == 1)).any():
        raise _damaged(path, "id_type 'int' with an id that is not a whole number")
