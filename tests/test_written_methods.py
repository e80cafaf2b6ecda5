"""Dataclasses whose ``__init__``, ``__repr__`` and ``__eq__`` are written out by hand (``@dataclass(init=False,
repr=False, eq=False)``: the decorator's ``exec`` of generated methods cost every import; see
``allpairs.corpus.model.FACTORY``) behave as the generated ones would: the same parameters and defaults,
the same repr, the same equality and hashability, the same fields for :func:`dataclasses.fields`,
``replace`` and ``asdict``. Each is compared with a dataclass generated from its own fields."""
from __future__ import annotations

import dataclasses
import inspect

import numpy as np
import pytest

from allpairs.corpus.model import Corpus, LineNumbers
from allpairs.measures import Threshold
from allpairs.order import OrderedSets
from allpairs.output.files import OutputPlan
from allpairs.pairs.result import PairChunk
from allpairs.pipeline.result import JoinResult
from allpairs.pipeline.stats import Stats

#: Each class with the decorator's arguments it had before its methods were written out.
WRITTEN = [(Corpus, {}), (Stats, {}), (JoinResult, {"repr": False}), (OrderedSets, {"eq": False, "repr": False}),
           (PairChunk, {"eq": False}), (OutputPlan, {"eq": False, "repr": False})]


def _generated(cls, options):
    """A dataclass of the same name and fields, its methods generated."""
    specs = []
    for f in dataclasses.fields(cls):
        kw = {"repr": f.repr, "compare": f.compare, "hash": f.hash}
        if f.default is not dataclasses.MISSING:
            kw["default"] = f.default
        if f.default_factory is not dataclasses.MISSING:
            kw["default_factory"] = f.default_factory
        specs.append((f.name, f.type, dataclasses.field(**kw)))
    post_init = {"__post_init__": cls.__post_init__} if hasattr(cls, "__post_init__") else {}
    made = dataclasses.make_dataclass(cls.__name__, specs, namespace=post_init, **options)
    made.__qualname__ = cls.__qualname__
    return made


def _parameters(cls):
    return [(p.name, p.kind, repr(p.default), p.annotation) for p in inspect.signature(cls).parameters.values()]


def _values(cls, k):
    """Arguments for every field of ``cls``: distinct for each ``k``, of no particular type."""
    return {f.name: [k, f.name] for f in dataclasses.fields(cls)}


@pytest.mark.parametrize("cls, options", WRITTEN, ids=[c.__name__ for c, _ in WRITTEN])
def test_methods_written_out_are_the_generated_ones(cls, options):
    ref = _generated(cls, options)
    assert _parameters(cls) == _parameters(ref)
    # Defaults alone (required fields given), factory defaults fresh for each instance.
    required = {f.name: f.name for f in dataclasses.fields(cls)
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
    a, b = cls(**required), cls(**required)
    assert repr([getattr(a, f.name) for f in dataclasses.fields(cls)]) == \
           repr([getattr(ref(**required), f.name) for f in dataclasses.fields(cls)])
    for f in dataclasses.fields(cls):
        if f.default_factory is not dataclasses.MISSING and isinstance(getattr(a, f.name), (list, dict)):
            assert getattr(a, f.name) is not getattr(b, f.name)
    one, two = _values(cls, 1), _values(cls, 2)
    if options.get("repr", True):
        assert repr(cls(**one)) == repr(ref(**one))
    else:
        assert "__repr__" not in cls.__dict__
    assert (cls(**one) == cls(**one)) == (ref(**one) == ref(**one))
    assert (cls(**one) == cls(**two)) == (ref(**one) == ref(**two))
    assert (cls(**one) == object()) == (ref(**one) == object())
    assert (cls.__hash__ is None) == (ref.__hash__ is None)
    # Positional arguments land where the generated __init__ puts them.
    positional = [[3, f.name] for f in dataclasses.fields(cls)]
    assert [getattr(cls(*positional), f.name) for f in dataclasses.fields(cls)] == \
           [getattr(ref(*positional), f.name) for f in dataclasses.fields(cls)]
    with pytest.raises(TypeError):
        cls(**one, no_such_field=1)


def test_corpus_line_numbers_and_dataclass_functions_still_work():
    c = Corpus(ids=LineNumbers(3), sets=[["a"], ["b"], ["c"]], kind="sets")
    assert c.ids == ["1", "2", "3"]
    assert dataclasses.replace(c, kind="lines").kind == "lines"
    assert dataclasses.asdict(c)["ids"] == ["1", "2", "3"]
    assert repr(c).startswith("Corpus(ids=['1', '2', '3'], texts=None, sets=[['a'], ['b'], ['c']], columns={}")


def test_stats_and_threshold_unchanged():
    assert Stats() == Stats() and Stats(pairs=1) != Stats()
    assert repr(Stats()).startswith("Stats(documents=0, joined=0, dropped=0, skipped=[], shingles=0")
    t = Threshold.parse("0.7")
    assert repr(t) == "Threshold(p=7, q=10)" and t == Threshold(7, 10) and hash(t) == hash(Threshold(7, 10))
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.p = 1
    chunk = PairChunk(np.zeros(1, np.int32), np.zeros(1, np.int32), np.zeros(1, np.int32), np.zeros(1, np.int32),
                      np.zeros(1, np.int32))
    assert len(chunk) == 1 and chunk.estimate is None
