"""Numbers written for the current language (1,4 in French, 1.4 in English)."""

from __future__ import annotations

from babel.numbers import format_decimal

from app.calculator.units import significant
from app.i18n import current_language


def localized_number(value: float, digits: int = 4) -> str:
    """``value`` rounded to ``digits`` significant digits, in the request's locale."""
    if value != 0 and not 1e-4 <= abs(value) < 1e15:
        return significant(value, digits)
    rounded = float(f"{value:.{digits}g}")
    return format_decimal(rounded, format="#,##0.##########", locale=current_language.get())
