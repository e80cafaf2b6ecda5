"""Line-oriented input read in chunks: line rules, BOM, limits, encodings, and the --sets kernel."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allpairs.corpus import linefile
from allpairs.corpus import read_lines, read_sets
from allpairs.errors import InputError, UsageError
from allpairs.corpus.linefile import Utf8Texts, read_line_file
from allpairs.shingles import hash_set_pieces
from allpairs.shingles import hash_sets, shingle_texts

# Every character str.split() splits on, and some that it does not.
SPACES = [chr(c) for c in range(0x3001) if chr(c).isspace()]
ALPHABET = st.sampled_from(SPACES + list("ab\r\n") + ["é", "\u200b", "😀", "\ufeff", "\x1b"])


def reference_lines(text: str) -> list[str]:
    """The documented rule, in plain Python: split at \\n, drop one \\r before it, no empty last line."""
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def classic_mac(text: str) -> bool:
    """The documented refusal: no \n at all, and a \r before the end (lines ended by a lone \r)."""
    text = text[1:] if text.startswith("\ufeff") else text
    return "\n" not in text and "\r" in text.rstrip("\r")


@settings(max_examples=150, deadline=None)
@given(st.text(ALPHABET, max_size=60), st.integers(1, 9))
def test_lines_and_sets_agree_with_the_reference_across_chunk_boundaries(tmp_path_factory, text, chunk):
    path = tmp_path_factory.mktemp("lines") / "f.txt"
    path.write_bytes(text.encode("utf-8"))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(linefile, "CHUNK_BYTES", chunk)
        if classic_mac(text):
            for read in (read_lines, read_sets, lambda p: read_sets(p, hash_pieces=hash_set_pieces)):
                with pytest.raises(InputError, match="carriage return alone"):
                    read(path)
            return
        lines = reference_lines(text)
        assert list(read_lines(path).texts) == lines
        sets = read_sets(path).sets
        assert list(sets) == [line.split() for line in lines]
        fast = hash_sets(sets)
        slow = hash_sets([line.split() for line in lines])
        assert fast[0].tolist() == slow[0].tolist() and fast[1].tolist() == slow[1].tolist()


def test_a_utf8_bom_is_not_part_of_the_first_token_or_shingle(tmp_path):
    with_bom, without = tmp_path / "bom.txt", tmp_path / "plain.txt"
    with_bom.write_bytes(b"\xef\xbb\xbfabc def\nxyz\n")
    without.write_bytes(b"abc def\nxyz\n")
    assert read_sets(with_bom).sets == [["abc", "def"], ["xyz"]]
    assert hash_sets(read_sets(with_bom).sets)[1].tolist() == hash_sets(read_sets(without).sets)[1].tolist()
    texts = read_lines(with_bom).texts
    assert texts[0] == "abc def"
    assert shingle_texts(texts, "char:3")[1].tolist() == shingle_texts(read_lines(without).texts, "char:3")[1].tolist()


def test_a_line_longer_than_the_limit_is_one_clear_error(tmp_path):
    f = tmp_path / "long.txt"
    f.write_text("short\n" + "x" * 100 + "\nshort\n")
    with pytest.raises(InputError, match=r"long.txt:2: line longer than 50 bytes"):
        read_line_file(f, max_line_bytes=50)
    f.write_text("y" * 100)  # no line end at all
    with pytest.raises(InputError, match=r"long.txt:1: line longer than 50 bytes"):
        read_line_file(f, max_line_bytes=50)
    assert len(read_line_file(f, max_line_bytes=100)) == 1


def test_dev_zero_is_refused_at_once_instead_of_filling_memory():
    with pytest.raises(InputError, match="/dev/zero:1: NUL byte"):
        read_sets("/dev/zero")


def test_endless_line_without_nul_stops_at_the_limit(monkeypatch, tmp_path):
    monkeypatch.setattr(linefile, "CHUNK_BYTES", 16)
    f = tmp_path / "flat.txt"
    f.write_text("a" * 1000)
    with pytest.raises(InputError, match="line longer than 100 bytes"):
        read_line_file(f, max_line_bytes=100)


def test_decode_errors_name_the_line_and_byte_across_chunks(monkeypatch, tmp_path):
    monkeypatch.setattr(linefile, "CHUNK_BYTES", 4)
    f = tmp_path / "bad.txt"
    f.write_bytes(b"ab\ncd\nef\xffgh\n")
    with pytest.raises(InputError, match=r"bad.txt:3: not valid utf-8 \(byte 8\)"):
        read_lines(f)
    assert read_lines(f, encoding="latin-1").texts[2] == "ef\u00ffgh"


def test_other_encodings_are_read_as_text(tmp_path):
    f = tmp_path / "u16.txt"
    f.write_bytes("é x\nb\n".encode("utf-16"))
    assert read_sets(f, encoding="utf-16").sets == [["é", "x"], ["b"]]
    with pytest.raises(UsageError, match="unknown encoding 'nope'"):
        read_lines(f, encoding="nope")


def test_line_views_index_slice_and_compare():
    lines = linefile.LineFile("x", bytearray(b"a b\r\n\nc\n"), np.array([0, 5, 6, 8], np.int64))
    texts = linefile.TextLines(lines)
    assert len(texts) == 3 and texts[-1] == "c" and texts[0:2] == ["a b", ""]
    assert texts == ["a b", "", "c"] and texts != ["a b"]
    with pytest.raises(IndexError):
        texts[3]
    assert linefile.TokenSets(lines)[0] == ["a", "b"]


@settings(max_examples=60, deadline=None)
@given(st.text(ALPHABET, max_size=60), st.integers(1, 9))
def test_sets_hashed_while_read_are_the_sets_hashed_after(tmp_path_factory, text, chunk):
    path = tmp_path_factory.mktemp("sets") / "f.sets"
    path.write_bytes(text.encode("utf-8"))
    if classic_mac(text):  # refused, by both (the test above)
        return
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(linefile, "CHUNK_BYTES", chunk)
        hashed = read_sets(path, hash_pieces=hash_set_pieces).sets
    later = read_sets(path).sets
    a, b = hash_sets(hashed), hash_sets(later)
    assert len(hashed) == len(later)
    assert a[0].tolist() == b[0].tolist() and a[1].tolist() == b[1].tolist()
    assert [len(set(s)) for s in hashed] == [len(set(s)) for s in later]


def test_ascii_chunks_skip_decoding_but_not_the_rules(monkeypatch, tmp_path):
    monkeypatch.setattr(linefile, "CHUNK_BYTES", 3)
    f = tmp_path / "mixed.txt"
    f.write_bytes("ab\r\ncd\né\nxyz".encode("utf-8"))
    assert list(read_lines(f).texts) == ["ab", "cd", "é", "xyz"]
    assert list(read_lines(f, encoding="latin-1").texts) == ["ab", "cd", "Ã©", "xyz"]


def test_a_size_hint_too_small_still_hashes_every_set(tmp_path, monkeypatch):
    from allpairs.corpus.linefile import read_pieces
    from allpairs.shingles import hash_set_pieces

    monkeypatch.setattr(linefile, "CHUNK_BYTES", 4)
    f = tmp_path / "f.sets"
    f.write_text("a b c\nd e\n\nf g h i\n")
    expected = hash_sets(read_sets(f).sets)
    for hint in (0, 3, 7, 100):
        got = hash_set_pieces(read_pieces(f)[1], hint)
        assert got[0].tolist() == expected[0].tolist() and got[1].tolist() == expected[1].tolist(), hint


def test_the_line_limit_in_the_help_is_the_one_enforced():
    import re

    from typer.testing import CliRunner

    from allpairs.cli import app

    assert linefile.MAX_LINE_BYTES == 64 * 2**20
    help_text = CliRunner().invoke(app, ["join", "--help"]).stdout
    assert len(re.findall(r"up\s+to\s+64\s+MiB", help_text)) == 3


def test_utf8_texts_decode_on_access_and_give_spans_of_their_buffer():
    texts = Utf8Texts.of(["ab".encode(), "".encode(), "é\n".encode(), "xyz".encode()])
    assert len(texts) == 4 and texts == ["ab", "", "é\n", "xyz"] and list(texts) == ["ab", "", "é\n", "xyz"]
    assert texts[-1] == "xyz" and texts[1:3] == ["", "é\n"] and texts.utf8(2) == "é\n".encode()
    with pytest.raises(IndexError, match="text index out of range"):
        texts[4]
    buf, ptr = texts.span(2, 4)
    assert buf.tobytes() == "é\nxyz".encode() and ptr.tolist() == [0, 3, 6]
    assert texts.sizes().tolist() == [2, 0, 3, 3]
    assert "4 texts, 8 bytes" in repr(texts)
