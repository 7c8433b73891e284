"""Reading typed quantities the way each language writes them (app/calculator/reading.py)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.calculator.reading import ReadingError, read_quantity, unit_spellings
from app.calculator.units import BYTES, SECONDS

NNBSP, NBSP = "\u202f", "\u00a0"


@pytest.mark.parametrize(("text", "lang", "unit", "value"), [
    # French: decimal comma (or point), thousands by any space, French byte units
    ("3,25 Go", "fr", None, 3.25e9),
    ("3,25 GB", "fr", None, 3.25e9),
    ("20.5 Go", "fr", None, 20.5e9),
    ("1 400 Mo", "fr", None, 1.4e9),
    (f"1{NNBSP}400 Mo", "fr", None, 1.4e9),
    (f"1{NBSP}400{NBSP}MB", "fr", None, 1.4e9),
    ("25 Mio", "fr", None, 25 * 2**20),
    ("512 ko", "fr", None, 512e3),
    ("3 octets", "fr", None, 3),
    ("1,5", "fr", "GB", 1.5e9),
    ("12,5 Gbit", "fr", None, 12.5e9 / 8),
    # Turkish: decimal comma, thousands by a point
    ("3,25 GB", "tr", None, 3.25e9),
    ("1.400 MB", "tr", None, 1.4e9),
    ("1.400,5 MB", "tr", None, 1.4005e9),
    ("2 bayt", "tr", None, 2),
    # English and Chinese: decimal point, thousands by a comma
    ("1,400 MB", "en", None, 1.4e9),
    ("1,400.5 MB", "en", None, 1.4005e9),
    ("1 400 MB", "en", None, 1.4e9),
    ("3.25", "en", "GB", 3.25e9),
    ("1.4e9 B", "en", None, 1.4e9),
    ("１．４ GB", "zh", None, 1.4e9),
    ("１４００ MB", "zh", None, 1.4e9),
    ("１，４００ ＭＢ", "zh", None, 1.4e9),
    ("1.4 字节", "zh", None, 1.4),
    ("13 × 10⁹ B", "en", None, 13e9),
])
def test_sizes_as_each_language_writes_them(text, lang, unit, value):
    reading = read_quantity(text, BYTES, lang, unit)
    assert reading.value == pytest.approx(value)


@pytest.mark.parametrize(("text", "lang", "value"), [
    ("53,5 min", "fr", 53.5 * 60),
    ("2 heures", "fr", 7200),
    ("3 jours", "fr", 3 * 86400),
    ("285 ans", "fr", 285 * 365.25 * 86400),
    ("53,5 dakika", "tr", 53.5 * 60),
    ("3 gün", "tr", 3 * 86400),
    ("112,1 ms", "tr", 0.1121),
    ("112.1 毫秒", "zh", 0.1121),
    ("2 小时", "zh", 7200),
    ("285 年", "zh", 285 * 365.25 * 86400),
])
def test_times_as_each_language_writes_them(text, lang, value):
    assert read_quantity(text, SECONDS, lang).value == pytest.approx(value)


@pytest.mark.parametrize(("text", "lang", "default", "value"), [
    ("%12,5", "tr", None, 0.125),
    ("12,5 %", "fr", None, 0.125),
    ("12.5%", "en", None, 0.125),
    ("12,5", "fr", "%", 0.125),
    ("13 milliards", "fr", None, 13e9),
    ("13 billion", "en", None, 13e9),
    ("13 milyar", "tr", None, 13e9),
    ("130 亿", "zh", None, 13e9),
    ("130亿", "zh", None, 13e9),
    ("1 024", "fr", None, 1024),
    ("1.024", "tr", None, 1024),
    ("1,024", "en", None, 1024),
])
def test_plain_numbers_percentages_and_scale_words(text, lang, default, value):
    assert read_quantity(text, None, lang, default).value == pytest.approx(value)


def test_french_billion_is_ten_to_the_twelve():
    assert read_quantity("1 billion", None, "fr").value == 1e12
    assert read_quantity("1 billion", None, "en").value == 1e9


@pytest.mark.parametrize(("text", "lang", "code"), [
    ("1.400 MB", "fr", "ambiguous"),       # decimal point or thousands: never guessed
    ("1 40 MB", "fr", "bad-grouping"),     # a digit would be dropped
    ("1 4000 MB", "en", "bad-grouping"),
    ("1.400,5 MB", "en", "mixed-marks"),
    ("1,400.5 MB", "tr", "mixed-marks"),
    ("1.2.3 MB", "fr", "bad-grouping"),
    ("12 Xo", "fr", "unknown-unit"),
    ("3 s", "en", "wrong-dimension"),
    ("abc", "en", "not-a-number"),
    ("1e999 GB", "en", "not-finite"),
    ("", "en", "empty"),
    ("9" * 100, "en", "too-long"),
    ("5 GB 3", "en", "unknown-unit"),
])
def test_refusals_name_the_problem(text, lang, code):
    with pytest.raises(ReadingError) as error:
        read_quantity(text, BYTES, lang)
    assert error.value.code == code


def test_ambiguous_text_says_both_readings():
    with pytest.raises(ReadingError) as error:
        read_quantity("1.400 Go", BYTES, "fr")
    assert error.value.details["decimal"] == "1,400"
    assert error.value.details["grouped"] == "1 400"


def test_a_unit_on_a_plain_number_is_refused():
    with pytest.raises(ReadingError) as error:
        read_quantity("4 GB", None, "en")
    assert error.value.code == "unit-not-expected"


def test_bare_number_is_read_in_the_question_unit_and_says_so():
    reading = read_quantity("3.25", BYTES, "en", "GB")
    assert (reading.value, reading.unit, reading.assumed_unit) == (3.25e9, "GB", True)
    assert not read_quantity("3.25 GB", BYTES, "en", "GB").assumed_unit


def test_unit_spellings_include_the_french_ones():
    assert {"GB", "Go"} <= unit_spellings("GB")
    assert {"B", "octets", "bayt", "字节"} <= unit_spellings("B")


@given(st.integers(min_value=0, max_value=10**12), st.sampled_from(["en", "fr", "tr", "zh"]))
def test_grouped_integers_never_lose_digits(number, lang):
    """Every integer written with the language's own grouping reads back whole."""
    from babel.numbers import format_decimal

    text = format_decimal(number, locale=lang)
    assert read_quantity(text, None, lang).value == number
