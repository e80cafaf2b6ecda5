"""The saved, growing search index: queries against it, and streaming near-duplicate removal.

Imports only point down the pipeline (corpus, shingles, order, measures); the
CLI's ``index`` and ``dedup`` commands call :class:`SearchIndex` and :func:`dedup`.
"""
from .dedup import DedupResult, dedup
from .matches import Match, Matches
from .rule import Rule
from .search import SearchIndex
from .store import IndexFileError

__all__ = ["DedupResult", "IndexFileError", "Match", "Matches", "Rule", "SearchIndex", "dedup"]
