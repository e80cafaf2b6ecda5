"""What the eighth adversarial probe found (session 60), one regression test (or a few) per item."""
from __future__ import annotations

import pytest

import allpairs
from allpairs import SearchIndex


# --- 1. int ids of 19 digits or more in a saved index ----------------------------------------------------

@pytest.mark.parametrize("ids", [[1234567890123456789, -9223372036854775808], [2**70, 7], [-(10**4299), 10**4299]])
def test_a_saved_index_of_large_int_ids_loads_them_back_not_as_a_damaged_file(tmp_path, ids):
    # A 19-digit id (an int64 such as a snowflake id) was saved as an int and refused on load as "damaged".
    index = SearchIndex.build(dict(zip(ids, [["a", "b"], ["a", "b", "c"]])), 0.5)
    index.save(tmp_path / "x.idx")
    loaded = SearchIndex.load(tmp_path / "x.idx")
    assert list(loaded.ids) == ids
    assert [loaded.ids[m.indexed] for m in loaded.query([["a", "b"]])] == ids
