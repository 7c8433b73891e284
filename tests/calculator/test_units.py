"""Parsing and formatting quantities."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.calculator import run, units
from app.calculator.units import BYTES, BYTES_PER_SECOND, FLOP, FLOP_PER_SECOND, SECONDS, UnitError


@pytest.mark.parametrize(("text", "dimension", "expected"), [
    ("1.4 GB", BYTES, 1.4e9),
    ("1400 MB", BYTES, 1.4e9),
    ("800MB", BYTES, 800e6),
    ("25 MiB", BYTES, 26_214_400),
    ("1.3 GiB", BYTES, 1.3 * 2**30),
    ("1 KB", BYTES, 1000),  # documented: a bare KB is decimal
    ("1 kB", BYTES, 1000),
    ("1 KiB", BYTES, 1024),
    ("8 bit", BYTES, 1),
    ("3.2e9", BYTES, 3.2e9),  # a bare number is in the parameter's unit
    ("2.5 ms", SECONDS, 2.5e-3),
    ("5 us", SECONDS, 5e-6),
    ("5 µs", SECONDS, 5e-6),
    ("90 min", SECONDS, 5400),
    ("400 Gbit/s", BYTES_PER_SECOND, 50e9),
    ("100 Gbps", BYTES_PER_SECOND, 12.5e9),
    ("312 TFLOP/s", FLOP_PER_SECOND, 312e12),
    ("312 TFLOPS", FLOP_PER_SECOND, 312e12),
    ("3.14e23 FLOP", FLOP, 3.14e23),
    ("6 PFLOPs", FLOP, 6e15),  # FLOPs is a count, not a rate
])
def test_parse(text, dimension, expected):
    assert units.parse(text, dimension) == pytest.approx(expected)


@pytest.mark.parametrize(("text", "dimension", "message"), [
    ("1400 mb", BYTES, "unknown unit 'mb'"),
    ("5 s", BYTES, "is not in bytes"),
    ("1.4 GB ** 1e9", BYTES, "is not a quantity"),
    ("2^80 B", BYTES, "is not a quantity"),
    ("1e999 B", BYTES, "not a finite number"),
    ("", BYTES, "is empty"),
    ("x" * 10_000, BYTES, "too long"),
    ("__import__('os')", BYTES, "not a quantity"),
    ("8 GB", None, "not a number"),
])
def test_parse_refuses(text, dimension, message):
    with pytest.raises(UnitError, match=message):
        units.parse(text, dimension)


def test_unknown_unit_message_states_the_kb_convention():
    with pytest.raises(UnitError, match=r"KB, 1000 B"):
        units.parse("3 furlongs", BYTES)


def test_zero_baseline_in_gib():
    """DOMAIN units.120GB_in_GiB: 120 GB (decimal) is 111.76 GiB."""
    assert run("units", value="120 GB", to_unit="GiB")["value"] == pytest.approx(111.7587, rel=1e-6)


def test_units_calculator_names_the_bad_side():
    from app.calculator import InputError

    with pytest.raises(InputError) as info:
        run("units", value="120 GB", to_unit="s")
    assert info.value.problems[0].param == "value"
    with pytest.raises(InputError) as info:
        run("units", value="120 GB", to_unit="parsec")
    assert info.value.problems[0].param == "to_unit"


@pytest.mark.parametrize(("value", "unit", "text"), [
    (1.4e9, "B", "1.4 GB (1.304 GiB)"),
    (26_214_400, "B", "26.21 MB (25 MiB)"),
    (512, "B", "512 B"),
    (3.2e-3, "s", "3.2 ms"),
    (7200, "s", "2 h"),
    (3.1428e23, "FLOP", "3.143e23 FLOP"),
    (312e12, "FLOP/s", "312 TFLOP/s"),
    (14, None, "14"),
])
def test_format(value, unit, text):
    assert units.format_quantity(value, unit) == text


@given(value=st.floats(1e-3, 1e18),
       unit=st.sampled_from(["B", "kB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "TiB", "Gbit"]))
def test_round_trip_between_units(value, unit):
    text = f"{value!r} {unit}"
    in_bytes = units.parse(text, BYTES)
    back = units.from_base(in_bytes, BYTES, unit)
    assert back == pytest.approx(value, rel=1e-12)


@given(value=st.floats(1, 1e17))
def test_formatted_bytes_parse_back(value):
    decimal_part = units.format_quantity(value, "B").split(" (")[0]
    assert units.parse(decimal_part, BYTES) == pytest.approx(value, rel=1e-3)
