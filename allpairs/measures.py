"""Threshold algebra for Jaccard similarity, in exact integer arithmetic.

A threshold ``t`` is held as a fraction ``p/q`` so that every bound below is an
integer computed without rounding. In floating point ``math.ceil(0.28 * 25)`` is 8
where the true value is 7, and ``0.7 * 10`` is ``7.000000000000001``: a prefix one
token too short silently loses pairs.

For sets ``x``, ``y`` with ``J(x, y) = |x ∩ y| / |x ∪ y|``:

- ``J >= t``  iff  ``overlap >= required_overlap(|x|, |y|) = ⌈t/(1+t)·(|x|+|y|)⌉``;
- size bound: ``t·|y| <= |x| <= |y|/t``;
- probing prefix of ``x``: ``|x| - ⌈t·|x|⌉ + 1`` tokens;
- indexing prefix of ``y`` (valid when every probe is at least as large as ``y``):
  ``|y| - ⌈2t/(1+t)·|y|⌉ + 1`` tokens.

(Bayardo, Ma, Srikant, WWW 2007; Xiao, Wang, Lin, Yu, WWW 2008.)
"""
from __future__ import annotations

import numbers
import re
from dataclasses import dataclass
from fractions import Fraction

from .errors import UsageError

#: Largest denominator accepted, so that ``p * (|x| + |y|)`` fits in int64 for
#: sets of up to 2**31 tokens.
MAX_DENOMINATOR = 10**9


#: The threshold forms accepted, for messages and help.
THRESHOLD_FORMS = (f"give a decimal with at most {len(str(MAX_DENOMINATOR)) - 1} decimal places (0.7, .5, 7e-1) "
                   f"or a fraction p/q with q at most {MAX_DENOMINATOR:,} (2/3)")

#: Longest threshold text read, and largest exponent magnitude in it: ``1e-999999999``
#: would otherwise make Python compute 10**999999999.
MAX_THRESHOLD_CHARS = 40
MAX_THRESHOLD_EXPONENT = 40

_EXPONENT = re.compile(r"[eE]([+-]?[0-9_]+)$")


def _check_threshold_text(text: str) -> str:
    """``text`` stripped, if short enough and its exponent small enough to read cheaply; else UsageError."""
    text = text.strip()
    if len(text) > MAX_THRESHOLD_CHARS:
        raise UsageError(f"threshold {text[:20]!r}... has {len(text):,} characters, more than the "
                         f"{MAX_THRESHOLD_CHARS} read; {THRESHOLD_FORMS}")
    m = _EXPONENT.search(text)
    if m and abs(int(m.group(1))) > MAX_THRESHOLD_EXPONENT:
        raise UsageError(f"threshold {text!r} has an exponent beyond ±{MAX_THRESHOLD_EXPONENT}; {THRESHOLD_FORMS}")
    return text


def _decimal(frac: Fraction) -> str:
    """A fraction whose denominator divides 10**9, written as a decimal without trailing zeros."""
    places = len(str(MAX_DENOMINATOR)) - 1
    whole, rest = divmod(frac.numerator * 10**places // frac.denominator, 10**places)
    return f"{whole}.{rest:0{places}d}".rstrip("0").rstrip(".") if rest else str(whole)


def _nearest_accepted(frac: Fraction) -> str:
    """Advice for a threshold with too fine a denominator: accepted values next to it."""
    step = Fraction(1, MAX_DENOMINATOR)
    rounded = max(step, min(Fraction(1), Fraction(round(frac / step)) * step))
    close = frac.limit_denominator(MAX_DENOMINATOR)
    if 0 < close <= 1 and close != rounded and close.denominator < 1000:
        return f"e.g. {_decimal(rounded)} or {close}"
    return f"e.g. {_decimal(rounded)}"


def _ceil_div(a: int, b: int) -> int:
    return -((-a) // b)


@dataclass(frozen=True)
class Threshold:
    """A Jaccard threshold ``t = p/q`` in (0, 1], with the integer bounds it implies."""

    p: int
    q: int

    @classmethod
    def parse(cls, value: "Threshold | Fraction | float | int | str") -> "Threshold":
        """Read a threshold exactly: ``"0.7"`` and ``0.7`` both mean 7/10.

        A float is read through its shortest decimal repr, which is what the
        user typed; a string through :class:`fractions.Fraction` (``"2/3"`` works),
        after :func:`_check_threshold_text` has bounded its length and exponent.
        """
        if isinstance(value, Threshold):
            return value
        if isinstance(value, str):
            value = _check_threshold_text(value)
        try:
            if isinstance(value, bool):
                raise TypeError
            if isinstance(value, str):
                frac = Fraction(value)
            elif isinstance(value, float):
                frac = Fraction(repr(value))
            elif isinstance(value, (numbers.Rational, Fraction)):
                frac = Fraction(value)
            elif isinstance(value, numbers.Real):
                frac = Fraction(repr(float(value)))
            else:
                raise TypeError
        except (ValueError, TypeError, ZeroDivisionError, OverflowError):
            raise UsageError(f"threshold {value!r} is not a number; {THRESHOLD_FORMS}") from None
        if not 0 < frac <= 1:
            raise UsageError(
                f"threshold {value} is outside (0, 1]; give a Jaccard threshold such as 0.5 "
                "(t = 0 would pair every two documents)"
            )
        if frac.denominator > MAX_DENOMINATOR:
            raise UsageError(f"threshold {value} has too many decimal places: {THRESHOLD_FORMS}; "
                             f"{_nearest_accepted(frac)}")
        return cls(frac.numerator, frac.denominator)

    @property
    def fraction(self) -> Fraction:
        return Fraction(self.p, self.q)

    def __str__(self) -> str:
        """The decimal the user typed (``0.7``) when there is one, else ``p/q``."""
        as_float = float(self.fraction)
        return repr(as_float) if Fraction(repr(as_float)) == self.fraction else f"{self.p}/{self.q}"

    # Integer bounds. The kernels repeat these formulas on int64 scalars; the
    # tests check kernel and Python against each other.

    def required_overlap(self, size_x: int, size_y: int) -> int:
        """Smallest overlap with ``J >= t``: ``⌈p(|x|+|y|)/(p+q)⌉``."""
        return _ceil_div(self.p * (size_x + size_y), self.p + self.q)

    def min_size(self, size: int) -> int:
        """Smallest partner size allowed by the size bound: ``⌈t·|x|⌉``."""
        return _ceil_div(self.p * size, self.q)

    def max_size(self, size: int) -> int:
        """Largest partner size allowed by the size bound: ``⌊|x|/t⌋``."""
        return (self.q * size) // self.p

    def probe_prefix(self, size: int) -> int:
        """Length of the probing prefix: ``|x| - ⌈t·|x|⌉ + 1`` (0 for an empty set)."""
        return size - self.min_size(size) + 1 if size else 0

    def index_prefix(self, size: int) -> int:
        """Length of the indexing prefix: ``|y| - ⌈2t/(1+t)·|y|⌉ + 1`` (0 for an empty set)."""
        return size - _ceil_div(2 * self.p * size, self.p + self.q) + 1 if size else 0

    def accepts(self, overlap: int, size_x: int, size_y: int) -> bool:
        """``J >= t`` decided on integers: ``overlap·(p+q) >= p·(|x|+|y|)``; two empty sets are never a pair."""
        if size_x == 0 or size_y == 0:
            return False
        return overlap * (self.p + self.q) >= self.p * (size_x + size_y)


def jaccard(overlap: int, size_x: int, size_y: int) -> Fraction:
    """Exact Jaccard similarity from the overlap and both sizes (0 when both sets are empty)."""
    union = size_x + size_y - overlap
    return Fraction(overlap, union) if union else Fraction(0)
