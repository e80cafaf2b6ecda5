"""The one 64-bit mixing function behind every stable hash in allpairs (a kernel).

``mix64`` is the finaliser of splitmix64 (Steele, Lea, Flood, "Fast splittable
pseudorandom number generators", OOPSLA 2014)::

    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
    z = (z ^ (z >> 27)) * 0x94D049BB133111EB
    z =  z ^ (z >> 31)

a bijection of uint64 with full avalanche. Shingle keys (stage 2) and MinHash
parameters and band keys (stage 4b) are all built on it, in uint64 arithmetic
that wraps modulo 2**64, so they are the same on any machine and version.
"""
import numpy as np

from .jit import kernel

#: 2**64 / golden ratio, odd: splitmix64's increment.
GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)


@kernel(wraps=True)
def mix64(z):
    """The splitmix64 finaliser of one uint64."""
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)
