"""Stage (2), documents to shingle keys: compared with a pure-Python oracle,
pinned by golden values, and calibrated on the Go tree (REFERENCE.md §1)."""
from __future__ import annotations

import re
import tarfile
import unicodedata

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
import xxhash

from allpairs.shingles import keys as shingles, pool as shingle_pool, sets as shingle_sets
from allpairs.shingles import texts as shingle_texts_module
from allpairs.shingles.codetokens import tokenize
from allpairs.errors import UsageError
from allpairs.shingles import (
    ShingleSpec,
    hash_sets,
    normalize_text,
    shingle_texts,
    token_key,
    token_keys,
)
from allpairs.corpus.linefile import Utf8Texts
from conftest import shared_datasets_dir

MASK = 0xFFFFFFFFFFFFFFFF
GOLDEN = 0x9E3779B97F4A7C15


# --- The oracle: the documented definition, in Python ints ------------------------

def mix(z: int) -> int:
    """splitmix64 finaliser."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def xxh64(token: str) -> int:
    """The token key by the independent ``xxhash`` package (key version 2)."""
    return xxhash.xxh64_intdigest(token.encode("utf-8", "surrogatepass"))


def naive_keys(text: str, spec: ShingleSpec, normalize: bool = True, language=None) -> list[int]:
    if spec.kind == "code":
        keys = [xxh64(t) for t in tokenize(text, language)]
    else:
        if normalize:
            text = " ".join(unicodedata.normalize("NFKC", text).casefold().split())
        if spec.kind == "word":
            keys = [xxh64(w) for w in re.findall(r"\w+", text)]
        else:
            keys = [xxh64(c) for c in text]
    out = []
    for i in range(len(keys) - spec.n + 1):
        h = xxh64(str(spec))
        for k in keys[i : i + spec.n]:
            h = mix((h * GOLDEN + k) & MASK)
        out.append(h)
    if spec.kind != "code" and 0 < len(keys) < spec.n:  # shorter than one shingle: the whole sequence
        h = xxh64(str(spec))
        for k in keys:
            h = mix((h * GOLDEN + k) & MASK)
        out.append(h)
    return out


def rows(indptr: np.ndarray, keys: np.ndarray) -> list[list[int]]:
    assert indptr.dtype == np.int64 and keys.dtype == np.uint64
    assert indptr[0] == 0 and indptr[-1] == len(keys) and np.all(np.diff(indptr) >= 0)
    return [keys[indptr[i] : indptr[i + 1]].tolist() for i in range(len(indptr) - 1)]


# --- Property: the fast path is the oracle ----------------------------------------

CODE_ALPHABET = list("abxyz_019 .,;:=+-*/<>!&|^%(){}[]\"'`#\\@$\t\n\r") + ["é", "ﬁ", "٣"]
TEXT_ALPHABET = st.characters(blacklist_categories=("Cs",))
specs = st.builds(ShingleSpec, st.sampled_from(["word", "char", "code"]), st.integers(1, 5))
texts = st.one_of(
    st.text(TEXT_ALPHABET, max_size=40),
    st.text(st.sampled_from(CODE_ALPHABET), max_size=60),
    st.lists(st.sampled_from(["Hello", "WORLD", "ﬁne", "Straße", "  ", "\u00a0", "\n", "x", "ｘ", "1"]),
             max_size=12).map(" ".join),
)


@pytest.mark.kernel_paths("compiled", "python")
@settings(max_examples=300, deadline=None)
@given(
    st.lists(texts, max_size=6),
    specs,
    st.booleans(),
    st.lists(st.sampled_from(["go", "c", "python", None]), min_size=6, max_size=6),
)
def test_shingle_texts_agrees_with_the_python_oracle(docs, spec, normalize, langs):
    langs = langs[: len(docs)]
    indptr, keys = shingle_texts(docs, spec, normalize=normalize, languages=langs)
    assert rows(indptr, keys) == [naive_keys(d, spec, normalize, lang) for d, lang in zip(docs, langs)]


@pytest.mark.kernel_paths("compiled", "python")
@settings(max_examples=50, deadline=None)
@given(st.lists(st.lists(st.one_of(st.integers(-5, 50), st.text(max_size=4)), max_size=8), max_size=8))
def test_hash_sets_agrees_with_token_key_of_str(sets):
    indptr, keys = hash_sets(sets)
    assert rows(indptr, keys) == [[xxh64(str(t)) for t in s] for s in sets]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.none() | st.lists(st.none() | st.text(max_size=4), max_size=5), max_size=7),
       st.lists(st.none() | st.lists(st.none() | st.integers(-2**63, 2**63 - 1), max_size=5), max_size=7),
       st.sampled_from(["list", "large_list", "large_string"]), st.integers(0, 2), st.booleans(), st.booleans())
def test_token_lists_are_hashed_from_arrow_buffers_as_the_tokens_strings(texts, ints, kind, skip, chunked, sort):
    # A Parquet column of token lists (--tokens-col) is hashed from Arrow's buffers, with no Python
    # string per token: the keys of str() of each token, a null list empty and null tokens left out (as
    # before, through Python lists); sliced arrays, several chunks, large types and integers included.
    pa = pytest.importorskip("pyarrow", reason="pyarrow is not installed (the parquet extra)")
    from allpairs.corpus.linefile import ArrowTokenSets

    for rows_, value in ((texts, pa.large_string() if kind == "large_string" else pa.string()), (ints, pa.int64())):
        typ = pa.large_list(value) if kind == "large_list" else pa.list_(value)
        column = pa.array(rows_, typ).slice(min(skip, len(rows_)))
        if chunked and len(column) > 1:
            column = pa.chunked_array([column.slice(0, 1), column.slice(1)])
        want = [[str(t) for t in (r or []) if t is not None] for r in rows_[min(skip, len(rows_)):]]
        got = ArrowTokenSets(column)
        assert list(got) == want
        assert shingle_sets.token_list_keys(column) is not None
        indptr, keys = hash_sets(got, sorted_rows=sort)
        assert rows(indptr, keys) == [sorted(set(map(xxh64, r))) if sort else [xxh64(t) for t in r] for r in want]
    floats = ArrowTokenSets(pa.array([[1.5, None], None, [2.0]], pa.list_(pa.float64())))
    assert shingle_sets.token_list_keys(floats.column) is None  # str() of each decides: by the Python path
    assert rows(*hash_sets(floats)) == [[xxh64("1.5")], [], [xxh64("2.0")]]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.one_of(st.text(max_size=4), st.integers(0, 9)), max_size=6), max_size=10),
       st.integers(1, 4), st.sampled_from([1, 2]))
def test_hash_sets_in_blocks_on_a_second_thread_gives_the_same_keys_or_sorted_rows(sets, block, jobs):
    # Blocks of a few tokens: boundaries fall everywhere, also next to empty sets; a token holding
    # U+0000 (the separator) or one that is not a string, in any block, sends all to the slow path.
    old = shingle_sets._SPLIT_TOKENS
    shingle_sets._SPLIT_TOKENS = block
    try:
        indptr, keys = hash_sets(sets, jobs=jobs)
    finally:
        shingle_sets._SPLIT_TOKENS = old
    assert rows(indptr, keys) == [[xxh64(str(t)) for t in s] for s in sets]
    shingle_sets._SPLIT_TOKENS = block
    try:
        indptr, keys = hash_sets(sets, jobs=jobs, sorted_rows=True)
    finally:
        shingle_sets._SPLIT_TOKENS = old
    assert rows(indptr, keys) == [sorted({xxh64(str(t)) for t in s}) for s in sets]


# --- Golden values: keys must never change ------------------------------------------

# Regenerated for key version 2 from the ``xxhash`` package and the documented
# n-gram rule in Python ints (the oracle above), not from allpairs itself.

def test_token_key_is_xxh64_seed_0():
    assert shingles.KEY_VERSION == 2
    assert token_key("") == 17241709254077376921
    assert token_key("a") == 15154266338359012955
    assert token_key("func") == 6731534508025796178
    assert token_key(";") == 1366908685946290533
    assert token_key("héllo") == 4310053764713069540
    assert token_key("héllo") == xxhash.xxh64_intdigest("héllo".encode())


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
def test_token_key_agrees_with_the_xxhash_package(token):
    assert token_key(token) == xxh64(token)


@pytest.mark.kernel_paths("compiled", "python")
def test_golden_shingle_keys():
    assert shingle_texts(["The quick brown fox"], "word:2")[1].tolist() == [
        16000210122695339699, 8883719950542147912, 10355714460921923734]
    assert shingle_texts(["abcd"], "char:3")[1].tolist() == [4700240246742736253, 6857136959360111279]
    # x := 1 ; (the last one an automatic semicolon)
    assert shingle_texts(["x := 1\n"], "code:2", languages=["go"])[1].tolist() == [
        2915912467791218819, 9895846317118683662, 10952078884131643501]
    assert hash_sets([[1, 2], ["2"]])[1].tolist() == [
        13237225503670494420, 6927017134761466251, 6927017134761466251]


def test_same_token_differs_by_kind_and_by_n():
    keys = [shingle_texts(["a"], spec)[1].tolist() for spec in ("word:1", "char:1", "code:1")]
    assert keys == [[13427174855594736999], [2377868709549403207], [8182251386338865348]]
    assert shingle_texts(["a a"], "word:1")[1][0] != shingle_texts(["a a"], "word:2")[1][0]


# --- Shapes, edge cases --------------------------------------------------------------

def test_a_text_shorter_than_one_shingle_is_one_shingle_and_a_short_program_none():
    indptr, keys = shingle_texts(["a b", "", "a b c", "x", "A, b!"], "word:3")
    assert indptr.tolist() == [0, 1, 1, 2, 3, 4]
    # "a b" is its whole word sequence: the same key as its copy, none of any 3-gram's.
    assert keys[0] == keys[3] and len(set(keys[:3].tolist())) == 3
    assert shingle_texts(["ab"], "char:3")[0].tolist() == [0, 1]
    # Go "x" is two tokens: x and the semicolon at the end of the file; a program shorter than
    # one shingle is near-empty (a package clause): it has none.
    assert shingle_texts(["x", "// only a comment\n"], "code:3", languages=["go", "go"])[0].tolist() == [0, 0, 0]
    assert shingle_texts(["x", "// only a comment\n"], "code:2", languages=["go", "go"])[0].tolist() == [0, 1, 1]


def test_empty_corpus_gives_empty_csr():
    for spec in ("word:3", "char:3", "code:5"):
        indptr, keys = shingle_texts([], spec)
        assert indptr.tolist() == [0] and indptr.dtype == np.int64
        assert keys.shape == (0,) and keys.dtype == np.uint64
    indptr, keys = hash_sets([])
    assert indptr.tolist() == [0] and keys.dtype == np.uint64


def test_duplicates_are_kept_in_text_order():
    _, keys = shingle_texts(["to be or not to be"], "word:2")
    assert keys[0] == keys[4] and len(keys) == 5


def test_normalisation_nfkc_casefold_whitespace():
    assert normalize_text("  Straße\u00a0\tＡＢ\n\nﬁx ") == "strasse ab fix"
    a = shingle_texts(["Hello   WORLD"], "char:3")[1]
    b = shingle_texts(["hello world"], "char:3")[1]
    assert a.tolist() == b.tolist()
    assert shingle_texts(["Hello   WORLD"], "char:3", normalize=False)[1].tolist() != b.tolist()
    assert shingle_texts(["Hello"], "word:1", normalize=False)[1].tolist() != shingle_texts(["hello"], "word:1")[1].tolist()


def test_code_is_never_normalised():
    a = shingle_texts(["X := Y\n"], "code:1", languages=["go"])[1]
    b = shingle_texts(["x := y\n"], "code:1", languages=["go"])[1]
    assert a[0] != b[0]


def test_lone_surrogate_is_a_character_not_an_error():
    _, keys = shingle_texts(["a\ud800b"], "char:1", normalize=False)
    assert keys.tolist() == naive_keys("a\ud800b", ShingleSpec("char", 1), normalize=False)
    char_key = xxh64("\ud800")  # its 3-byte form, ED A0 80, as surrogatepass writes it
    assert keys[1] == mix((xxh64("char:1") * GOLDEN + char_key) & MASK)


def test_mixed_languages_keep_document_order():
    docs = ["x := 1\n", "def f(): pass", "int x = 1;", "y++\n", "z = 2  # c"]
    langs = ["go", "python", None, "go", "python"]
    together = rows(*shingle_texts(docs, "code:2", languages=langs))
    alone = [rows(*shingle_texts([d], "code:2", languages=[lang]))[0] for d, lang in zip(docs, langs)]
    assert together == alone


def test_batches_do_not_change_the_result(monkeypatch):
    docs = [f"doc {i} " + "word " * (i % 7) + "x := y\n" * (i % 3) for i in range(40)]
    langs = ["go", "c", "python", None] * 10
    expected = {spec: shingle_texts(docs, spec, languages=langs) for spec in ("word:2", "char:4", "code:3")}
    monkeypatch.setattr(shingle_texts_module, "_BATCH_DOCS", 3)
    monkeypatch.setattr(shingle_texts_module, "_BATCH_CHARS", 20)
    for spec, (indptr, keys) in expected.items():
        got_indptr, got_keys = shingle_texts(docs, spec, languages=langs)
        assert np.array_equal(got_indptr, indptr) and np.array_equal(got_keys, keys)


def first_occurrences(row: list[int]) -> list[int]:
    return list(dict.fromkeys(row))


@settings(max_examples=150, deadline=None)
@given(
    st.lists(texts, max_size=6),
    specs,
    st.lists(st.sampled_from(["go", "c", "python", None]), min_size=6, max_size=6),
    st.integers(1, 4),
)
def test_distinct_keeps_each_key_at_its_first_occurrence_whatever_the_texts_are_held_in(docs, spec, langs, batch):
    langs = langs[: len(docs)]
    expected = [first_occurrences(r) for r in rows(*shingle_texts(docs, spec, languages=langs))]
    held = Utf8Texts.of([d.encode("utf-8", "surrogatepass") for d in docs])
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(shingle_texts_module, "_BATCH_DOCS", batch)  # several batches share the repeat table
        assert rows(*shingle_texts(docs, spec, languages=langs, distinct=True)) == expected
        assert rows(*shingle_texts(held, spec, languages=langs, distinct=True)) == expected


def test_texts_held_as_utf8_give_the_same_keys_in_a_worker_pool():
    docs = [f"func f{i}() {{\n\treturn {i} + x // é\n}}\n" * (1 + i % 5) for i in range(30)] + ["é := 1\n"]
    langs = ["go", "c", "python"] * 10 + ["go"]
    held = Utf8Texts.of([d.encode() for d in docs])
    for spec in ("code:3", "word:2"):
        serial = shingle_texts(docs, spec, languages=langs, workers=1)
        pooled = shingle_texts(held, spec, languages=langs, workers=2, distinct=True)
        assert rows(*pooled) == [first_occurrences(r) for r in rows(*serial)]


def test_go_files_held_as_utf8_give_the_same_keys_with_any_number_of_threads(monkeypatch):
    docs = [f"package p\n\nfunc f{i}() int {{\n\treturn {i} + x // é\n}}\n" * (1 + i % 7) for i in range(60)]
    docs[7] = "x := 1\nvar é = 2\n"  # declined by the kernel: the regex path, in its place
    held = Utf8Texts.of([d.encode() for d in docs])
    langs = ["go"] * len(docs)
    expected = rows(*shingle_texts(docs, "code:4", languages=langs, workers=1))
    monkeypatch.setattr(shingle_texts_module, "_BATCH_DOCS", 4)
    for jobs in (1, 2, 5):
        calls = []
        got = shingle_texts(held, "code:4", languages=langs, jobs=jobs, progress=calls.append)
        assert rows(*got) == expected and sum(calls) == len(docs)
        got = shingle_texts(held, "code:4", languages=langs, jobs=jobs, distinct=True)
        assert rows(*got) == [first_occurrences(r) for r in expected]


def test_progress_adds_up_to_the_number_of_texts(monkeypatch):
    monkeypatch.setattr(shingle_texts_module, "_BATCH_DOCS", 4)
    calls = []
    shingle_texts(["a b c"] * 10, "word:2", progress=calls.append)
    assert sum(calls) == 10 and len(calls) == 3


def test_worker_pool_gives_byte_identical_result(monkeypatch):
    docs = [f"func f{i}() {{\n\treturn {i} + x\n}}\n" * (1 + i % 5) for i in range(30)]
    langs = ["go"] * 30
    serial = shingle_texts(docs, "code:3", languages=langs, workers=1)
    calls = []
    pooled = shingle_texts(docs, "code:3", languages=langs, workers=2, progress=calls.append)
    assert sum(calls) == 30
    assert serial[0].tobytes() == pooled[0].tobytes() and serial[1].tobytes() == pooled[1].tobytes()
    # The default: a pool once the corpus is large enough (here: any size).
    monkeypatch.setattr(shingle_pool, "PARALLEL_MIN_CHARS", 1)
    default = shingle_texts(docs, "code:3", languages=langs)
    assert serial[1].tobytes() == default[1].tobytes()


def test_jobs_bounds_the_worker_processes_of_the_shingle_stage(monkeypatch):
    # -j/--jobs 1 means one core: no pool of worker processes, however large the corpus.
    pool = shingle_pool
    monkeypatch.setattr(pool, "PARALLEL_MIN_CHARS", 1)
    monkeypatch.setattr(pool.os, "sched_getaffinity", lambda pid: set(range(4)))
    docs = [f"w{i} x{i % 7} y z" for i in range(50)]
    spec = ShingleSpec("word", 2)
    assert pool.pool_workers(None, docs, spec, 1) == 1
    assert pool.pool_workers(None, docs, spec, 3) == 3
    assert pool.pool_workers(None, docs, spec) == 4
    monkeypatch.setattr(pool, "shingle_in_pool", lambda *a, **k: pytest.fail("a worker pool was started with jobs=1"))
    one = shingle_texts(docs, "word:2", jobs=1)
    serial = shingle_texts(docs, "word:2", workers=1)
    assert one[1].tobytes() == serial[1].tobytes()


def test_token_keys_hash_each_distinct_token_once_and_keep_order():
    tokens = ["b", "a", "b", "", "a"]
    assert token_keys(tokens).tolist() == [token_key(t) for t in tokens]
    assert token_keys(iter(tokens)).dtype == np.uint64
    assert token_keys([]).shape == (0,)


def test_hash_sets_treats_int_and_str_alike_and_keeps_empty_sets():
    indptr, keys = hash_sets([[5, 7], [], ["5"], iter([7])])
    assert indptr.tolist() == [0, 2, 2, 3, 4]
    assert keys[0] == keys[2] == token_key("5") and keys[1] == keys[3]


# --- Bad options ---------------------------------------------------------------------

@pytest.mark.parametrize("text, message", [
    ("word:0", "at least 1, got 0"),
    ("char:-3", "at least 1, got -3"),
    ("bogus:3", "unknown shingle kind 'bogus'.*word:N, char:N or code:N"),
    ("word", "needs an integer size.*word:3"),
    ("code:five", "needs an integer size.*code:3"),
    ("word:2.5", "needs an integer size"),
])
def test_bad_spec_is_a_usage_error_with_value_and_fix(text, message):
    with pytest.raises(UsageError, match=message):
        ShingleSpec.parse(text)


def test_spec_round_trips_and_validates_direct_construction():
    for text in ("word:3", "char:1", "code:5"):
        assert str(ShingleSpec.parse(text)) == text
    assert ShingleSpec.parse(" Code:5 ") == ShingleSpec("code", 5)
    with pytest.raises(UsageError, match="unknown shingle kind"):
        ShingleSpec("line", 2)
    with pytest.raises(UsageError, match="integer"):
        ShingleSpec("word", True)


def test_bad_languages_and_workers_are_usage_errors():
    with pytest.raises(UsageError, match="2 entries for 3 texts"):
        shingle_texts(["a", "b", "c"], "code:1", languages=["go", "go"])
    with pytest.raises(UsageError, match="'fortran'"):
        shingle_texts(["a"], "code:1", languages=["fortran"])
    with pytest.raises(UsageError, match="workers must be an integer >= 1, got 0"):
        shingle_texts(["a"], "word:1", workers=0)


# --- Calibration on the Go tree (REFERENCE.md §1) ------------------------------------

GO_ARCHIVE = "go1.27.3-src-nontest.tar.xz"
CALIBRATION_FILES = ["bytes/reader.go", "strings/reader.go", "cmd/gofmt/internal.go", "go/format/internal.go"]


@pytest.fixture(scope="module")
def go_calibration_texts(tmp_path_factory) -> dict[str, str]:
    """The four calibration files, read out of the shared archive (only those)."""
    folder = shared_datasets_dir()
    archive = folder / GO_ARCHIVE if folder else None
    if archive is None or not archive.is_file():
        reason = f"{GO_ARCHIVE} not found (looked in {folder or '../shared/datasets'}; set ALLPAIRS_DATASETS)"
        print(reason)
        pytest.skip(reason)
    out = tmp_path_factory.mktemp("go-src")
    wanted = set(CALIBRATION_FILES)
    with tarfile.open(archive, "r:xz") as tar:
        for member in tar:
            name = member.name.removeprefix("./")
            if name in wanted and member.isfile():
                (out / name).parent.mkdir(parents=True, exist_ok=True)
                (out / name).write_bytes(tar.extractfile(member).read())
                wanted.discard(name)
                if not wanted:
                    break
    assert not wanted, f"missing from {archive}: {sorted(wanted)}"
    return {name: (out / name).read_text(encoding="utf-8") for name in CALIBRATION_FILES}


def test_go_tree_calibration_distinct_code5_shingles(go_calibration_texts):
    docs = [go_calibration_texts[name] for name in CALIBRATION_FILES]
    indptr, keys = shingle_texts(docs, "code:5", languages=["go"] * 4)
    bytes_r, strings_r, gofmt, go_format = (set(row) for row in rows(indptr, keys))
    assert (len(bytes_r), len(strings_r), len(bytes_r & strings_r)) == (580, 559, 464)
    assert (len(gofmt & go_format), len(gofmt | go_format)) == (580, 584)


def test_the_default_shingle_follows_the_median_text_length_at_3_and_50_words():
    from allpairs.shingles import shingle_for_texts

    def texts(words, n=5):
        return [" ".join(["w"] * words)] * n

    assert [str(shingle_for_texts(texts(k)).spec) for k in (1, 2, 3, 49, 50, 400)] == \
        ["char:3", "char:3", "word:1", "word:1", "word:5", "word:5"]
    # The median decides: three titles and two pages are titles; words are runs of \w ("USB-C" is two).
    choice = shingle_for_texts(["USB-C cable, 2m"] * 3 + [" ".join(["page"] * 900)] * 2)
    assert (str(choice.spec), choice.median_words) == ("word:1", 4)
    assert "the median text has 4 words" in choice.describe()
    assert "50 words or more" in shingle_for_texts(texts(900)).describe()
    held = Utf8Texts.of([t.encode() for t in texts(2) + texts(60, 2)])  # files as read: UTF-8, not decoded
    assert shingle_for_texts(held).median_words == 2


def test_the_sets_token_table_is_str_split_at_every_code_point():
    # not_space looks only at the code points str.isspace may be true of: none is missed, and none past
    # SPACE_END, where the join's short table stops.
    import sys

    from allpairs.shingles.utf8 import SPACE_END, not_space

    expected = np.fromiter((not chr(c).isspace() for c in range(sys.maxunicode + 1)), np.bool_, sys.maxunicode + 1)
    assert np.array_equal(not_space(), expected)
    assert np.array_equal(not_space(SPACE_END), expected[:SPACE_END])
    assert expected[SPACE_END:].all()


#: Tokens near the edge of "a whole number as str() writes it" (keyed by value by the join's keys).
_NUMBERISH = ["0", "00", "01", "1", "9", "10", "+1", "-1", "1.0", "1e3", "1a", "a1", "\u0663", "1\u0663", "\u00b2",
              "123456789012345678", "1234567890123456789", "99999999999999999999999", "\U0001f600", "1\U0001f600"]
_SPACES = [" ", "\t", "  ", "\u00a0", "\u2028", "\u3000", "\x1c", "\u0085"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.one_of(st.sampled_from(_NUMBERISH), st.integers(0, 10**20).map(str),
                                   st.text(st.characters(blacklist_categories=("Cs", "Zs", "Zl", "Zp", "Cc")),
                                           min_size=1, max_size=4)), max_size=6), max_size=12),
       st.lists(st.sampled_from(_SPACES), min_size=1, max_size=3), st.sampled_from(["python", "compiled"]),
       st.sampled_from(["none", "size", "short"]), st.floats(0, 1))
def test_the_join_keys_are_one_function_of_the_token_and_a_whole_number_is_keyed_by_its_value(
        sets, spaces, mode, hint, cut):
    from allpairs._kernels.jit import use_kernels
    from allpairs.corpus import linefile

    lines = [spaces[i % len(spaces)].join(s) for i, s in enumerate(sets)]
    data = "\n".join(lines).encode("utf-8")
    tokens = [t for line in lines for t in line.split()]
    size = {"none": None, "size": len(data), "short": len(data) // 3}[hint]  # short: the hint falls short

    def pieces():  # the text read in two chunks, cut anywhere
        at = int(cut * len(data))
        decoder, ascii_safe = linefile._decoder("utf-8")
        return linefile._pieces("t", iter([data[:at], data[at:]]), decoder, ascii_safe, "utf-8",
                                linefile.MAX_LINE_BYTES)

    with use_kernels(mode):
        hashed = shingle_sets.hash_set_pieces(pieces(), size)
        joined = shingle_sets.hash_set_pieces(pieces(), size, join_keys=True)
    read = data.split(b"\n")[:-1] if data.endswith(b"\n") or not data else data.split(b"\n")  # the file's lines
    assert hashed[0].tolist() == joined[0].tolist() == np.cumsum([0] + [len(x.decode().split()) for x in read]).tolist()
    assert hashed[1].tolist() == [token_key(t) for t in tokens]
    whole = [t.isascii() and t.isdigit() and len(t) <= 18 and (t == "0" or t[0] != "0") for t in tokens]
    assert joined[1].tolist() == [mix((int(t) + GOLDEN) & MASK) if w else token_key(t) for t, w in zip(tokens, whole)]
    # Equal tokens, equal keys; distinct tokens, distinct keys.
    assert len(set(zip(tokens, joined[1].tolist()))) == len(set(tokens)) == len(set(joined[1].tolist()))


@pytest.mark.parametrize("width", [8, 16, 32, 64])
@pytest.mark.parametrize("signed", [True, False])
def test_integer_token_lists_of_every_width_are_keyed_as_their_strings(width, signed):
    # The digits of each integer hashed without a string (the kernel xxh64_decimal): the keys of str() of
    # each, whatever the integer type; its extremes, nulls and a sliced column included.
    pa = pytest.importorskip("pyarrow", reason="pyarrow is not installed (the parquet extra)")
    lo, hi = (-2**(width - 1), 2**(width - 1) - 1) if signed else (0, 2**width - 1)
    rows_ = [[3], [lo, hi, None, 0], None, [], [1, 10, hi // 10, lo // 10, None], [5]]
    typ = getattr(pa, f"{'' if signed else 'u'}int{width}")()
    column = pa.array(rows_, pa.list_(typ)).slice(1)
    indptr, keys = shingle_sets.token_list_keys(column)
    assert rows(indptr, keys) == [[xxh64(str(t)) for t in (r or []) if t is not None] for r in rows_[1:]]
