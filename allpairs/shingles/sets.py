"""``--sets`` input to keys (pre-tokenised sets, each token hashed) and shingle sets written back
in the ``--sets`` format."""
from __future__ import annotations

import collections
import functools
import itertools
from collections.abc import Iterable, Sequence

import numpy as np

from allpairs._kernels.jit import resolve_jobs
from allpairs._kernels.csr import block_edges, concat_rows, distinct_rows, distinct_sorted_rows
from allpairs._kernels.malloc import large_empty
from allpairs.corpus.linefile import ArrowTokenSets, HashedSets, TokenSets
from allpairs.shingles import _kernel as _k
from allpairs.shingles._hash_kernel import xxh64_decimal, xxh64_spans, xxh64_split
from allpairs.shingles.utf8 import SPACE_END, keys_of, not_space, offsets_of


def hash_sets(sets: Sequence[Iterable[str | int]], *, jobs: int | None = None,
              sorted_rows: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Keys of pre-tokenised sets (the ``--sets`` input, e.g. Kosarak).

    The key of a token is ``token_key(str(token))``, so the integer 5 and the
    string "5" have the same key.

    Parameters
    ----------
    sets : sequence of iterables of str or int, or TokenSets, or ArrowTokenSets
        The sets; a :class:`~allpairs.corpus.linefile.TokenSets` (what
        :func:`allpairs.read_sets` gives) is split and hashed by a compiled
        kernel straight from its UTF-8 buffer, an
        :class:`~allpairs.corpus.linefile.ArrowTokenSets` (a Parquet column
        of token lists) straight from Arrow's (:func:`token_list_keys`).
    jobs : int, optional
        With more than one (default: every core), string tokens are hashed on
        a second thread while the next block of them is joined and encoded.
        The keys do not depend on it.
    sorted_rows : bool, default False
        Each set's keys in increasing order with repeats dropped (what the LSH
        path keeps), instead of in input order; string tokens are then sorted
        on the hashing thread, block by block, while their keys are in cache.

    Returns
    -------
    indptr : ndarray of int64, shape (n_sets + 1,)
    keys : ndarray of uint64
        Keys of set i at ``keys[indptr[i]:indptr[i + 1]]``, in input order,
        duplicates kept (or as ``sorted_rows`` says).
    """
    if isinstance(sets, HashedSets):
        indptr, keys = sets.indptr, sets.keys
    elif isinstance(sets, TokenSets):
        indptr, keys = _k.token_keys(sets.lines.buffer(), sets.lines.starts, not_space())
    elif isinstance(sets, ArrowTokenSets) and (listed := token_list_keys(sets.column)) is not None:
        indptr, keys = listed
    else:
        sets = [s if isinstance(s, (list, tuple)) else list(s) for s in sets]
        indptr = offsets_of(np.fromiter(map(len, sets), dtype=np.int64, count=len(sets)))
        try:
            found = _split_keys(sets, indptr, resolve_jobs(jobs), sorted_rows)
        except TypeError:  # a token that is not a string
            found = None
        if found is not None:
            return found
        # A token that is not a string, or one holding U+0000 (the separator): hash by lengths.
        keys = keys_of(list(map(str, itertools.chain.from_iterable(sets))))
    return distinct_rows(indptr, keys, resolve_jobs(jobs)) if sorted_rows else (indptr, keys)


def token_list_keys(column) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`hash_sets` of an Arrow column of lists of strings or integers, straight from Arrow's
    buffers, without a Python string per token (an integer's key is that of its decimal string, as
    ``str()`` writes it); a null list is an empty set and a null token is left out. None for lists of
    anything else (e.g. floats: ``str()`` of each, by :func:`hash_sets`, decides their keys).

    ``column``: a ``pyarrow`` Array or ChunkedArray of type list or large_list.
    """
    import pyarrow as pa

    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    if not (pa.types.is_list(column.type) or pa.types.is_large_list(column.type)):
        return None
    values = column.flatten()  # the values of the non-null lists, the array's slice taken into account
    lengths = column.value_lengths().fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
    if pa.types.is_integer(values.type):
        keys = _integer_keys(values)
    elif pa.types.is_string(values.type) or pa.types.is_large_string(values.type):
        wide = pa.types.is_large_string(values.type)
        offsets = np.frombuffer(values.buffers()[1], np.int64 if wide else np.int32)[
            values.offset:values.offset + len(values) + 1].astype(np.int64)
        data = values.buffers()[2]
        keys = xxh64_spans(np.frombuffer(data, np.uint8) if data is not None else np.zeros(0, np.uint8), offsets,
                           np.uint64(0))
    else:
        return None
    if values.null_count:
        valid = values.is_valid().to_numpy(zero_copy_only=False)
        rows = np.repeat(np.arange(len(lengths)), lengths)
        lengths = np.bincount(rows[valid], minlength=len(lengths)).astype(np.int64)
        keys = keys[valid]
    return offsets_of(lengths), keys


def _integer_keys(values) -> np.ndarray:
    """The keys of an Arrow integer array's values (nulls' slots included), each that of its decimal string,
    hashed from the digits without a string per value: Arrow's cast of 1 M Zipf sets' 20 M int64 tokens to
    strings, then XXH64 of each, took 0.50-0.55 CPU s; this takes about a third of it."""
    import pyarrow as pa

    if len(values) == 0:
        return np.zeros(0, np.uint64)
    signed = pa.types.is_signed_integer(values.type)
    data = np.frombuffer(values.buffers()[1], values.type.to_pandas_dtype())[values.offset:values.offset + len(values)]
    wide = data.astype(np.int64 if signed else np.uint64, copy=False)
    return xxh64_decimal(np.ascontiguousarray(wide).view(np.uint64), signed, np.uint64(0))


#: Tokens joined and hashed per block by :func:`_split_keys`.
_SPLIT_TOKENS = 1 << 18


def _split_keys(sets: list, indptr: np.ndarray, jobs: int,
                sorted_rows: bool) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`hash_sets` of string tokens, or None if a token holds U+0000.

    Blocks of whole sets are joined with NUL (UTF-8 has no other zero byte),
    encoded, and split and hashed by one kernel call each (then, with
    ``sorted_rows``, each set's keys sorted). Joining and encoding hold the GIL
    and the kernels do not, so with ``jobs > 1`` one block is hashed while the
    next is joined; at most two blocks' bytes are alive.
    """
    out = np.empty(int(indptr[-1]), np.uint64)
    cuts = block_edges(0, np.searchsorted(indptr, np.arange(0, indptr[-1], _SPLIT_TOKENS), "right") - 1, len(sets))

    def block(buf: np.ndarray, a: int, b: int):
        k0, k1 = int(indptr[a]), int(indptr[b])
        if not xxh64_split(buf, np.uint8(0), out[k0:k1], np.uint64(0)):
            return None
        return distinct_sorted_rows(indptr[a:b + 1] - k0, out[k0:k1]) if sorted_rows else True

    pool = None
    if jobs > 1 and len(cuts) > 2:
        from concurrent.futures import ThreadPoolExecutor  # here: a run on one thread does not load it

        pool = ThreadPoolExecutor(1)
    pending: collections.deque = collections.deque()
    done: list = []
    try:
        for a, b in zip(cuts[:-1].tolist(), cuts[1:].tolist()):
            if indptr[a] == indptr[b]:  # sets without a token
                done.append((np.zeros(b - a + 1, np.int64), out[:0]) if sorted_rows else True)
                continue
            text = "\0".join(itertools.chain.from_iterable(sets[a:b])).encode("utf-8", "surrogatepass")
            call = functools.partial(block, np.frombuffer(text, dtype=np.uint8), a, b)
            del text
            if pool is None:
                done.append(call())
            else:
                pending.append(pool.submit(call))
                if len(pending) == 2:
                    done.append(pending.popleft().result())
            if done and done[-1] is None:
                return None
        done += [f.result() for f in pending]
        if any(d is None for d in done):
            return None
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    return concat_rows(done) if sorted_rows else (indptr, out)


def hash_set_pieces(pieces: Iterable[tuple[bytes, np.ndarray]],
                    size_hint: int | None = None, *, join_keys: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """:func:`hash_sets` of ``--sets`` text given as pieces of whole lines (see
    :func:`allpairs.corpus.linefile.read_pieces`), each hashed as it comes: only the keys are kept.

    With ``size_hint`` (at least the text's size in bytes, e.g. a regular
    file's size) the keys are written straight into one array with room for
    the most tokens that many bytes can hold; memory is taken only as keys
    are written, and no piece is copied.

    With ``join_keys`` a whole-number token is keyed by its value, not hashed
    (:func:`allpairs.shingles._kernel.join_token_keys_into`): keys good for an
    exact join of these sets and nothing else (not MinHash, not a file or
    an index that keeps them).
    """
    if join_keys:  # its table stops where white space does: the full one is 1.1 MB of fresh pages
        into, table = _k.join_token_keys_into, not_space(SPACE_END)
    else:
        into, table = _k.token_keys_into, not_space()
    # Each piece's offsets into the keys, absolute, without its leading one after the first piece: one
    # piece's offsets are the result as they are (no diff, concatenation and sum of 35,000 counts).
    offsets: list[np.ndarray] = [np.zeros(1, np.int64)]
    if size_hint is not None:
        out = large_empty((size_hint + 1) // 2, np.uint64)
        k = 0
        for buf, starts in pieces:
            if (int(starts[-1]) + 1) // 2 > len(out) - k:  # more text than the hint said
                return _hash_pieces_apart(itertools.chain([(buf, starts)], pieces), offsets, out[:k], into, table)
            indptr = into(np.frombuffer(buf, dtype=np.uint8), starts, table, out, np.int64(k))
            offsets[-1:] = [offsets[-1][:-1], indptr]
            k = int(indptr[-1])
        return _joined(offsets), out[:k]
    return _hash_pieces_apart(pieces, offsets, np.zeros(0, np.uint64), into, table)


def _joined(offsets: list[np.ndarray]) -> np.ndarray:
    """The pieces' absolute offsets as one array (the last of each piece is the first of the next)."""
    offsets = [o for o in offsets if len(o)]
    return offsets[0] if len(offsets) == 1 else np.concatenate(offsets)


def _hash_pieces_apart(pieces, offsets, first_keys, into, table):
    """hash_set_pieces without a size hint: each piece's keys apart (by the kernel ``into`` with its
    ``table``), then concatenated."""
    parts = [first_keys]
    k = len(first_keys)
    for buf, starts in pieces:
        n = len(starts) - 1
        out = np.empty((int(starts[-1]) - int(starts[0]) + n) // 2 + n + 1, np.uint64)
        indptr = into(np.frombuffer(buf, dtype=np.uint8), starts, table, out, np.int64(0))
        parts.append(out[:indptr[-1]])
        indptr += k
        offsets[-1:] = [offsets[-1][:-1], indptr]
        k = int(indptr[-1])
    return _joined(offsets), np.concatenate(parts)


#: Keys rendered per call of the hex kernel in :func:`format_sets` (bounds its buffers).
_FORMAT_KEYS = 1 << 20


def format_sets(indptr: np.ndarray, keys: np.ndarray) -> Iterable[bytes]:
    """Shingle sets as lines of the ``--sets`` format, in pieces of about a megabyte of keys.

    Line ``i`` holds the distinct keys of document ``i`` in ascending order,
    each as 16 lowercase hexadecimal digits, separated by one space; a
    document without a shingle gives an empty line.  Joining the file with
    ``--sets`` gives the same pairs as joining the documents: equal keys give
    equal tokens and distinct keys distinct ones.

    Parameters
    ----------
    indptr : ndarray of int64, shape (n_docs + 1,)
    keys : ndarray of uint64
        As :func:`shingle_texts` and :func:`hash_sets` return them.
    """
    indptr = np.ascontiguousarray(indptr, dtype=np.int64)
    keys = np.ascontiguousarray(keys, dtype=np.uint64)
    n_docs = len(indptr) - 1
    start = 0
    while start < n_docs:
        # The next documents up to about _FORMAT_KEYS keys (at least one document).
        stop = int(np.searchsorted(indptr, indptr[start] + _FORMAT_KEYS, side="right")) - 1
        stop = min(max(stop, start + 1), n_docs)
        yield _k.hex_lines(indptr[start:stop + 1], keys).tobytes()
        start = stop
