"""Numbers written for the current request's language (1,4 in French, 1.4 in English)."""

from __future__ import annotations

from app.i18n import current_language, pgettext
from app.i18n.numbers import format_count, format_number

# Units written as words: each language has its own ("14 jours", "284 yıl", "284 年");
# symbols (GB, ms, FLOP) are the same everywhere.
UNIT_WORDS = {
    "days": lambda: pgettext("unit", "days"),
    "years": lambda: pgettext("unit", "years"),
}


def localized_number(value: float, digits: int = 4) -> str:
    """``value`` rounded to ``digits`` significant digits, in the request's locale."""
    return format_number(value, current_language.get(), digits)


def people_number(value: float, digits: int = 4) -> str:
    """The same, with large round counts in words (7,5 milliards, 75亿)."""
    return format_count(value, current_language.get(), digits)


def localized_unit(unit: str) -> str:
    """``unit`` as the request's language writes it after a number."""
    word = UNIT_WORDS.get(unit)
    return word() if word is not None else unit
