"""The dataset loaders find the real corpora, count them right, and say how to get them.

Tests that need the shared data folder skip (with the place they looked)
when it is absent; the rest run on small files made here.
"""
from __future__ import annotations

import hashlib
import io
import itertools
import re
import sys
import tarfile
import unicodedata
from fractions import Fraction
from pathlib import Path

import pytest

import datasets
from datasets import go, kosarak, passwords, synthetic
from conftest import shared_datasets_dir


# --- where the data is --------------------------------------------------------


def test_loaders_and_conftest_agree_on_the_shared_folder():
    assert datasets.shared_dir() == shared_datasets_dir()


def test_shared_folder_follows_allpairs_datasets(monkeypatch, tmp_path):
    monkeypatch.setenv("ALLPAIRS_DATASETS", str(tmp_path))
    assert datasets.shared_dir() == tmp_path == shared_datasets_dir()
    monkeypatch.setenv("ALLPAIRS_DATASETS", str(tmp_path / "absent"))
    assert datasets.shared_dir() is None and shared_datasets_dir() is None


def test_this_datasets_package_is_the_projects_own():
    assert Path(datasets.__file__).resolve().parent == Path(__file__).resolve().parents[1] / "datasets"


@pytest.fixture
def no_shared(monkeypatch, tmp_path):
    """A shared data folder that holds nothing."""
    empty = tmp_path / "empty-shared"
    empty.mkdir()
    monkeypatch.setenv("ALLPAIRS_DATASETS", str(empty))
    return empty


# --- Go -----------------------------------------------------------------------


def test_go_reference_corpus_has_3104_files(go_reference_src):
    files = go.go_reference_files(go_reference_src)
    assert len(files) == 3104
    rel = [f.relative_to(go_reference_src).as_posix() for f in files]
    assert rel == sorted(rel)
    assert "cmd/gofmt/internal.go" in rel and "go/format/internal.go" in rel
    assert any(r.startswith("vendor/") for r in rel) and any(r.startswith("cmd/vendor/") for r in rel)
    assert not [r for r in rel if r.endswith("_test.go") or "testdata/" in r]
    assert min(f.stat().st_size for f in files) >= go.MIN_SIZE


def test_go_six_directories_have_139_files(go_reference_src):
    files = go.go_reference_files(go_reference_src, go.SIX_DIRS)
    assert len(files) == 139
    by_dir = {}
    for f in files:
        d = f.parent.relative_to(go_reference_src).as_posix()
        by_dir[d] = by_dir.get(d, 0) + 1
    assert by_dir == {
        "bytes": 4, "strings": 6, "math/rand": 4, "math/rand/v2": 5,
        "go/types": 63, "cmd/compile/internal/types2": 57,
    }


def test_math_rand_does_not_include_math_rand_v2(go_reference_src):
    files = go.go_reference_files(go_reference_src, ["math/rand"])
    assert len(files) == 4
    assert all(f.parent.name == "rand" for f in files)


def _write(path: Path, size: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * size)


def test_go_reference_files_applies_the_corpus_definition(tmp_path):
    big, small = go.MIN_SIZE, go.MIN_SIZE - 1
    _write(tmp_path / "bytes/buffer.go", big)
    _write(tmp_path / "bytes/tiny.go", small)
    _write(tmp_path / "bytes/buffer_test.go", big)
    _write(tmp_path / "bytes/testdata/x.go", big)
    _write(tmp_path / "bytes/notes.txt", big)
    _write(tmp_path / "vendor/golang.org/x/a.go", big)
    _write(tmp_path / "cmd/vendor/b.go", big)
    _write(tmp_path / "math/rand/rng.go", big)
    _write(tmp_path / "math/rand/v2/rng.go", big)
    rel = lambda files: [f.relative_to(tmp_path).as_posix() for f in files]  # noqa: E731
    assert rel(go.go_reference_files(tmp_path)) == [
        "bytes/buffer.go", "cmd/vendor/b.go", "math/rand/rng.go", "math/rand/v2/rng.go",
        "vendor/golang.org/x/a.go",
    ]
    assert rel(go.go_reference_files(tmp_path, ["math/rand"])) == ["math/rand/rng.go"]
    assert rel(go.go_reference_files(tmp_path, ["math/rand", "math/rand/v2/"])) == [
        "math/rand/rng.go", "math/rand/v2/rng.go",
    ]


def test_find_go_src_takes_allpairs_go_src_first(monkeypatch, tmp_path):
    monkeypatch.setenv("ALLPAIRS_GO_SRC", str(tmp_path))
    assert go.find_go_src() == tmp_path


def test_find_go_src_rejects_an_allpairs_go_src_that_is_not_a_directory(monkeypatch, tmp_path):
    monkeypatch.setenv("ALLPAIRS_GO_SRC", str(tmp_path / "nowhere"))
    with pytest.raises(FileNotFoundError, match="ALLPAIRS_GO_SRC=.*nowhere"):
        go.find_go_src()


def test_find_go_src_falls_back_to_debian_golang_src(monkeypatch, tmp_path, no_shared):
    monkeypatch.delenv("ALLPAIRS_GO_SRC", raising=False)
    monkeypatch.setattr(go, "_goroot_src", lambda: None)
    debian = tmp_path / "usr/lib/go-1.19/src"
    debian.mkdir(parents=True)
    monkeypatch.setattr(go, "_debian_srcs", lambda: [tmp_path / "usr/lib/go/src", debian])
    assert go.find_go_src() == debian


def test_find_go_src_says_how_to_install_go_when_nothing_is_found(monkeypatch, no_shared):
    monkeypatch.delenv("ALLPAIRS_GO_SRC", raising=False)
    monkeypatch.setattr(go, "_goroot_src", lambda: None)
    monkeypatch.setattr(go, "_debian_srcs", lambda: [])
    with pytest.raises(FileNotFoundError) as err:
        go.find_go_src()
    message = str(err.value)
    assert "apt-get install golang-src" in message
    assert go.GO_ARCHIVE in message and str(no_shared) in message
    assert "/usr/lib/go*/src" in message


def _fake_go_archive(path: Path, body: bytes) -> None:
    with tarfile.open(path, "w:xz") as tar:
        info = tarfile.TarInfo("bytes/reader.go")
        info.size = len(body)
        tar.addfile(info, io.BytesIO(body))


def test_shared_go_src_unpacks_once_into_the_cache(monkeypatch, tmp_path, no_shared):
    cache = tmp_path / "cache"
    monkeypatch.setenv("ALLPAIRS_CACHE", str(cache))
    _fake_go_archive(no_shared / go.GO_ARCHIVE, b"package bytes\n")
    src = go.shared_go_src()
    assert src == cache / "go1.27.3" / "src"
    assert (src / "bytes/reader.go").read_bytes() == b"package bytes\n"
    assert [p.name for p in cache.iterdir()] == ["go1.27.3"]  # no scratch directory left behind
    _fake_go_archive(no_shared / go.GO_ARCHIVE, b"package changed\n")
    assert go.shared_go_src() == src
    assert (src / "bytes/reader.go").read_bytes() == b"package bytes\n"  # not unpacked again


def test_find_go_src_prefers_the_shared_archive_to_the_system_go(monkeypatch, tmp_path, no_shared):
    monkeypatch.delenv("ALLPAIRS_GO_SRC", raising=False)
    monkeypatch.setenv("ALLPAIRS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(go, "_goroot_src", lambda: tmp_path)
    _fake_go_archive(no_shared / go.GO_ARCHIVE, b"package bytes\n")
    assert go.find_go_src() == tmp_path / "cache" / "go1.27.3" / "src"


# --- passwords ----------------------------------------------------------------


def test_john_passwords_has_3546(john_passwords_file):
    words = passwords.john_passwords()
    assert len(words) == 3546
    assert words[:3] == ["123456", "12345", "password"]
    assert words[-1] == "sss"
    assert words.count("") == 1  # the list's own empty password, line 22


def test_john_passwords_from_debian_drops_comment_lines(monkeypatch, tmp_path, no_shared):
    lst = tmp_path / "password.lst"
    lst.write_text("#!comment: This list is public domain\n#!comment: second\n123456\nhello world\n\nabc\n")
    monkeypatch.setattr(passwords, "JOHN_DEBIAN", lst)
    assert passwords.john_passwords() == ["123456", "hello world", "", "abc"]


def test_john_passwords_absent_says_apt_get_install_john_data(monkeypatch, tmp_path, no_shared):
    monkeypatch.setattr(passwords, "JOHN_DEBIAN", tmp_path / "no/password.lst")
    with pytest.raises(FileNotFoundError, match="apt-get install john-data") as err:
        passwords.john_passwords()
    assert "passwords-john.txt" in str(err.value) and "password.lst" in str(err.value)


def test_zxcvbn_passwords_has_30000():
    pytest.importorskip("zxcvbn", reason="zxcvbn not installed (pip install zxcvbn)")
    words = passwords.zxcvbn_passwords()
    assert len(words) == 30000
    assert words[:3] == ["123456", "password", "12345678"]


def test_zxcvbn_passwords_absent_says_pip_install_zxcvbn(monkeypatch):
    monkeypatch.setitem(sys.modules, "zxcvbn", None)
    monkeypatch.setitem(sys.modules, "zxcvbn.frequency_lists", None)
    with pytest.raises(FileNotFoundError, match="pip install zxcvbn"):
        passwords.zxcvbn_passwords()


# --- Kosarak ------------------------------------------------------------------


def test_kosarak_sample_has_49207_lines(shared_datasets):
    path = kosarak.kosarak_path()
    # `wc -l` (and the shared README) say 49,206: the last line has no newline.
    assert path.read_bytes().count(b"\n") == 49206
    sets = kosarak.kosarak_sets()
    assert len(sets) == 49207
    assert sets[0] == ["0"] and sets[-1] == ["18994"]
    assert max(map(len, sets)) == 1010


def test_kosarak_sample_has_34985_distinct_sets(shared_datasets):
    sets = kosarak.kosarak_sets(distinct=True)
    assert len(sets) == 34985
    assert sets[:3] == [["0"], ["0", "1"], ["0", "1", "2"]]
    assert len({tuple(s) for s in sets}) == 34985
    assert all(s == sorted(set(s), key=int) for s in sets)
    # the same as taking each raw line as a set, keeping the first of each
    assert {frozenset(s) for s in kosarak.kosarak_sets()} == {frozenset(s) for s in sets}


def test_kosarak_write_distinct_writes_a_sets_file(shared_datasets, tmp_path):
    out = kosarak.write_distinct(tmp_path / "kosarak-distinct.sets")
    lines = out.read_text().splitlines()
    assert len(lines) == 34985
    assert [line.split() for line in lines[:3]] == [["0"], ["0", "1"], ["0", "1", "2"]]
    assert [p.name for p in tmp_path.iterdir()] == ["kosarak-distinct.sets"]


def test_kosarak_absent_names_the_file(no_shared):
    with pytest.raises(FileNotFoundError, match="kosarak-sample.dat") as err:
        kosarak.kosarak_sets()
    assert str(no_shared) in str(err.value)


# --- synthetic ----------------------------------------------------------------


def _sets_text(sets) -> str:
    return "".join(" ".join(map(str, s)) + "\n" for s in sets)


def test_zipf_sets_default_corpus_is_pinned():
    # The benchmark corpus: the same 20,000 sets on every machine and numpy version.
    sets = synthetic.zipf_sets(seed=0)
    assert len(sets) == 20000
    digest = hashlib.sha256(_sets_text(sets).encode()).hexdigest()
    assert digest == "4750920e6ebe0f65fcda5318ad56478e23c0a5ae3afe38be11efc0ecf4a63680"
    assert sum(map(len, sets)) == 298040
    assert len({tuple(s) for s in sets}) == 19201


def test_zipf_sets_first_sets_are_pinned():
    assert synthetic.zipf_sets(n=2, seed=0) == [
        [0, 114, 212, 707, 708, 1607, 1648, 2476, 4257, 5296],
        [0, 1, 4, 5, 11, 12, 14, 18, 24, 25, 64, 95, 150, 188, 249, 326, 460, 473, 654, 1244,
         1943, 2984, 3390, 3416, 5243],
    ]
    assert synthetic.planted_pairs(n=40, seed=0)[:3] == [
        (5, 10, Fraction(1)), (6, 11, Fraction(13, 21)), (3, 13, Fraction(3, 5)),
    ]


def test_zipf_sets_same_seed_same_sets_other_seed_other_sets():
    a = synthetic.zipf_sets(n=500, seed=7)
    assert a == synthetic.zipf_sets(n=500, seed=7)
    assert a != synthetic.zipf_sets(n=500, seed=8)
    assert synthetic.zipf_sets(n=300, seed=7) == a[:300]  # a smaller n is a prefix


def test_zipf_sets_shape():
    sets = synthetic.zipf_sets(n=2000, avg_size=15, vocabulary=10000, seed=3)
    assert all(s == sorted(set(s)) for s in sets)
    assert all(5 <= len(s) <= 25 for s in sets)
    assert all(0 <= t < 10000 for s in sets for t in s)
    assert 14 < sum(map(len, sets)) / len(sets) < 16
    counts = {}
    for s in sets:
        for t in s:
            counts[t] = counts.get(t, 0) + 1
    assert max(counts, key=counts.get) == 0  # rank 0 is the most frequent token


def test_planted_pairs_have_the_jaccard_they_claim():
    sets = synthetic.zipf_sets(n=2000, seed=1)
    planted = synthetic.planted_pairs(n=2000, seed=1)
    assert 500 < len(planted) < 700  # about 30% of 2000
    for source, copy, jaccard in planted:
        a, b = set(sets[source]), set(sets[copy])
        assert source < copy
        assert Fraction(len(a & b), len(a | b)) == jaccard
    assert any(j == 1 for _, _, j in planted) and any(j < Fraction(1, 2) for _, _, j in planted)


def test_zipf_sets_without_near_duplicates_plants_nothing():
    assert synthetic.planted_pairs(n=200, near_duplicates=0.0) == []


def test_zipf_sets_rejects_a_vocabulary_too_small_for_the_sets():
    with pytest.raises(ValueError, match="vocabulary of at least 50"):
        synthetic.zipf_sets(n=10, avg_size=15, vocabulary=40)


def test_documents_are_pinned_and_deterministic():
    docs = synthetic.documents(n=200, seed=0)
    assert hashlib.sha256("".join(docs).encode()).hexdigest() == (
        "73a1ca8b31a730a7258f53048eb2a105ea8223d79033003250f70d899256a8ce"
    )
    assert synthetic.documents(n=2, words=10, seed=0) == [
        "Ba ba lanu mupoba pobo soga lebe ribobe mipa.\n",
        "Ba ba lanu mupoba pobo soga lebe ribobe mipa.\n",
    ]
    assert synthetic.documents(n=50, seed=5) == synthetic.documents(n=50, seed=5)
    assert synthetic.documents(n=50, seed=5) != synthetic.documents(n=50, seed=6)


def test_documents_have_about_the_asked_number_of_words():
    docs = synthetic.documents(n=100, words=200, seed=2)
    lengths = [len(re.findall(r"\w+", d)) for d in docs]
    assert 150 - 20 <= min(lengths) and max(lengths) <= 250 + 20  # copies may gain or lose a few
    assert 180 < sum(lengths) / len(lengths) < 220


def test_documents_planted_copies_differ_by_their_edits():
    docs = synthetic.documents(n=300, seed=4, max_edits=3)
    planted = synthetic.documents_planted(n=300, seed=4, max_edits=3)
    assert planted
    for source, copy, edits in planted:
        a, b = docs[source].lower().split(), docs[copy].lower().split()
        assert abs(len(a) - len(b)) <= edits
        if edits == 0:
            assert docs[source] == docs[copy]


def test_words_are_distinct_and_short_for_frequent_ranks():
    words = [synthetic.word(k) for k in range(6000)]
    assert len(set(words)) == 6000
    assert words[:3] == ["ba", "be", "bi"]
    assert all(re.fullmatch(r"[a-z]+", w) for w in words)


def test_synthetic_cli_writes_the_same_corpus_as_the_api(tmp_path):
    out = tmp_path / "zipf.sets"
    assert synthetic.main(["zipf", "--n", "50", "--seed", "3", "-o", str(out)]) == 0
    assert out.read_text() == _sets_text(synthetic.zipf_sets(n=50, seed=3))
    planted = tmp_path / "planted.tsv"
    synthetic.main(["planted", "--n", "50", "--seed", "3", "-o", str(planted)])
    rows = [line.split("\t") for line in planted.read_text().splitlines()]
    assert [(int(a), int(b), Fraction(j)) for a, b, j in rows] == synthetic.planted_pairs(n=50, seed=3)
    docs = tmp_path / "docs"
    synthetic.main(["documents", "--n", "12", "--words", "30", "-o", str(docs)])
    names = sorted(p.name for p in docs.iterdir())
    assert names[0] == "doc00000.txt" and len(names) == 12
    assert (docs / "doc00011.txt").read_text() == synthetic.documents(n=12, words=30)[11]


# --- the tiny corpus ----------------------------------------------------------


def _word_set(path: Path) -> set[str] | None:
    """Naive word:1 shingles with the default normalisation; None for a binary file."""
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if "\0" in text:
        return None
    text = " ".join(unicodedata.normalize("NFKC", text).casefold().split())
    return set(re.findall(r"\w+", text))


def _expected_pairs() -> dict[tuple[str, str], Fraction]:
    text = (datasets.TINY.parent / "EXPECTED.md").read_text(encoding="utf-8")
    section = text.split("## Every pair", 1)[1].split("\n## ", 1)[0]
    pairs = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 7 and cells[0].startswith("`"):
            pairs[(cells[0].strip("`"), cells[1].strip("`"))] = Fraction(cells[5])
    return pairs


def test_tiny_corpus_matches_its_hand_worked_figures():
    files = sorted(p.name for p in datasets.TINY.iterdir())
    assert files == [
        "cat.txt", "empty.txt", "fox-copy.txt", "fox-jumped.txt", "fox-short.txt",
        "fox-shouted.txt", "fox.txt", "pixel.png",
    ]
    sets = {name: _word_set(datasets.TINY / name) for name in files}
    assert sets["pixel.png"] is None and sets["empty.txt"] == set()
    joined = sorted(name for name, s in sets.items() if s)
    computed = {
        (a, b): Fraction(len(sets[a] & sets[b]), len(sets[a] | sets[b]))
        for a, b in itertools.combinations(joined, 2)
    }
    expected = _expected_pairs()
    assert len(expected) == 15
    assert {tuple(sorted(k)): v for k, v in expected.items()} == computed
    at = lambda t: sum(1 for j in computed.values() if j >= t)  # noqa: E731
    assert [at(Fraction(1)), at(Fraction(7, 10)), at(Fraction(1, 2)), at(Fraction(1, 5))] == [3, 6, 10, 14]


def test_social_preset_is_the_explicit_arguments_and_its_first_sets_are_pinned():
    args = synthetic.zipf_preset("social-1m", n=2)
    assert args == dict(n=2, avg_size=27, vocabulary=1_000_000, near_duplicates=0.3, seed=0, skew=0.5)
    sets = synthetic.zipf_sets(**args)
    assert sets == synthetic.zipf_sets(n=2, avg_size=27, vocabulary=1_000_000, seed=0, skew=0.5)
    assert sets[0][:5] == [11, 296, 1175, 1736, 31066] and len(sets[0]) == 18
    assert synthetic.zipf_preset("social-1m")["n"] == 1_000_000


def test_synthetic_command_line_preset_yields_to_options_given(capsys):
    assert synthetic.main(["zipf", "--preset", "social-1m", "--n", "2"]) == 0
    assert capsys.readouterr().out == _sets_text(synthetic.zipf_sets(**synthetic.zipf_preset("social-1m", n=2)))


def test_products_are_pinned_short_and_their_relisted_copies_differ_in_case_or_punctuation():
    rows = synthetic.products(n=500, seed=0)
    assert hashlib.sha256(repr(rows).encode()).hexdigest() == (
        "77e08c762154ae61dff8453ff0e8ffd55c39a50472e8976ae4c9e14c03ddee15"
    )
    assert rows[:2] == [("SKU000000", "Fabe", "Fabe Case", "55.28"),
                        ("SKU000001", "Mubo", "Mubo Watch Band for Kindle Paperwhite", "31.37")]
    words = sorted(len(title.split()) for _, _, title, _ in rows)
    assert 3 <= words[len(words) // 2] <= 10 and max(words) <= 16
    planted = synthetic.products_planted(n=500, seed=0)
    assert 60 <= len(planted) <= 140 and all(a < b for a, b in planted)
    assert any(rows[a][2] != rows[b][2] and rows[a][2].lower() == rows[b][2].lower() for a, b in planted)


def test_licence_documents_are_the_base_texts_then_seeded_near_copies():
    from datasets.licences import licence_documents

    base = [[f"w{i}x{k}" for k in range(40)] for i in range(6)]
    docs = licence_documents(300, seed=3, base=base)
    assert docs == licence_documents(300, seed=3, base=base) != licence_documents(300, seed=4, base=base)
    assert len(docs) == 300 and docs[:6] == [" ".join(words) for words in base]
    words_of = [set(w for w in words) for words in base]
    for doc in docs[6:]:
        # A copy of a copy keeps most of its base text's words: at most one edit per 8 words each time.
        assert max(len(set(doc.split()) & ws) for ws in words_of) >= 10
    assert licence_documents(4, base=base) == [" ".join(words) for words in base[:4]]
