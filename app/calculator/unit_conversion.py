"""The ``units`` calculator: convert a quantity, e.g. to see that 120 GB is 111.76 GiB."""

from __future__ import annotations

from app.calculator import units
from app.calculator.registry import Output, Param, Result, Step, bad, calculator


@calculator(
    name="units",
    title="Unit conversion",
    area="units",
    summary="Convert bytes, bits, times, FLOPs and rates between units; GB is 10⁹ bytes, "
            "GiB is 2³⁰ bytes, and a bare KB is read as kB (1000 bytes).",
    formula="1 kB = 1000 B, 1 KiB = 1024 B, 1 byte = 8 bits",
    sources=("IEC 80000-13 (binary prefixes)", "BIPM SI brochure (decimal prefixes)"),
    params=(
        Param("value", "text", "The quantity, e.g. '1.4 GB', '25 MiB', '400 Gbit/s'."),
        Param("to_unit", "text", "The unit to express it in, e.g. 'GiB', 'GB/s', 'ms'."),
    ),
    outputs=(
        Output("value", "The quantity in to_unit."),
        Output("text", "The same, written with its unit."),
    ),
)
def convert_units(value: str, to_unit: str) -> Result:
    """Parse ``value`` and express it in ``to_unit``."""
    try:
        target = units.unit_dimension(to_unit)
    except units.UnitError as exc:
        raise bad("to_unit", str(exc)) from None
    try:
        base = units.parse(value, target)
    except units.UnitError as exc:
        raise bad("value", str(exc)) from None
    converted = units.from_base(base, target, to_unit)
    text = f"{units.significant(converted, 6)} {to_unit.strip()}"
    return Result({"value": converted, "text": text},
                  [Step("%(value)s = %(text)s", {"value": value.strip(), "text": text})])
