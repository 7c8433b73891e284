"""Quantities at the edges: parse text such as ``1.4 GB`` and format numbers back.

Inside the calculator every size is a plain number of bytes, every time a number of
seconds and every rate a number per second. This module is the only place that
knows unit names.

Conventions (see DOMAIN.md, "Units conventions"):

* ``kB, MB, GB, TB, PB`` are decimal (1 GB = 1e9 bytes); ``KiB, MiB, GiB, TiB, PiB``
  are binary (1 GiB = 2**30 bytes).
* A bare ``KB`` is read as ``kB``, i.e. 1000 bytes, like every other upper-case
  byte prefix here; write ``KiB`` for 1024 bytes.
* Bits are ``bit`` or ``b`` with a prefix (``Gbit``, ``Gb``); ``Gbps`` is ``Gbit/s``.
* ``FLOP`` counts operations; ``FLOP/s`` and ``FLOPS`` are per second;
  ``FLOPs`` is the plural of FLOP (a count, not a rate).

pint does the parsing with a registry of our own in which information, time and
compute are real dimensions (pint's default registry treats bits and bytes as
dimensionless, so ``1.4`` would silently convert to GiB as bits).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, lru_cache

import pint

MAX_QUANTITY_CHARS = 64

_DECIMAL = {"k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18}
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50}
_TIME = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3}


@dataclass(frozen=True)
class Dimension:
    """A kind of quantity a parameter or output carries, with its base unit."""

    name: str
    base_unit: str  # the unit numbers are stored in inside the calculator
    pint_dimensionality: str
    examples: str


BYTES = Dimension("bytes", "B", "[information]", "800 MB, 25 MiB, 1.4e9")
SECONDS = Dimension("seconds", "s", "[time]", "5 us, 2.5 ms, 90 min, 3 days, 2 years")
BYTES_PER_SECOND = Dimension(
    "bytes per second", "B/s", "[information] / [time]", "100 GB/s, 400 Gbit/s"
)
SECONDS_PER_BYTE = Dimension("seconds per byte", "s/B", "[time] / [information]", "1e-11 s/B")
FLOP = Dimension("FLOP", "FLOP", "[compute]", "3.14e23 FLOP, 6 PFLOP")
FLOP_PER_SECOND = Dimension("FLOP per second", "FLOP/s", "[compute] / [time]", "312 TFLOP/s")

DIMENSIONS = {d.base_unit: d for d in (BYTES, SECONDS, BYTES_PER_SECOND, SECONDS_PER_BYTE,
                                       FLOP, FLOP_PER_SECOND)}


class UnitError(ValueError):
    """Text that is not a quantity of the expected kind."""


@cache
def registry() -> pint.UnitRegistry:
    """The unit registry: information, time and compute as independent dimensions.

    Every prefixed unit is listed explicitly (no prefix machinery), so that
    nonsense such as ``mB`` (millibytes) or ``mb`` is an unknown unit, not a number.
    """
    ureg = pint.UnitRegistry(None, case_sensitive=True)
    define = ureg.define
    define("byte = [information] = B = bytes")
    define("bit = byte / 8 = b = bits")
    define("FLOP = [compute] = FLOPs = flop")
    define("KB = 1e3 * byte")  # documented: a bare KB is decimal, like MB and GB
    for prefix, factor in _DECIMAL.items():
        define(f"{prefix}B = {factor!r} * byte")
        define(f"{prefix}bit = {factor!r} * bit = {prefix}b")
        define(f"{prefix}FLOP = {factor!r} * FLOP = {prefix}FLOPs")
    for prefix, factor in _BINARY.items():
        define(f"{prefix}B = {factor} * byte")
        define(f"{prefix}bit = {factor} * bit")
    define("second = [time] = s = sec")
    for name, factor in _TIME.items():
        define(f"{name} = {factor!r} * second")
    define("minute = 60 * second = min")
    define("hour = 3600 * second = h")
    define("day = 86400 * second = d = days")
    define("year = 365.25 * day = yr = years")  # Julian year
    return ureg


_SPELLINGS = [
    # Rates written as one word; pint needs the division spelled out.
    (re.compile(r"(?<![A-Za-z])([kMGTPE]?)bps\b"), r"\1bit/s"),
    (re.compile(r"(?<![A-Za-z])([kMGTPE]?)FLOPS\b"), r"\1FLOP/s"),
]


_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def _normalise(text: str) -> str:
    text = text.strip().replace("\u202f", " ").replace("\u00a0", " ")
    for pattern, replacement in _SPELLINGS:
        text = pattern.sub(replacement, text)
    return text


# Pint's parser costs more than the rest of grading an answer; the same few texts
# ("800 MB", the bank's parameters, common answers) come back again and again.
@lru_cache(maxsize=4096)
def parse(text: str, dimension: Dimension | None) -> float:
    """Read ``text`` as a quantity of ``dimension`` and return it in the base unit.

    A bare number is taken in the base unit. ``dimension=None`` accepts only
    plain numbers.
    """
    if len(text) > MAX_QUANTITY_CHARS:
        raise UnitError(f"is too long ({len(text)} characters; at most {MAX_QUANTITY_CHARS})")
    cleaned = _normalise(text)
    if not cleaned:
        raise UnitError("is empty")
    if re.search(r"\*\*|\^|[()]", cleaned):
        raise UnitError(f"'{text}' is not a quantity: write a number and a unit, such as "
                        f"{dimension.examples if dimension else '8'}")
    if dimension is None and not _NUMBER.fullmatch(cleaned):
        raise UnitError(f"'{text}' is not a number")
    try:
        quantity = registry().parse_expression(cleaned)
    except pint.UndefinedUnitError as exc:
        raise UnitError(f"'{text}' has an unknown unit {_unit_name(exc)}; "
                        f"{_accepted(dimension)}") from None
    except Exception:  # pint's tokenizer raises assorted errors on junk
        raise UnitError(f"'{text}' is not a quantity; {_accepted(dimension)}") from None
    if not isinstance(quantity, pint.Quantity):  # a bare number parses to int/float
        value = float(quantity)
    elif quantity.dimensionless:
        value = float(quantity.to("dimensionless").magnitude)
    elif dimension is None:
        raise UnitError(f"'{text}' has a unit, but this value is a plain number")
    else:
        if not quantity.check(dimension.pint_dimensionality):
            raise UnitError(f"'{text}' is not in {dimension.name}; {_accepted(dimension)}")
        value = float(quantity.to(dimension.base_unit).magnitude)
    if not math.isfinite(value):
        raise UnitError(f"'{text}' is not a finite number")
    return value


def unit_dimension(text: str) -> Dimension:
    """The dimension of a unit written as text (``GiB`` -> bytes), or UnitError."""
    dimension = _dimension_of(_unit(text))
    if dimension is None:
        raise UnitError(f"'{text}' is not a unit of bytes, bits, time, FLOP or a rate; "
                        f"{_accepted(None)}")
    return dimension


def from_base(value: float, dimension: Dimension, to_unit: str) -> float:
    """Express ``value`` (in the dimension's base unit) in ``to_unit``."""
    quantity = registry().Quantity(value, dimension.base_unit)
    return float(quantity.to(_unit(to_unit)).magnitude)


def _unit(text: str) -> pint.Unit:
    cleaned = _normalise(text)
    if len(cleaned) > MAX_QUANTITY_CHARS or not cleaned or re.search(r"\*\*|\^|[()]", cleaned):
        raise UnitError(f"'{text}' is not a unit such as GiB, MB/s or ms")
    try:
        return registry().Unit(cleaned)
    except Exception:
        raise UnitError(f"'{text}' is not a known unit; {_accepted(None)}") from None


def _dimension_of(unit: pint.Unit) -> Dimension | None:
    for dimension in DIMENSIONS.values():
        if unit.dimensionality == registry().get_dimensionality(dimension.pint_dimensionality):
            return dimension
    return None


def _unit_name(exc: pint.UndefinedUnitError) -> str:
    names = exc.unit_names if isinstance(exc.unit_names, (list, tuple)) else [exc.unit_names]
    return ", ".join(f"'{n}'" for n in names)


def _accepted(dimension: Dimension | None) -> str:
    if dimension is None:
        return ("units are B, kB (= KB, 1000 B), MB, GB, TB, KiB, MiB, GiB, TiB, bit, Gbit, "
                "s, ms, us, ns, min, h, day, year, FLOP, TFLOP, FLOP/s and rates such as GB/s")
    if dimension is BYTES:
        return ("write bytes as B, kB (= KB, 1000 B), MB, GB, TB (powers of 1000) or "
                "KiB, MiB, GiB, TiB (powers of 1024), or bits as bit, Mbit, Gbit")
    return f"write {dimension.name}, for example {dimension.examples}"


# ---------------------------------------------------------------------------- formatting

_DECIMAL_STEPS = [(1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]
_BINARY_STEPS = [(2.0**50, "Pi"), (2.0**40, "Ti"), (2.0**30, "Gi"), (2.0**20, "Mi"),
                 (2.0**10, "Ki")]
_TIME_STEPS = [(365.25 * 86400.0, "years"), (86400.0, "days"), (3600.0, "h"),
               (60.0, "min"), (1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")]


def significant(value: float, digits: int = 4) -> str:
    """``value`` with at most ``digits`` significant digits: 1.4, 0.4623, 1.875e-05."""
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return re.sub(r"e\+?(-?)0*(\d)", r"e\1\2", f"{value:.{digits}g}")


Number = Callable[[float, int], str]


def _prefixed(value: float, steps: list[tuple[float, str]], unit: str, digits: int,
              number: Number) -> str:
    if abs(value) >= steps[0][0] * 1000:  # beyond the largest prefix
        return f"{number(value, digits)} {unit}"
    for factor, prefix in steps:
        if abs(value) >= factor:
            return f"{number(value / factor, digits)} {prefix}{unit}"
    return f"{number(value, digits)} {unit}"


def format_quantity(value: float, unit: str | None, digits: int = 4,
                    number: Number = significant,
                    name: Callable[[str], str] = lambda unit: unit) -> str:
    """A base-unit number for people: ``(1.4e9, "B")`` gives ``1.4 GB (1.304 GiB)``.

    ``number`` formats the bare numbers and ``name`` the units written as words (days,
    years); the web passes locale-aware ones.
    """
    if not unit:
        return number(value, digits)
    if unit == "B":
        if abs(value) < 1000:
            return f"{number(value, digits)} B"
        return (f"{_prefixed(value, _DECIMAL_STEPS, 'B', digits, number)} "
                f"({_prefixed(value, _BINARY_STEPS, 'B', digits, number)})")
    if unit == "s":
        for factor, step in _TIME_STEPS:
            if abs(value) >= factor:
                return f"{number(value / factor, digits)} {name(step)}"
        return f"{number(value, digits)} s"
    if unit in ("FLOP", "FLOP/s", "B/s"):
        return _prefixed(value, _DECIMAL_STEPS, unit, digits, number)
    return f"{number(value, digits)} {name(unit)}"
