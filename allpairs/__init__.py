"""allpairs: exact all-pairs set-similarity join, with MinHash+LSH beside it."""

__version__ = "0.1.0"
