"""Numbers written as each language writes them: 1,4 in French, 1.4 in English, 1 024 GPU,
and large counts in words (13 billion, 13 milliards, 130亿, 13 milyar)."""

from __future__ import annotations

from babel.numbers import format_decimal

from app.calculator.units import significant

# Large counts in words: (factor, word) from the largest; French stops at milliards
# because its "billion" is 10^12, Chinese counts in 万 and 亿.
_WORDS = {
    "en": [(1e12, "trillion"), (1e9, "billion"), (1e6, "million")],
    "fr": [(1e9, "milliards"), (1e6, "millions")],
    "tr": [(1e12, "trilyon"), (1e9, "milyar"), (1e6, "milyon")],
    "zh": [(1e12, "万亿"), (1e8, "亿"), (1e4, "万")],
}
_SINGULAR = {"milliards": "milliard", "millions": "million"}
_WORDS_FROM = {"en": 1e6, "fr": 1e6, "tr": 1e6, "zh": 1e5}


_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def format_number(value: float, lang: str, digits: int = 4) -> str:
    """``value`` rounded to ``digits`` significant digits, grouped and marked for ``lang``;
    very large or small ones in powers of ten as people write them (5,88 × 10²³)."""
    if value != 0 and not 1e-4 <= abs(value) < 1e15:
        mantissa, exponent = f"{value:.{digits - 1}e}".split("e")
        return (f"{format_number(float(f'{float(mantissa):.{digits}g}'), lang, digits)}"
                f" × 10{str(int(exponent)).translate(_SUPERSCRIPT)}")
    rounded = float(f"{value:.{digits}g}")
    return format_decimal(rounded, format="#,##0.##########", locale=_locale(lang))


def _locale(lang: str) -> str:
    """A language Babel knows; a text in an unsupported language is written as English."""
    return lang if lang in _WORDS else "en"


def format_count(value: float, lang: str, digits: int = 4) -> str:
    """A count for people: ``13e9`` is "13 billion" / "13 milliards" / "130亿".

    A whole number keeps every digit (26 214 400) unless words say it exactly (13e9).
    """
    whole = float(value).is_integer() and abs(value) < 1e15
    if whole and float(f"{value:.{digits}g}") != value:
        return format_decimal(int(value), format="#,##0", locale=_locale(lang))
    if abs(value) >= _WORDS_FROM.get(lang, 1e6) and abs(value) < 1e15:
        for factor, word in _WORDS.get(lang, _WORDS["en"]):
            if abs(value) >= factor:
                if lang == "zh":  # 1750亿: no grouping, no space before a Chinese unit word
                    return f"{significant(value / factor, digits)}{word}"
                scaled = format_number(value / factor, lang, digits)
                if lang == "fr" and abs(value / factor) < 2:
                    word = _SINGULAR[word]
                return f"{scaled} {word}"
    return format_number(value, lang, digits)
