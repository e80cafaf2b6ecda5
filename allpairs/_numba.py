"""The one place where numba options are set for every compiled kernel.

``NUMBA_DISABLE_JIT=1`` turns every kernel back into plain Python (slow, but
coverage and debuggers see it).
"""
import numba

#: Every kernel is compiled once and cached on disk (so the CLI does not
#: recompile on each run) and releases the GIL (so that threads run kernels
#: side by side).
kernel = numba.njit(cache=True, nogil=True, boundscheck=False)
