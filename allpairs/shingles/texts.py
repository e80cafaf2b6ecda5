"""Texts to shingle keys (word, char and code shingles), in batches, with the compiled code
tokenizers in threads over files held as UTF-8, or in worker processes (:mod:`allpairs.shingles.pool`)."""
from __future__ import annotations

import collections
import concurrent.futures
import unicodedata
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from allpairs._kernels import malloc as _malloc
from allpairs._kernels.jit import resolve_jobs
from allpairs.corpus.linefile import Utf8Texts
from allpairs.errors import UsageError
from allpairs.shingles import _kernel as _k
from allpairs.shingles import codetokens
from allpairs.shingles import pool as fork_pool
from allpairs.shingles.code import CodeTokens, code_batch, code_commit, code_keys
from allpairs.shingles.keys import ShingleSpec, normalize_text, seed_of
from allpairs.shingles.ngrams import KeyBuffer, Scratch, ngram_keys
from allpairs.shingles.utf8 import ascii_keys, offsets_of, text_sizes, utf8_of, word_table


# Documents are processed in batches of at most this many documents or characters,
# which bounds the memory of the intermediate arrays and paces the progress calls.
_BATCH_DOCS = 256


_BATCH_CHARS = 1 << 22


def _batches(sizes: Sequence[int]) -> Iterable[range]:
    """Consecutive ranges of documents, each at most _BATCH_DOCS docs or about _BATCH_CHARS chars (or bytes)."""
    start, chars = 0, 0
    for i, size in enumerate(sizes):
        chars += size
        if i + 1 - start >= _BATCH_DOCS or chars >= _BATCH_CHARS:
            yield range(start, i + 1)
            start, chars = i + 1, 0
    if start < len(sizes):
        yield range(start, len(sizes))


def _check_languages(languages, n_docs: int) -> list[str | None]:
    if languages is None:
        return [None] * n_docs
    languages = list(languages)
    if len(languages) != n_docs:
        raise UsageError(
            f"languages has {len(languages)} entries for {n_docs} texts; give one per text (None for C-like)"
        )
    for lang in set(languages):
        if lang is not None and lang not in codetokens.LANGUAGES:
            raise UsageError(
                f"unknown program language {lang!r}; use one of "
                f"{', '.join(codetokens.LANGUAGES)} or None (C-like)"
            )
    return languages


def shingle_texts(
    texts: Sequence[str],
    spec: ShingleSpec | str,
    *,
    normalize: bool = True,
    languages: Sequence[str | None] | None = None,
    progress: Callable[[int], None] | None = None,
    workers: int | None = None,
    distinct: bool = False,
    jobs: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Shingle keys of each text.

    Parameters
    ----------
    texts : sequence of str, length n_docs
        The documents.
    spec : ShingleSpec or str
        ``word:N`` (n-grams of words, a word being a run of Unicode word
        characters ``\\w+``), ``char:N`` (n-grams of characters, i.e. code
        points) or ``code:N`` (n-grams of program tokens, see
        :mod:`allpairs.shingles.codetokens`).
    normalize : bool, default True
        For word and char: NFKC, casefold, whitespace runs collapsed to one
        space and stripped before tokenizing (see :func:`normalize_text`).
        Ignored for code.
    languages : sequence of {"go", "c", "c-family", "python", None}, length n_docs, optional
        For code: the tokenizer of each text (:func:`language_for_path` gives
        it from a file name); None or absent means the C-family tokenizer.
    progress : callable(int), optional
        Called now and then with the number of texts done since the last
        call; the calls add up to n_docs.
    workers : int, optional
        Processes to shingle with.  By default, for word and char shingles,
        a pool of one process per available CPU is used on Linux when the
        texts hold at least ``PARALLEL_MIN_CHARS`` characters, else the work
        is done in this process; code shingles are made in this process
        unless ``workers`` says otherwise (the compiled tokenizers beat a
        pool).  The result does not depend on it: each text's keys are a
        function of that text alone.  A pool pays off only when CPUs are idle;
        ``workers=1`` stays in this process.
    distinct : bool, default False
        Leave out a key already met in the same text (its first occurrence
        stays): each text's set of keys in order of first occurrence, which
        is all :func:`allpairs.order.order_sets` needs, in less memory.
    jobs : int, optional
        Threads for the compiled code tokenizers over files held as UTF-8 (as
        :func:`allpairs.corpus.read_directory` holds them); default every
        core, 1 for none. The result does not depend on it.

    Returns
    -------
    indptr : ndarray of int64, shape (n_docs + 1,)
    keys : ndarray of uint64, shape (indptr[-1],)
        The shingle keys of text i are ``keys[indptr[i]:indptr[i + 1]]``, in
        text order, duplicates kept (unless ``distinct``).  A text of 1 to n - 1 words or
        characters has one shingle, its whole sequence; a program of fewer than n tokens none; an
        empty text none.  Keys are defined in the module docstring.

    Raises
    ------
    UsageError
        For an unknown spec or language, ``languages`` of the wrong length, or
        ``workers`` < 1.
    """
    if not isinstance(spec, ShingleSpec):
        spec = ShingleSpec.parse(spec)
    texts = texts if isinstance(texts, Sequence) else list(texts)
    langs = _check_languages(languages, len(texts)) if spec.kind == "code" else None
    pool_size = fork_pool.pool_workers(workers, texts, spec, jobs)
    if pool_size > 1:
        counts, keys = fork_pool.shingle_in_pool(texts, langs, spec, normalize, progress, pool_size, distinct,
                                                 shingle_serial)
    else:
        counts, keys = shingle_serial(texts, langs, spec, normalize, progress, distinct, resolve_jobs(jobs))
        _malloc.release()  # the batches' work arrays
    return offsets_of(counts), keys


def shingle_serial(texts, langs, spec, normalize, progress=None, distinct=False, jobs=1):
    """Shingle counts (int64, one per text) and keys of ``texts``, in this process.

    Batches of program files of one language held as UTF-8 go to the compiled tokenizer in
    ``jobs`` threads (the kernels release the GIL); every batch's keys are
    added in input order, so the result does not depend on ``jobs``.
    """
    code_vocabs: dict[str | None, CodeTokens] = {}
    sizes = text_sizes(texts)
    # Room for every shingle: each is a token's, and each token takes a character of
    # its text, as Go's semicolons take a line end or the end of the text.
    out = KeyBuffer(sum(sizes) + len(sizes))
    code_bytes = spec.kind == "code" and isinstance(texts, Utf8Texts)
    n, seed = spec.n, seed_of(spec)

    def vocab(language: str) -> CodeTokens:
        return code_vocabs.setdefault(language, CodeTokens(language))

    # At most jobs batches in flight, each with scratch arrays of its own.
    scratches = [Scratch() for _ in range(jobs)]
    pending: collections.deque = collections.deque()

    def commit_oldest() -> None:
        batch, language, scratch, found = pending.popleft()
        if isinstance(found, concurrent.futures.Future):
            found = found.result()
        code_commit(texts, batch, found, n, seed, distinct, out, vocab(language)._regex_shingles)
        scratch.trim()
        scratches.append(scratch)
        if progress is not None:
            progress(len(batch))

    pool = concurrent.futures.ThreadPoolExecutor(jobs) if jobs > 1 and code_bytes else None
    # uint64 arithmetic wraps by design; errstate only matters when
    # NUMBA_DISABLE_JIT=1 runs the kernels on numpy scalars, which warn.
    try:
        with np.errstate(over="ignore"):
            for batch in _batches(sizes):
                batch_langs = None if langs is None else [langs[i] for i in batch]
                languages = {"c-family" if lang is None else lang for lang in batch_langs} if code_bytes else ()
                if len(languages) == 1:
                    # Files of one language as read: the compiled tokenizer reads them in place.
                    language = languages.pop()
                    if not scratches:
                        commit_oldest()
                    scratch = scratches.pop()
                    first_mark = scratch.prepare(texts.sizes()[batch.start:batch.stop], n, distinct)
                    job = (texts, batch, language, n, seed, distinct, scratch, first_mark)
                    # The first batch runs here: it loads the kernels, whose memory then belongs
                    # to this thread's allocator rather than a worker's.
                    threaded = pool is not None and batch.start > 0
                    found = pool.submit(code_keys, *job) if threaded else code_keys(*job)
                    pending.append((batch, language, scratch, found))
                    if not threaded:
                        commit_oldest()
                    continue
                while pending:
                    commit_oldest()
                out.add(*_shingle_batch([texts[i] for i in batch], batch_langs, spec, normalize, code_vocabs,
                                        distinct))
                if progress is not None:
                    progress(len(batch))
            while pending:
                commit_oldest()
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
    return out.result()


def _shingle_batch(docs, langs, spec, normalize, code_vocabs, distinct):
    """Shingle counts and keys of one batch of documents (str; for code, str or UTF-8 bytes)."""
    seed, n = seed_of(spec), spec.n
    if spec.kind == "word" and normalize:
        # Whitespace is never part of a word (\w+), so collapsing it changes no
        # word shingle: skip that step (a third of the time on 20k documents).
        docs = [unicodedata.normalize("NFKC", doc).casefold() for doc in docs]
    elif spec.kind == "char" and normalize:
        docs = [normalize_text(doc) for doc in docs]
    if spec.kind == "code":
        return code_batch(docs, langs, code_vocabs, n, seed, distinct)
    # The batch's UTF-8 bytes in one buffer; kernels find and hash the tokens.
    buf, doc_ptr = utf8_of(docs)
    if spec.kind == "char":
        indptr, keys = _k.char_keys(buf, doc_ptr, ascii_keys())
    else:
        indptr, keys = _k.token_keys(buf, doc_ptr, word_table(docs))
    return ngram_keys(indptr, keys, n, seed, distinct, True)
