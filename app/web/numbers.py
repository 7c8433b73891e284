"""Numbers written for the current request's language (1,4 in French, 1.4 in English)."""

from __future__ import annotations

from app.i18n import current_language
from app.i18n.numbers import format_count, format_number


def localized_number(value: float, digits: int = 4) -> str:
    """``value`` rounded to ``digits`` significant digits, in the request's locale."""
    return format_number(value, current_language.get(), digits)


def people_number(value: float, digits: int = 4) -> str:
    """The same, with large round counts in words (7,5 milliards, 75亿)."""
    return format_count(value, current_language.get(), digits)
