"""Arrays of the index that grow by appending, and the positions of CSR rows' spans."""
from __future__ import annotations

import numpy as np


def spans(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The positions ``starts[k] .. starts[k] + lengths[k] - 1`` of every k, one after another (int64)."""
    lengths = np.asarray(lengths, np.int64)
    ends = np.cumsum(lengths)
    return np.repeat(np.asarray(starts, np.int64) - (ends - lengths), lengths) + np.arange(int(ends[-1]) if len(ends)
                                                                                              else 0)


class Column:
    """A 1-d array that grows by appending, capacity doubling; a read-only start is copied on first growth."""

    def __init__(self, data: np.ndarray, dtype):
        self.dtype = np.dtype(dtype)
        self._buf = np.asarray(data, self.dtype)
        self._n = len(self._buf)

    def __len__(self) -> int:
        return self._n

    @property
    def array(self) -> np.ndarray:
        return self._buf[: self._n]

    def extend(self, values) -> None:
        values = np.asarray(values, self.dtype)
        need = self._n + len(values)
        if need > len(self._buf) or not self._buf.flags.writeable:
            buf = np.empty(max(need, 2 * len(self._buf), 1024), self.dtype)
            buf[: self._n] = self._buf[: self._n]
            self._buf = buf
        self._buf[self._n:need] = values
        self._n = need

