"""(4b) The approximate path: MinHash signatures, LSH banding, the S-curve.

``signatures`` turns a CSR corpus of 64-bit keys into a (sets × K) matrix,
``candidates`` bands it into candidate pairs (and marks the buckets too large
to expand, whose rows the orchestration in :mod:`allpairs.join` joins exactly),
``choose_params`` picks the banding from a threshold; nothing here imports the
exact join.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

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


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    # The import statement's path, not importlib's, so that -X importtime shows the module by name.
    value = getattr(__import__(f"{__name__}.{module}", fromlist=[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


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
