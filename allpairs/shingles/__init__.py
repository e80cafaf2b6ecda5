"""Stage 2: documents to shingle keys, with the tokenizers, their kernels and the token hash.

``keys.py`` defines the shingle spec and the keys (:data:`KEY_VERSION`) and
chooses a default spec; ``texts.py`` turns texts into keys in batches (over
``ngrams.py``'s buffers, ``utf8.py``'s buffers and character classes, ``code.py``'s
tokenizer glue for ``code:N``, ``pool.py``'s worker processes); ``sets.py``
hashes ``--sets`` input and writes that format (kernels in ``_kernel.py``);
``codetokens.py`` holds the program
tokenizers (compiled in ``_codetok_kernel.py`` for Go, ``_codetok_c_cxx_kernel.py``
for C and C++, ``_codetok_c_python_kernel.py`` for the rest of the C family and
Python); ``_hash_kernel.py``
is XXH64, the token hash.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .._exports import lazy_exports

#: Public name -> the module that defines it. Imported on first use, so that a ``--sets`` run, which
#: hashes tokens (``sets.py``), never loads the text tokenizers, their kernels or the worker pool.
_EXPORTS = {
    "language_for_path": "codetokens",
    "KEY_VERSION": "keys", "ShingleChoice": "keys", "ShingleSpec": "keys", "normalize_text": "keys",
    "shingle_for_texts": "keys", "token_key": "keys", "token_keys": "keys",
    "PARALLEL_MIN_CHARS": "pool",
    "format_sets": "sets", "hash_set_pieces": "sets", "hash_sets": "sets", "token_list_keys": "sets",
    "shingle_texts": "texts",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())


if TYPE_CHECKING:  # for type checkers and editors: the same names, imported eagerly
    from .codetokens import language_for_path
    from .keys import KEY_VERSION, ShingleChoice, ShingleSpec, normalize_text, shingle_for_texts, token_key, token_keys
    from .pool import PARALLEL_MIN_CHARS
    from .sets import format_sets, hash_set_pieces, hash_sets, token_list_keys
    from .texts import shingle_texts
