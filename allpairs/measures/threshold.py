"""A threshold read exactly: ``t = p/q`` in lowest terms, from a decimal, a fraction or a number.

A threshold ``t`` is held as a fraction ``p/q`` so that every bound the measures
derive from it (:mod:`allpairs.measures`) is an integer computed without rounding.
``"0.7"``, ``0.7``, ``Fraction(7, 10)`` and ``Decimal("0.7")`` are all 7/10; the
denominator is bounded (:data:`MAX_DENOMINATOR`) so that the bounds fit in int64,
and a text's length and exponent are bounded before it is read.
"""
from __future__ import annotations

import math
import numbers
import re
import sys
from dataclasses import dataclass

from ..errors import UsageError

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

_EXPONENT = r"[eE]([+-]?[0-9_]+)$"


def _fraction(*args):
    """``fractions.Fraction(*args)``, imported on first use: with decimal ~9 M instructions of every run's imports."""
    from fractions import Fraction

    return Fraction(*args)


def _plain_decimal(text: str) -> tuple[int, int] | None:
    """ASCII digits with at most one point ("0.7", ".5") in the lowest terms Fraction has; else None."""
    whole, _, places = text.partition(".")
    if not (whole + places).isascii() or not (whole + places).isdigit():
        return None
    g = math.gcd(int(whole + places), 10 ** len(places))
    return int(whole + places) // g, 10 ** len(places) // g


def _check_threshold_text(text: str) -> str:
    """``text`` stripped, if short enough and its exponent small enough to read cheaply; else UsageError."""
    text = text.strip()
    if len(text) > MAX_THRESHOLD_CHARS:
        raise UsageError(f"threshold {text[:20]!r}... has {len(text):,} characters, more than the "
                         f"{MAX_THRESHOLD_CHARS} read; {THRESHOLD_FORMS}")
    m = re.search(_EXPONENT, text) if "e" in text or "E" in text else None
    if m and abs(int(m.group(1))) > MAX_THRESHOLD_EXPONENT:
        raise UsageError(f"threshold {text!r} has an exponent beyond ±{MAX_THRESHOLD_EXPONENT}; {THRESHOLD_FORMS}")
    return text


def decimal_text(value):
    """A :class:`decimal.Decimal` as its text (``"0.7"``, ``"1E-999999999"``), read as a typed threshold is: exactly,
    its exponent bounded first; any other value as it is. (A Decimal is no ``numbers.Real``, and ``float()`` would
    round it.)"""
    decimal = sys.modules.get("decimal")  # no Decimal exists before decimal is imported: no import here
    return str(value) if decimal is not None and isinstance(value, decimal.Decimal) else value


def _decimal(frac: Fraction) -> str:
    """A fraction whose denominator divides 10**9, written as a decimal without trailing zeros."""
    places = len(str(MAX_DENOMINATOR)) - 1
    whole, rest = divmod(frac.numerator * 10**places // frac.denominator, 10**places)
    return f"{whole}.{rest:0{places}d}".rstrip("0").rstrip(".") if rest else str(whole)


def _nearest_accepted(frac: Fraction) -> str:
    """Advice for a threshold with too fine a denominator: accepted values next to it."""
    step = _fraction(1, MAX_DENOMINATOR)
    rounded = max(step, min(_fraction(1), _fraction(round(frac / step)) * step))
    close = frac.limit_denominator(MAX_DENOMINATOR)
    if 0 < close <= 1 and close != rounded and close.denominator < 1000:
        return f"e.g. {_decimal(rounded)} or {close}"
    return f"e.g. {_decimal(rounded)}"


@dataclass(frozen=True)
class Threshold:
    """A Jaccard threshold ``t = p/q`` in (0, 1], with the integer bounds it implies."""

    p: int
    q: int

    @classmethod
    def parse(cls, value: "Threshold | Fraction | Decimal | float | int | str") -> "Threshold":
        """Read a threshold exactly: ``"0.7"`` and ``0.7`` both mean 7/10.

        A float is read through its shortest decimal repr, which is what the
        user typed (a numpy float32 through its own: 0.7, not 0.699999988); a string, or a :class:`decimal.Decimal`'s text, through
        :class:`fractions.Fraction` (``"2/3"`` works), after
        :func:`_check_threshold_text` has bounded its length and exponent.
        """
        if isinstance(value, Threshold):
            return value
        value = decimal_text(value)
        if isinstance(value, str):
            value = _check_threshold_text(value)
        plain = _plain_decimal(value if isinstance(value, str) else repr(value) if type(value) is float else "")
        if plain is not None and 0 < plain[0] <= plain[1] <= MAX_DENOMINATOR:  # else as below, for its message
            return cls(*plain)
        try:
            if isinstance(value, bool):
                raise TypeError
            if isinstance(value, str):
                frac = _fraction(value)
            elif isinstance(value, float):  # float(): np.float64 is a float whose repr names numpy
                frac = _fraction(repr(float(value)))
            elif isinstance(value, numbers.Rational):
                frac = _fraction(value)
            elif isinstance(value, numbers.Real):
                # A numpy float of another width (float32: a pandas column's) through its own shortest
                # decimal, as a float through its repr: np.float32(0.7) is 7/10, not 0.699999988079071.
                own = str(value) if getattr(getattr(value, "dtype", None), "kind", "") == "f" else ""
                frac = _fraction(own if re.fullmatch(r"[0-9.eE+-]+", own) else repr(float(value)))
            else:
                raise TypeError
        except (ValueError, TypeError, ZeroDivisionError, OverflowError):
            raise UsageError(f"threshold {value!r} is not a number; {THRESHOLD_FORMS}") from None
        if not 0 < frac <= 1:
            why = ("t = 0 would pair every two documents" if frac <= 0
                   else "no similarity is above 1; t = 1 finds identical sets")
            raise UsageError(f"threshold {value} is outside (0, 1]; give a Jaccard threshold such as 0.5 ({why})")
        if frac.denominator > MAX_DENOMINATOR:
            raise UsageError(f"threshold {value} has too many decimal places: {THRESHOLD_FORMS}; "
                             f"{_nearest_accepted(frac)}")
        return cls(frac.numerator, frac.denominator)

    @property
    def fraction(self) -> Fraction:
        return _fraction(self.p, self.q)

    def __str__(self) -> str:
        """The decimal the user typed (``0.7``) when there is one, else ``p/q``."""
        as_float = float(self.fraction)
        return repr(as_float) if _fraction(repr(as_float)) == self.fraction else f"{self.p}/{self.q}"
