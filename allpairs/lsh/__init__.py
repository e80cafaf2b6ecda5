"""(4b) The approximate path: MinHash signatures, LSH banding, the S-curve.

``signatures`` turns a CSR corpus of 64-bit keys into a (sets × K) matrix,
``candidates`` bands it into candidate pairs (and marks the buckets too large
to expand, whose rows the orchestration in :mod:`allpairs.join` joins exactly),
``choose_params`` picks the banding from a threshold; nothing here imports the
exact join.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .._exports import lazy_exports
from .limits import MAX_EXPAND, MAX_NUM_PERM

#: Public name -> the module that defines it. Imported on first use, so that naming the limits (the
#: wiring's defaults, the command line's help) loads no kernel.
_EXPORTS = {
    **dict.fromkeys(["Candidates", "candidates", "check_banding", "share_joined_bucket"], "bands"),
    **dict.fromkeys(["agreement_counts", "agreement_needed", "check_num_perm", "empty_rows", "empty_signatures",
                     "estimate", "estimate_pairs", "estimate_table", "permutation_params", "signature_dtype",
                     "signature_sets", "signatures"], "minhash"),
    **dict.fromkeys(["choose_params", "expected_recall", "knee", "probability"], "scurve"),
}


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())


if TYPE_CHECKING:  # for type checkers and editors: the same names, imported eagerly
    from .bands import Candidates, candidates, check_banding, share_joined_bucket
    from .minhash import (agreement_counts, agreement_needed, check_num_perm, empty_rows, empty_signatures,
                          estimate, estimate_pairs, estimate_table, permutation_params, signature_dtype,
                          signature_sets, signatures)
    from .scurve import choose_params, expected_recall, knee, probability

__all__ = [
    "MAX_EXPAND",
    "MAX_NUM_PERM",
    "agreement_counts",
    "agreement_needed",
    "Candidates",
    "candidates",
    "check_banding",
    "check_num_perm",
    "choose_params",
    "empty_rows",
    "empty_signatures",
    "estimate",
    "estimate_pairs",
    "estimate_table",
    "expected_recall",
    "knee",
    "permutation_params",
    "probability",
    "share_joined_bucket",
    "signature_dtype",
    "signature_sets",
    "signatures",
]
