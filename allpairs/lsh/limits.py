"""The LSH path's two limits, apart from its kernels, so that the wiring and the command line can name
them (defaults, help texts) without loading MinHash or banding on an exact join."""
from __future__ import annotations

#: Buckets of more distinct sets than this are joined exactly instead of expanded pair by pair.
MAX_EXPAND = 64

#: Most MinHash values per set: 16 KiB of signature per set; enough for the recall-first
#: banding at thresholds down to about 0.0012 (K = 4096 bands of one row catch s = t with P >= 0.99).
MAX_NUM_PERM = 4096
