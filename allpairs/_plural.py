"""Counts in words for messages: ``count(1, "document")`` is "1 document", ``count(2, "document")`` "2 documents"."""
from __future__ import annotations


def count(n: int, singular: str, plural: str | None = None) -> str:
    """``n`` with thousands separators and the noun in the number it calls for."""
    return f"{n:,} {singular if n == 1 else plural or singular + 's'}"


def banding(bands: int, rows: int) -> str:
    """LSH's banding in words: "32 bands × 2 rows", "1 band × 4 rows"."""
    return f"{count(bands, 'band')} × {count(rows, 'row')}"
