"""The old import path of stage 1's readers, kept only for modules other branches are editing
(``allpairs/engines/spark/run.py``, ``scripts/bench_sota.py``); import from ``model``, ``walk``,
``globs``, ``tree``, ``records`` and ``read`` instead. Remove once nothing imports it (issue 29)."""
from .globs import matches
from .read import read_sets
from .records import fields_of, jsonl_record
from .tree import decode_file
from .walk import walk

__all__ = ["decode_file", "fields_of", "jsonl_record", "matches", "read_sets", "walk"]
