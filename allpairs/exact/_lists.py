"""The posting lists' primitives shared by the probes: a posting's layout (:func:`posting_shift`), a prefetch hint,
and the searches of a sorted list (:func:`lower_bound`, :func:`gallop`, :func:`window_start`).

Kernels assume clean input: lists sorted ascending, positions within them.
"""
import numpy as np

from .._kernels.jit import kernel


class _Intrinsic:
    """A function of kernels that plain Python runs as ``plain`` and numba compiles as the intrinsic ``make()``
    returns, made when numba first compiles a kernel that calls it (importing this module imports no numba)."""

    def __init__(self, plain, make):
        self._plain, self._make, self._type = plain, make, None

    def __call__(self, *args):
        return self._plain(*args)

    @property
    def _numba_type_(self):
        """numba's type for this object as a global of a kernel being compiled: the intrinsic's."""
        if self._type is None:
            self._type = self._make()
        return self._type


def _prefetch_type():
    from llvmlite import ir
    from numba.core import cgutils, types
    from numba.core.typing.templates import builtin_registry
    from numba.extending import intrinsic

    @intrinsic
    def prefetch(typingctx, a, k):
        if not isinstance(a, types.Array) or not isinstance(k, types.Integer):
            return None

        def codegen(context, builder, signature, args):
            ary = context.make_array(signature.args[0])(context, builder, args[0])
            at = builder.gep(ary.data, [context.cast(builder, args[1], signature.args[1], types.intp)])
            i8p, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
            fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]),
                                                "llvm.prefetch.p0")
            builder.call(fn, [builder.bitcast(at, i8p), i32(0), i32(3), i32(1)])  # a read, kept close, data
            return context.get_dummy_value()

        return types.void(a, k), codegen

    return next(t for o, t in builtin_registry.globals if o is prefetch)


#: ``prefetch(a, k)``: a hint that element ``k`` of array ``a`` (in memory order) will be read soon: its line is
#: fetched into every cache level while the code goes on (no fault, whatever ``k``). Compiled, LLVM's
#: ``llvm.prefetch`` (x86 ``prefetcht0``); plain Python, nothing.
prefetch = _Intrinsic(lambda a, k: None, _prefetch_type)

#: The set's shift in a 32-bit posting (:func:`allpairs.exact._kernel.build_index`, large joins): the bound below it.
COMPACT_SHIFT = 8


def _posting_shift_type():
    from numba.core import types
    from numba.core.typing.templates import builtin_registry
    from numba.extending import intrinsic

    @intrinsic
    def posting_shift(typingctx, a):
        if not isinstance(a, types.Array) or not isinstance(a.dtype, types.Integer):
            return None
        shift = 32 if a.dtype.bitwidth == 64 else COMPACT_SHIFT

        def codegen(context, builder, signature, args):
            return context.get_constant(types.int64, shift)

        return types.int64(a), codegen

    return next(t for o, t in builtin_registry.globals if o is posting_shift)


#: ``posting_shift(post)``: the shift of the set in a posting of ``post``, 32 in int64 postings (:func:`allpairs.exact._kernel.build_index`),
#: :data:`COMPACT_SHIFT` in uint32 ones. Compiled, a constant of each variant of a kernel (its argument's type), as a
#: literal shift would be: the array's ``itemsize`` is a field read at run time, a register held through the loop
#: over postings (+8 % instructions on the 1 M Zipf sets' probe); plain Python, worked out.
posting_shift = _Intrinsic(lambda post: np.int64(32) if post.itemsize == 8 else np.int64(COMPACT_SHIFT),
                           _posting_shift_type)


@kernel
def lower_bound(a, lo, hi, x):
    """The first position in ``a[lo:hi]`` (ascending) whose value is not below ``x``; ``hi`` if none."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[np.uint64(mid)] < x:  # an unsigned index (positions are not negative): no code for a negative one
            lo = mid + 1
        else:
            hi = mid
    return lo


@kernel
def gallop(a, lo, hi, x):
    """:func:`lower_bound` found from the front: steps of 1, 2, 4, ... from ``lo``, then a binary search of the
    last step (Bentley, Yao, "An almost optimal algorithm for unbounded searching", IPL 1976).

    ``O(log d)`` for an answer ``d`` places in, one look when it is ``lo``:
    a posting list's size window most often starts where its last visit found it.
    """
    step = 1
    while lo < hi and a[np.uint64(lo)] < x:  # unsigned indexes, as in lower_bound
        top = min(lo + step, hi)
        if a[np.uint64(top - 1)] >= x:
            return lower_bound(a, lo + 1, top - 1, x)
        lo = top
        step <<= 1
    return lo


@kernel
def window_start(post, front, w, f, end, start_key):
    """The first of list ``w``'s sorted entries ``[f, end)`` at or past ``start_key``, from ``front[w]`` entries in
    (where its last visit found it) if all before are below, else from ``f``; ``front[w]`` set to it. Clean input."""
    if f < end and np.int64(post[np.uint64(f)]) < start_key:
        c = np.int64(front[w])
        if np.uint64(c - 1) < np.uint64(end - f) and np.int64(post[np.uint64(f + c - 1)]) < start_key:
            c = gallop(post, f + c, end, start_key)  # 0 < c <= end - f (one unsigned comparison)
        else:
            c = gallop(post, f + 1, end, start_key)
        front[w] = c - f
        return c
    return f
