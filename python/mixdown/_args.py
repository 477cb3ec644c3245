"""Argument checks and conversions shared by every call: exact numbers, paths, ints for
the C fields they go into, choices, and the output options."""
from __future__ import annotations

import ctypes as C
import os
from decimal import Decimal
from fractions import Fraction
from typing import Any, Callable, Mapping, Optional, Union


from . import _native
from ._native import lib as _lib
from ._errors import Error


Exact = Union[Fraction, int, str, Decimal]
"""A number kept exact: a Fraction, an int, a Decimal or a decimal string ("1.0001309", "10001309/10000000")."""

PathLike = Union[str, "os.PathLike[str]"]
Document = Union[PathLike, Mapping[str, Any]]
"""A composition document: a path (.json, .otio), a JSON string, or a dict."""

Progress = Callable[[float], Any]
"""Called with the fraction done (0..1, never decreasing). An exception it raises cancels the job and is re-raised."""


# ---- Exact numbers ------------------------------------------------------------------------

def _exact(value: Exact, name: str) -> Fraction:
    """`value` as a Fraction, exactly; a float or anything else inexact is refused."""
    if isinstance(value, bool):
        raise TypeError(f"{name}={value!r}: a bool is not a number")
    if isinstance(value, (Fraction, int, Decimal)):
        return Fraction(value)
    if isinstance(value, str):
        try:
            return Fraction(value.strip())
        except (ValueError, ZeroDivisionError):
            raise Error(f"{name}={value!r}: is not a number (use '1.0001309', '10001309/10000000' or a Fraction)") from None
    if isinstance(value, float):
        raise TypeError(f"{name}={value!r}: a float is not exact; pass the string {repr(value)!r} "
                        f"or a fractions.Fraction")
    raise TypeError(f"{name}={value!r}: expected a Fraction, an int or a decimal string, not {type(value).__name__}")


def _int64_pair(value: Fraction, name: str) -> tuple[int, int]:
    """Numerator and denominator of `value`, which must fit the C API's 64-bit integers."""
    if abs(value.numerator) > _INT64_MAX or value.denominator > _INT64_MAX:
        raise Error(f"{name}={value}: needs more than 64-bit integers to be exact")
    return value.numerator, value.denominator


def _frames_half_away(value: Fraction) -> int:
    """`value` rounded to a whole frame, half away from zero (the library's rule)."""
    whole, rest = divmod(abs(value.numerator), value.denominator)
    if 2 * rest >= value.denominator:
        whole += 1
    return whole if value >= 0 else -whole


def _path(value: PathLike, name: str) -> bytes:
    try:
        encoded = os.fsencode(value)
    except TypeError:
        raise TypeError(f"{name}={value!r}: expected a path") from None
    # A C string ends at its first NUL: the library would see (and write) a shorter path.
    if b"\0" in encoded:
        raise Error(f"{name}={value!r}: a path cannot hold a NUL character")
    return encoded


_INT64_MAX = 2**63 - 1
_INT32_MAX = 2**31 - 1


def _int(value: Any, name: str, low: int, high: int) -> int:
    """An int argument checked against the C field it goes into (ctypes would wrap it)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name}={value!r}: expected an int")
    if not low <= value <= high:
        raise Error(f"{name}={value}: must lie between {low} and {high}")
    return value


def _output_options(format: Optional[str], sample_format: Optional[str], overwrite: bool,
                    threads: Optional[int], loudness: Optional[float] = None, true_peak: Optional[float] = None,
                    limit: bool = False, rate: Optional[int] = None) -> _native.OutputOptions:
    o = _native.OutputOptions()
    _lib.mixdown_output_options_init(C.byref(o))
    o.type = format.encode() if format else None
    o.sample_format = sample_format.encode() if sample_format else None
    o.overwrite = 1 if overwrite else 0
    o.threads = 0 if threads is None else _int(threads, "threads", 1, 2)
    if loudness is None and (true_peak is not None or limit):
        raise Error("true_peak and limit go with loudness")
    if loudness is not None:
        if not -60 <= float(loudness) < 0:
            raise Error(f"loudness={loudness}: must be a loudness from -60 to below 0 LUFS")
        o.loudness = float(loudness)
        o.true_peak = -1.0 if true_peak is None else float(true_peak)
        o.limit = 1 if limit else 0
    if rate is not None:
        o.sample_rate = _int(rate, "rate", 1, _INT32_MAX)
    return o


def _choice(value: str, choices: Mapping[str, int], name: str) -> int:
    try:
        return choices[value]
    except KeyError:
        raise Error(f"{name}={value!r}: must be one of {', '.join(choices)}") from None
