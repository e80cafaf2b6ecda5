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
from .codetokens import language_for_path
from .keys import KEY_VERSION, ShingleChoice, ShingleSpec, normalize_text, shingle_for_texts, token_key, token_keys
from .pool import PARALLEL_MIN_CHARS
from .sets import format_sets, hash_set_pieces, hash_sets
from .texts import shingle_texts

__all__ = ["KEY_VERSION", "PARALLEL_MIN_CHARS", "ShingleChoice", "ShingleSpec", "format_sets", "hash_set_pieces",
           "hash_sets", "language_for_path", "normalize_text", "shingle_for_texts", "shingle_texts", "token_key",
           "token_keys"]
