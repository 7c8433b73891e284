"""Reading a typed quantity the way each language writes it.

``3,25 Go`` in French, ``1.400 MB`` in Turkish, ``３．２５ GB`` in Chinese, ``1,400 MB`` in
English and ``1 400 MB`` everywhere are the same kind of text to a person; to a parser they
are not. This module turns what someone typed into a number and a canonical unit by the
rules of the page's language, then lets :func:`app.calculator.units.parse` do the units.

The rules, stated on the answer form and in every refusal:

* the language's decimal mark is always a decimal mark (``.`` in en and zh, ``,`` in fr
  and tr); French also takes ``.``;
* thousands are grouped by a space (any kind) in every language, by ``,`` in en and zh,
  by ``.`` in tr; every group after the first has exactly three digits;
* a separator that one of those rules would read as thousands and another as a decimal
  mark is refused with both readings (``1.400`` on a French page), never guessed;
* a separator that can only be a decimal mark is one (``1,5`` on an English page), and
  the feedback echoes the reading;
* digits are never dropped: a text that is not entirely a number, a scale word and a
  unit is refused.

Errors carry a code and details, not sentences: the web and the API write them in the
page's language.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from app.calculator.units import MAX_QUANTITY_CHARS, Dimension, UnitError, parse
from app.calculator.units import unit_dimension as _unit_dimension

READING_LANGUAGES = ("en", "fr", "tr", "zh")

# Decimal marks a language reads as such; the first one is the one it writes.
DECIMAL_MARKS = {"en": ".", "zh": ".", "fr": ",.", "tr": ","}
# Characters (besides spaces) that group thousands.
GROUP_MARKS = {"en": ",", "zh": ",", "fr": "", "tr": "."}

# Units as other languages (and people) write them, mapped to the symbols pint reads.
UNIT_ALIASES: dict[str, str] = {
    # French byte units: octet, ko, Mo, Go... (and the binary Kio, Mio...)
    "o": "B", "octet": "B", "octets": "B", "ko": "kB", "Ko": "kB", "Mo": "MB", "Go": "GB",
    "To": "TB", "Po": "PB", "Kio": "KiB", "kio": "KiB", "Mio": "MiB", "Gio": "GiB",
    "Tio": "TiB", "Pio": "PiB",
    # Turkish and Chinese bytes
    "bayt": "B", "字节": "B", "byte": "B", "bytes": "B",
    # bits
    "bits": "bit", "比特": "bit",
    # time, spelled out
    "sec": "s", "secs": "s", "second": "s", "seconds": "s", "seconde": "s", "secondes": "s",
    "saniye": "s", "sn": "s", "秒": "s",
    "milliseconds": "ms", "millisecond": "ms", "milliseconde": "ms", "millisecondes": "ms",
    "milisaniye": "ms", "毫秒": "ms",
    "microseconds": "us", "microseconde": "us", "microsecondes": "us", "mikrosaniye": "us",
    "微秒": "us", "纳秒": "ns", "nanoseconds": "ns", "nanosecondes": "ns",
    "minute": "min", "minutes": "min", "mn": "min", "dakika": "min", "dk": "min",
    "分钟": "min", "分": "min",
    "hour": "h", "hours": "h", "hr": "h", "heure": "h", "heures": "h", "saat": "h", "sa": "h",
    "小时": "h",
    "jour": "day", "jours": "day", "j": "day", "gün": "day", "天": "day", "日": "day",
    "days": "day", "years": "year",
    "an": "year", "ans": "year", "année": "year", "années": "year", "yıl": "year",
    "年": "year",
}

# Words that multiply the number, per language ("billion" is 10^12 in French).
SCALE_WORDS: dict[str, dict[str, float]] = {
    "en": {"thousand": 1e3, "million": 1e6, "millions": 1e6, "billion": 1e9,
           "billions": 1e9, "trillion": 1e12},
    "fr": {"mille": 1e3, "million": 1e6, "millions": 1e6, "milliard": 1e9,
           "milliards": 1e9, "billion": 1e12, "billions": 1e12},
    "tr": {"bin": 1e3, "milyon": 1e6, "milyar": 1e9, "trilyon": 1e12},
    "zh": {"千": 1e3, "万": 1e4, "百万": 1e6, "千万": 1e7, "亿": 1e8, "十亿": 1e9,
           "百亿": 1e10, "千亿": 1e11, "万亿": 1e12},
}

_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
_POWER_OF_TEN = re.compile(r"\s*[x×*·]\s*10\s*(?:\^|\*\*)?\s*([+-]?\d{1,3})")
_SUPERSCRIPT_POWER = re.compile(r"10([⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+)")
_SHAPE = re.compile(
    r"(?P<lead_pct>%)?\s*(?P<sign>[+-])?\s*"
    r"(?P<number>\d[\d., ]*\d|\d|[.,]\d+)"
    r"(?P<exponent>[eE][+-]?\d{1,3})?"
    r"(?P<rest>.*)", re.S)


class ReadingError(ValueError):
    """Text that cannot be read as the expected quantity: a code and its details."""

    def __init__(self, code: str, **details: Any):
        super().__init__(code)
        self.code = code
        self.details = details


@dataclass(frozen=True)
class Reading:
    """How a text was read: ``value`` in the dimension's base unit (a fraction for %)."""

    value: float
    number: float  # the number as written, after any scale word
    unit: str | None  # the unit as read ("GB" for "Go"), "%" or None
    assumed_unit: bool = False  # a bare number, read in the question's unit


def read_quantity(text: str, dimension: Dimension | None, lang: str = "en",
                  default_unit: str | None = None) -> Reading:
    """Read ``text`` typed on a page in ``lang`` as a quantity of ``dimension``.

    ``dimension=None`` is a plain number (a count, a ratio), which may be written as a
    percentage. ``default_unit`` is the unit a bare number is read in (the unit the
    question asks for; "%" to read a bare number as a percentage).
    """
    lang = lang if lang in READING_LANGUAGES else "en"
    if not text.strip():
        raise ReadingError("empty")
    if len(text) > MAX_QUANTITY_CHARS:
        raise ReadingError("too-long", limit=MAX_QUANTITY_CHARS)
    cleaned = _normalise(text)
    match = _SHAPE.fullmatch(cleaned)
    if match is None:
        raise ReadingError("not-a-number", text=text.strip())
    number = _number(match.group("number"), lang, text.strip())
    exponent = int(match.group("exponent")[1:]) if match.group("exponent") else 0
    if match.group("sign") == "-":
        number = -number
    rest = match.group("rest").strip()
    power = _POWER_OF_TEN.match(rest)
    if power:
        exponent += int(power.group(1))
        rest = rest[power.end():].strip()
    try:
        number *= 10.0 ** exponent
    except OverflowError:
        raise ReadingError("not-finite", text=text.strip()) from None
    number, rest = _scale(number, rest, lang)
    percent = bool(match.group("lead_pct"))
    if rest.startswith("%"):
        percent, rest = True, rest[1:].strip()
    if percent:
        if rest:
            raise ReadingError("not-a-number", text=text.strip())
        if dimension is not None:
            raise ReadingError("wrong-dimension", unit="%", expected=dimension.name)
        return _finite(Reading(number / 100, number, "%"), text)
    if not rest:
        return _bare(number, dimension, default_unit, text)
    unit = canonical_unit(rest)
    try:
        found = _unit_dimension(unit)
    except UnitError:
        raise ReadingError("unknown-unit", unit=rest) from None
    if dimension is None:
        raise ReadingError("unit-not-expected", unit=rest)
    if found != dimension:
        raise ReadingError("wrong-dimension", unit=rest, expected=dimension.name)
    try:
        value = number * parse(f"1 {unit}", dimension)
    except UnitError:
        raise ReadingError("unknown-unit", unit=rest) from None
    return _finite(Reading(value, number, unit), text)


def canonical_unit(unit: str) -> str:
    """``Go/s`` -> ``GB/s``: each side of a rate through :data:`UNIT_ALIASES`."""
    parts = [part.strip() for part in unit.split("/")]
    return "/".join(UNIT_ALIASES.get(part, part) for part in parts)


def _normalise(text: str) -> str:
    """Full-width forms and every kind of space to ASCII; superscript powers to ``^``."""
    text = _SUPERSCRIPT_POWER.sub(lambda m: "10^" + m.group(1).translate(_SUPERSCRIPTS), text)
    text = unicodedata.normalize("NFKC", text)
    text = re.sub(r"[\s\u00a0\u2009\u202f]+", " ", text).strip()
    return text.replace("−", "-").replace("、", ",")


def _number(raw: str, lang: str, original: str) -> float:
    """The digits of ``raw`` by ``lang``'s rules (see the module docstring)."""
    raw = raw.strip()
    decimal_marks, group_marks = DECIMAL_MARKS[lang], GROUP_MARKS[lang]
    marks = [c for c in raw if c in ".,"]
    decimal_at = -1
    if len(set(marks)) == 2:  # both: the last one is the decimal mark
        last = max(raw.rfind("."), raw.rfind(","))
        other = "." if raw[last] == "," else ","
        if raw[last] not in decimal_marks or other not in group_marks:
            raise ReadingError("mixed-marks", text=original)
        if raw.count(raw[last]) > 1:
            raise ReadingError("mixed-marks", text=original)
        decimal_at = last
    elif len(marks) > 1:  # one mark several times: only thousands grouping
        if marks[0] not in group_marks:
            raise ReadingError("bad-grouping", text=original)
    elif len(marks) == 1:
        mark = marks[0]
        position = raw.index(mark)
        after = raw[position + 1:]
        three_digits = len(after) == 3 and after.isdigit()
        if mark == decimal_marks[0]:
            decimal_at = position
        elif mark in group_marks and three_digits and " " not in raw:
            decimal_at = -1  # 1,400 in English, 1.400 in Turkish
        elif mark in group_marks or mark in decimal_marks:
            if three_digits and mark in decimal_marks:
                # 1.400 on a French page: a decimal point here, thousands in Turkish...
                raise ReadingError("ambiguous", text=original,
                                   decimal=_join(raw[:position], after, lang),
                                   grouped=f"{raw[:position]} {after}")
            decimal_at = position  # 1,5 on an English page can only be one and a half
        else:
            raise ReadingError("bad-grouping", text=original)
    integer = raw[:decimal_at] if decimal_at >= 0 else raw
    fraction = raw[decimal_at + 1:] if decimal_at >= 0 else ""
    if " " in fraction or any(c in ".," for c in fraction):
        raise ReadingError("bad-grouping", text=original)
    groups = re.split(r"[ .,]", integer) if integer else [""]
    if len(groups) > 1 and (not 1 <= len(groups[0]) <= 3
                            or any(len(g) != 3 for g in groups[1:])):
        raise ReadingError("bad-grouping", text=original)
    digits = "".join(groups)
    if not digits and not fraction:
        raise ReadingError("not-a-number", text=original)
    return float(f"{digits or '0'}.{fraction or '0'}")


def _join(integer: str, fraction: str, lang: str) -> str:
    return f"{integer}{DECIMAL_MARKS[lang][0]}{fraction}"


def _scale(number: float, rest: str, lang: str) -> tuple[float, str]:
    words = SCALE_WORDS[lang]
    for word in sorted(words, key=len, reverse=True):
        if rest == word or rest.startswith(word + " ") or (
                not word.isascii() and rest.startswith(word)):
            return number * words[word], rest[len(word):].strip()
    return number, rest


def _bare(number: float, dimension: Dimension | None, default_unit: str | None,
          text: str) -> Reading:
    if default_unit == "%":
        return _finite(Reading(number / 100, number, "%", assumed_unit=True), text)
    if dimension is None:
        return _finite(Reading(number, number, None), text)
    unit = default_unit or dimension.base_unit
    return _finite(Reading(number * parse(f"1 {unit}", dimension), number, unit,
                           assumed_unit=True), text)


def _finite(reading: Reading, text: str) -> Reading:
    if not math.isfinite(reading.value):
        raise ReadingError("not-finite", text=text.strip())
    return reading


def unit_spellings(unit: str) -> set[str]:
    """Every way :func:`read_quantity` accepts ``unit`` (``GB``: GB, Go)."""
    canonical = canonical_unit(unit)
    return {canonical} | {alias for alias, target in UNIT_ALIASES.items()
                          if target == canonical}


def dimension_of_unit(unit: str) -> Dimension:
    """The dimension of a unit in any accepted spelling, or UnitError."""
    return _unit_dimension(canonical_unit(unit))


__all__ = ["Reading", "ReadingError", "canonical_unit", "dimension_of_unit",
           "read_quantity", "unit_spellings"]
