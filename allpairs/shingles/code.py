"""``code:N`` shingles: the compiled tokenizers of each language with their tables, and the regular
expressions of :mod:`allpairs.shingles.codetokens` for the texts the kernels decline."""
from __future__ import annotations

import functools

import numpy as np

from allpairs.corpus.linefile import Utf8Texts
from allpairs.shingles import _kernel as _k
from allpairs.shingles import codetokens
from allpairs.shingles._codetok_c_python_kernel import token_keys_into as c_python_token_keys_into
from allpairs.shingles._codetok_c_cxx_kernel import token_keys_into as c_cxx_token_keys_into
from allpairs.shingles._codetok_kernel import go_token_keys_into
from allpairs.shingles.keys import TokenIds, token_key
from allpairs.shingles.ngrams import KeyBuffer, Scratch, interleave, ngram_keys
from allpairs.shingles.utf8 import keys_of, offsets_of


def as_text(doc: str | bytes) -> str:
    """A document as a string (:func:`compiled_shingles` takes UTF-8 bytes too)."""
    return doc if isinstance(doc, str) else doc.decode("utf-8", "surrogatepass")


class CodeTokens:
    """The vocabulary of one language with the class and key of each token."""

    def __init__(self, language: str) -> None:
        self.language = language
        self.vocab = TokenIds()
        self.vocab.index[";"]  # id 0: the spelling of Go's automatic semicolon
        self.classes = np.zeros(0, dtype=np.int8)
        self.keys = np.zeros(0, dtype=np.uint64)

    def shingles(self, docs: list[str | bytes], n: int, seed: np.uint64,
                 distinct: bool = False) -> tuple[np.ndarray, np.ndarray]:
        return compiled_shingles(docs, self.language, n, seed, self._regex_shingles, distinct)

    def _regex_shingles(self, docs: list[str | bytes], n: int, seed: np.uint64,
                        distinct: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """The regex path: ``findall``, vocabulary ids, :func:`_k.code_stream`."""
        # Built on first use: Go's pattern costs ~1 s (a scan of all of Unicode), and
        # documents reach it only when the compiled tokenizer hands one back.
        findall = codetokens.token_findall(self.language)
        counts = [0] * len(docs)
        parts = []
        for i, doc in enumerate(docs):
            ids = self.vocab.ids(findall(as_text(doc)))
            counts[i] = len(ids)
            parts.append(ids)
        self._grow()
        ids = np.concatenate(parts) if parts else np.zeros(0, np.int32)
        indptr, stream = _k.code_stream(
            offsets_of(counts), ids, self.classes, np.int32(0), self.language == "go"
        )
        return ngram_keys(indptr, self.keys[stream], n, seed, distinct, False)

    def _grow(self) -> None:
        """Classify and hash the tokens that are new since the last batch."""
        new = self.vocab.new_strings()
        if not new:
            return
        lang = self.language
        classes = codetokens.token_classes(new, lang)
        # Comments and line ends are never hashed: their key is never read.
        line_end = codetokens.LINE_END
        kept = [c < line_end for c in classes]
        keys = np.zeros(len(new), dtype=np.uint64)
        keys[np.array(kept, dtype=bool)] = keys_of(
            [codetokens.token_spelling(t, lang) for t, keep in zip(new, kept) if keep]
        )
        self.classes = np.concatenate([self.classes, np.array(classes, dtype=np.int8)])
        self.keys = np.concatenate([self.keys, keys])


@functools.lru_cache(maxsize=1)
def _go_tables() -> tuple:
    """The tables of :func:`allpairs.shingles._codetok_kernel.go_token_keys`, from :mod:`allpairs.shingles.codetokens`."""
    keywords = sorted(codetokens._GO_KEYWORDS)
    kw_keys = keys_of(keywords)
    kw_bytes = np.frombuffer("".join(keywords).encode(), dtype=np.uint8).copy()
    kw_ptr = offsets_of([len(w) for w in keywords])
    kw_plain = np.array([w not in codetokens._GO_SEMI_KEYWORDS for w in keywords], dtype=np.bool_)
    kw_slot = np.full(64, -1, dtype=np.int64)
    kw_slot_key = np.zeros(64, dtype=np.uint64)
    for w, key in enumerate(kw_keys.tolist()):
        s = key & 63
        while kw_slot[s] >= 0:
            s = (s + 1) & 63
        kw_slot[s], kw_slot_key[s] = w, key
    # Operators by their first two bytes (see go_token_keys).
    ops = codetokens._GO_OPERATORS
    op_keys = dict(zip(ops, keys_of(ops).tolist()))
    op_size = np.zeros(128 * 128, dtype=np.int64)
    op_key = np.zeros(128 * 128, dtype=np.uint64)
    semi_op = np.zeros(128 * 128, dtype=np.bool_)
    for op in sorted(ops, key=len):  # longer ones overwrite
        first = ord(op[0]) * 128
        if len(op) == 1:
            op_size[first:first + 128] = 1
            op_key[first] = op_keys[op]
            semi_op[first] = op in codetokens._GO_SEMI_OPERATORS
        elif len(op) == 2:
            i = first + ord(op[1])
            op_size[i], op_key[i] = 2, op_keys[op]
            semi_op[i] = op in codetokens._GO_SEMI_OPERATORS
        else:
            assert op[2] == ("." if op[0] == "." else "=") and op_key[first + 127] == 0
            op_size[first + ord(op[1])] = 3
            op_key[first + 127] = op_keys[op]
    return (np.uint64(token_key(";")), kw_slot_key, kw_slot, kw_bytes, kw_ptr, kw_plain,
            op_size, op_key, semi_op)


@functools.lru_cache(maxsize=None)
def _operator_tables(language: str) -> tuple:
    """The operator table of :func:`allpairs.shingles._codetok_c_python_kernel._operator_size` for ``language``
    ("c", "c-family" or "python"), with each operator's key."""
    operators = {"c": codetokens._CXX_OPERATORS, "c-family": codetokens._C_OPERATORS,
                 "python": codetokens._PY_OPERATORS}[language]
    ops = sorted(operators,
                 key=lambda op: (op[0], -len(op)))
    ops_bytes = np.frombuffer("".join(ops).encode("ascii"), dtype=np.uint8).copy()
    ops_first = np.searchsorted(np.array([ord(op[0]) for op in ops]), np.arange(129)).astype(np.int64)
    return ops_bytes, offsets_of([len(op) for op in ops]), ops_first, keys_of(ops)


def _tokenizer(language: str) -> tuple:
    """The compiled tokenizer of ``language`` ("go", "c", "c-family" or "python") and the arguments after its
    first three."""
    if language == "go":
        return go_token_keys_into, _go_tables()
    if language == "c":
        return c_cxx_token_keys_into, _operator_tables(language)
    return c_python_token_keys_into, (language == "python", *_operator_tables(language))


def compiled_shingles(docs, language, n, seed, regex_shingles, distinct=False) -> tuple[np.ndarray, np.ndarray]:
    """code:N shingles of documents (str, or their UTF-8 bytes) by the compiled tokenizer of ``language``.

    The documents it declines (a byte >= 0x80 outside literals and comments
    where Unicode letter rules decide, see :mod:`allpairs.shingles._codetok_kernel`
    and :mod:`allpairs.shingles._codetok_c_python_kernel`)
    go through ``regex_shingles``; both give the same keys for any text, the
    kernel only faster.
    """
    # One encode per document: files are few and long, and their byte offsets
    # come free (utf8_of would widen every code point to find them).
    encoded = [doc if isinstance(doc, bytes) else doc.encode("utf-8", "surrogatepass") for doc in docs]
    texts = Utf8Texts.of(encoded)
    del encoded
    out = KeyBuffer(len(texts.buffer) + len(texts))
    batch = range(len(texts))
    scratch = Scratch()
    first_mark = scratch.prepare(texts.sizes(), n, distinct)
    found = code_keys(texts, batch, language, n, seed, distinct, scratch, first_mark)
    code_commit(texts, batch, found, n, seed, distinct, out, regex_shingles)
    return out.result()


def code_keys(texts: Utf8Texts, batch: range, language, n, seed, distinct, scratch: Scratch, first_mark):
    """The compiled part of :func:`compiled_shingles` for texts ``batch``, in ``scratch`` made ready by
    :meth:`Scratch.prepare` (kernels only: it may run in a thread of its own). Returns the counts,
    the keys (a view of ``scratch``) and whether each text was taken (False: declined, no keys)."""
    buf, doc_ptr = texts.span(batch.start, batch.stop)
    with np.errstate(over="ignore"):  # NUMBA_DISABLE_JIT: uint64 arithmetic wraps by design
        tokenizer, tables = _tokenizer(language)
        indptr, ok = tokenizer(buf, doc_ptr, scratch.keys, *tables)
        counts = scratch.ngram_keys_into(indptr, scratch.keys, n, seed, distinct, scratch.ngrams, 0, first_mark)
    return counts, scratch.ngrams[: int(counts.sum())], ok


def code_commit(texts: Utf8Texts, batch: range, found, n, seed, distinct, out: KeyBuffer, regex_shingles) -> None:
    """Add :func:`code_keys`'s result for texts ``batch`` to ``out``, with the declined texts
    shingled by ``regex_shingles`` in their place."""
    counts, keys, ok = found
    if ok.all():
        out.add(counts, keys)
        return
    declined = np.flatnonzero(~ok)
    compiled = np.flatnonzero(ok)
    regex = regex_shingles([texts[batch.start + i] for i in declined], n, seed, distinct)
    # Declined documents have no keys above: drop their zero counts and interleave.
    out.add(*interleave(len(batch), [(compiled, (counts[compiled], keys)), (declined, regex)]))


def code_batch(docs, langs, vocabs, n, seed, distinct) -> tuple[np.ndarray, np.ndarray]:
    """code:N shingles of one batch, each document with its own language's tokenizer."""
    groups: dict[str | None, list[int]] = {}
    for i, lang in enumerate(langs):
        groups.setdefault("c-family" if lang is None else lang, []).append(i)
    results = {}
    for lang, members in groups.items():
        if lang not in vocabs:
            vocabs[lang] = CodeTokens(lang)
        results[lang] = vocabs[lang].shingles([docs[i] for i in members], n, seed, distinct)
    if len(groups) == 1:
        return results[next(iter(groups))]
    # Several languages in the batch: put the documents back in input order.
    return interleave(len(docs), [(members, results[lang]) for lang, members in groups.items()])
