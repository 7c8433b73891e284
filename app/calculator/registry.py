"""One registry of calculators: parameters, outputs, formula and source for each.

Every face of the calculator (Python, CLI, HTTP API, web pages, the bank check and
the grader) goes through :func:`evaluate`, so validation and error messages are
the same everywhere.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from app.calculator import units
from app.calculator.units import Dimension, UnitError

ParamType = Literal[
    "integer", "number", "boolean", "choice", "text", "number_list", "integer_list", "vector_list"
]

MAX_LIST_ITEMS = 10_000
MAX_TEXT_CHARS = 200
_MISSING: Any = object()


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the input, tied to the parameter that carries it."""

    param: str
    message: str

    def __str__(self) -> str:
        return f"{self.param}: {self.message}"


class InputError(ValueError):
    """The input names unknown parameters or values a calculator cannot take."""

    def __init__(self, problems: Sequence[Problem]):
        self.problems = list(problems)
        super().__init__("; ".join(str(p) for p in self.problems))


class BadValue(ValueError):
    """A single value a parameter cannot take; the message does not repeat its name."""


def bad(param: str, message: str) -> InputError:
    """An :class:`InputError` about one parameter, for checks that span parameters."""
    return InputError([Problem(param, message)])


@dataclass(frozen=True)
class Param:
    """A calculator parameter: its type, unit, default and bounds."""

    name: str
    type: ParamType
    description: str
    unit: Dimension | None = None
    default: Any = _MISSING
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False  # minimum itself is not allowed (sizes > 0)
    choices: tuple[str, ...] = ()

    @property
    def required(self) -> bool:
        return self.default is _MISSING

    def coerce(self, raw: Any) -> Any:
        """Validate one raw value (JSON-ish or text) and return it in base units."""
        if self.type == "boolean":
            return _boolean(raw)
        if self.type == "choice":
            if not isinstance(raw, str) or raw not in self.choices:
                shown = _show(raw)
                raise BadValue(f"{shown} is not one of {', '.join(self.choices)}")
            return raw
        if self.type == "text":
            if not isinstance(raw, str):
                raise BadValue(f"expected text, got {_show(raw)}")
            if len(raw) > MAX_TEXT_CHARS:
                raise BadValue(f"is too long ({len(raw)} characters)")
            return raw
        if self.type in ("number_list", "integer_list"):
            return [self._number(item, f"item {i}") for i, item in enumerate(_items(raw))]
        if self.type == "vector_list":
            return _vectors(raw, self._number)
        return self._number(raw)

    def _number(self, raw: Any, where: str = "") -> float | int:
        prefix = f"{where}: " if where else ""
        if isinstance(raw, bool) or raw is None or isinstance(raw, (list, dict)):
            raise BadValue(f"{prefix}expected a number, got {_show(raw)}")
        if isinstance(raw, str):
            if len(raw) > MAX_TEXT_CHARS:
                raise BadValue(f"{prefix}is too long ({len(raw)} characters)")
            try:
                value: float = units.parse(raw, self.unit)
            except UnitError as exc:
                raise BadValue(f"{prefix}{exc}") from None
        elif isinstance(raw, (int, float)):
            value = raw
        else:
            raise BadValue(f"{prefix}expected a number, got {_show(raw)}")
        if isinstance(value, float) and not math.isfinite(value):
            raise BadValue(f"{prefix}must be a finite number")
        if self.type in ("integer", "integer_list"):
            if float(value) != int(value):
                raise BadValue(f"{prefix}must be a whole number, got {_show(raw)}")
            value = int(value)
        self._check_bounds(value, prefix)
        return value

    def _check_bounds(self, value: float, prefix: str) -> None:
        unit = f" {self.unit.base_unit}" if self.unit else ""
        if self.minimum is not None:
            if self.exclusive_minimum and value <= self.minimum:
                raise BadValue(f"{prefix}must be greater than {units.significant(self.minimum)}"
                                f"{unit} (got {units.significant(value)})")
            if value < self.minimum:
                raise BadValue(f"{prefix}must be at least {units.significant(self.minimum)}"
                                f"{unit} (got {units.significant(value)})")
        if self.maximum is not None and value > self.maximum:
            raise BadValue(f"{prefix}must be at most {units.significant(self.maximum)}{unit} "
                            f"(got {units.significant(value)})")

    def describe(self) -> dict[str, Any]:
        """Plain data for listings (API, CLI, pages)."""
        return {
            "name": self.name,
            "type": self.type,
            "unit": self.unit.base_unit if self.unit else None,
            "required": self.required,
            "default": None if self.required else self.default,
            "minimum": self.minimum,
            "exclusive_minimum": self.exclusive_minimum,
            "maximum": self.maximum,
            "choices": list(self.choices) or None,
            "description": self.description,
        }

    def json_schema(self) -> dict[str, Any]:
        """JSON Schema of what the HTTP API accepts for this parameter."""
        bounds: dict[str, Any] = {}
        if self.minimum is not None:
            bounds["exclusiveMinimum" if self.exclusive_minimum else "minimum"] = self.minimum
        if self.maximum is not None:
            bounds["maximum"] = self.maximum
        integral = self.type in ("integer", "integer_list")
        number = {"type": "integer" if integral else "number", **bounds}
        text = {"type": "string", "maxLength": MAX_TEXT_CHARS,
                "description": f"a quantity such as {self.unit.examples}" if self.unit
                else "a number written as text"}
        schema: dict[str, Any]
        if self.type == "boolean":
            schema = {"type": "boolean"}
        elif self.type == "choice":
            schema = {"type": "string", "enum": list(self.choices)}
        elif self.type == "text":
            schema = {"type": "string", "maxLength": MAX_TEXT_CHARS}
        elif self.type in ("number_list", "integer_list"):
            schema = {"type": "array", "items": {"anyOf": [number, text]},
                      "minItems": 1, "maxItems": MAX_LIST_ITEMS}
        elif self.type == "vector_list":
            vector = {"anyOf": [{"type": "number"},
                                {"type": "array", "items": {"type": "number"}, "minItems": 1}]}
            schema = {"type": "array", "items": vector, "minItems": 1}
        else:
            schema = {"anyOf": [number, text]}
        if not self.required:  # null, like leaving the parameter out, means the default
            schema = {"anyOf": [*schema.pop("anyOf", [schema]), {"type": "null"}]}
        schema["description"] = self.description + (
            f" Unit: {self.unit.base_unit}." if self.unit else "")
        if not self.required and self.default is not None:
            schema["default"] = self.default
        return schema


@dataclass(frozen=True)
class Output:
    """A calculator output; ``unit`` is the base unit its number is in."""

    name: str
    description: str
    unit: str | None = None

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "unit": self.unit, "description": self.description}


@dataclass(frozen=True)
class Result:
    """What a calculator function returns: its outputs and the worked formula."""

    outputs: dict[str, Any]
    worked: list[Step] = field(default_factory=list)


def N_(text: str) -> str:
    """Mark a step's English template for the UI catalogs (extracted like app.i18n.N_)."""
    return text


@dataclass(frozen=True)
class Quantity:
    """A number in a base unit (B, s, FLOP...), written by whoever shows the step."""

    value: float
    unit: str | None = None


@dataclass(frozen=True)
class Step:
    """One line of a worked formula: an English template with ``%(name)s`` fields, and
    the values that fill it (numbers, :class:`Quantity`, formulas as text, other steps).

    The calculator stays free of languages: the web translates the template and writes
    the numbers as the page's language does; ``str()`` gives the English line.
    """

    text: str
    values: Mapping[str, Any] = field(default_factory=dict)

    def render(self, translate: Callable[[str], str] = lambda text: text,
               number: Callable[[float, int], str] = units.significant,
               unit_name: Callable[[str], str] = lambda unit: unit) -> str:
        def show(value: Any) -> str:
            if isinstance(value, Step):
                return value.render(translate, number, unit_name)
            if isinstance(value, Quantity):
                return units.format_quantity(value.value, value.unit, number=number,
                                             name=unit_name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                return str(value)
            return number(value, 4)

        return translate(self.text) % {key: show(v) for key, v in self.values.items()}

    def __str__(self) -> str:
        return self.render()


@dataclass(frozen=True)
class Evaluation:
    """A validated run: the parameters as understood, the outputs, the worked formula."""

    calculator: Calculator
    params: dict[str, Any]
    outputs: dict[str, Any]
    worked: list[Step]


@dataclass(frozen=True)
class Calculator:
    name: str
    title: str
    area: str
    summary: str
    formula: str
    sources: tuple[str, ...]
    params: tuple[Param, ...]
    outputs: tuple[Output, ...]
    function: Callable[..., Result]

    def param(self, name: str) -> Param:
        return next(p for p in self.params if p.name == name)

    def output(self, name: str) -> Output:
        return next(o for o in self.outputs if o.name == name)

    def validate(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        """Coerce every parameter, collecting every problem before raising."""
        problems: list[Problem] = []
        known = {p.name for p in self.params}
        for name in raw:
            if name not in known:
                problems.append(Problem(str(name)[:60], f"unknown parameter for {self.name}; "
                                        f"expected one of {', '.join(sorted(known))}"))
        values: dict[str, Any] = {}
        for param in self.params:
            given = raw.get(param.name, _MISSING)
            if given is _MISSING or given is None:
                if param.required:
                    problems.append(Problem(param.name, "is required"))
                else:
                    values[param.name] = param.default
                continue
            try:
                values[param.name] = param.coerce(given)
            except BadValue as exc:
                problems.append(Problem(param.name, str(exc)))
        if problems:
            raise InputError(problems)
        return values

    def evaluate(self, raw: Mapping[str, Any]) -> Evaluation:
        values = self.validate(raw)
        result = self.function(**values)
        overflowed = [name for name, value in result.outputs.items() if not _finite(value)]
        if overflowed:  # a safety net: bounds on the parameters should prevent this
            raise InputError([Problem("input", f"the result ({', '.join(overflowed)}) is too "
                                      "large to represent; use smaller magnitudes")])
        return Evaluation(self, values, result.outputs, result.worked)

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "area": self.area,
            "summary": self.summary,
            "formula": self.formula,
            "sources": list(self.sources),
            "params": [p.describe() for p in self.params],
            "outputs": [o.describe() for o in self.outputs],
        }

    def input_schema(self) -> dict[str, Any]:
        """JSON Schema of the request body the HTTP API takes."""
        return {
            "title": f"{self.name} parameters",
            "type": "object",
            "properties": {p.name: p.json_schema() for p in self.params},
            "required": [p.name for p in self.params if p.required],
            "additionalProperties": False,
        }

    def output_schema(self) -> dict[str, Any]:
        return {
            "title": f"{self.name} outputs",
            "type": "object",
            "properties": {o.name: {"description": o.description
                                    + (f" Unit: {o.unit}." if o.unit else "")}
                           for o in self.outputs},
        }


REGISTRY: dict[str, Calculator] = {}


def calculator(
    *,
    name: str,
    title: str,
    area: str,
    summary: str,
    formula: str,
    sources: Sequence[str],
    params: Sequence[Param],
    outputs: Sequence[Output],
) -> Callable[[Callable[..., Result]], Callable[..., Result]]:
    """Register a function as the calculator ``name``."""

    def register(function: Callable[..., Result]) -> Callable[..., Result]:
        if name in REGISTRY:
            raise RuntimeError(f"calculator {name!r} registered twice")
        REGISTRY[name] = Calculator(name, title, area, summary, formula, tuple(sources),
                                    tuple(params), tuple(outputs), function)
        return function

    return register


class UnknownCalculator(KeyError):
    def __init__(self, name: str):
        self.name = name
        super().__init__(name)

    def __str__(self) -> str:
        return (f"unknown calculator '{self.name[:60]}'; known calculators: "
                f"{', '.join(sorted(REGISTRY))}")


def get(name: str) -> Calculator:
    try:
        return REGISTRY[name]
    except KeyError:
        raise UnknownCalculator(name) from None


def value_from_text(text: str) -> Any:
    """A value typed as text (CLI argument, form field): JSON where it parses, else the text.

    ``8`` -> 8, ``[1, 2]`` -> [1, 2], ``true`` -> True, ``800MB`` -> "800MB" (read later as
    a quantity by the parameter that receives it).
    """
    stripped = text.strip()
    if len(stripped) > 100_000:
        return stripped
    try:
        return json.loads(stripped)
    except ValueError:
        return stripped


# ---------------------------------------------------------------------------- helpers


def _show(raw: Any) -> str:
    text = repr(raw) if not isinstance(raw, str) else f"'{raw}'"
    return text if len(text) <= 40 else text[:37] + "..."


def _finite(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(_finite(v) for v in value)
    return True


def _boolean(raw: Any) -> bool:
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, int) and raw in (0, 1):
        return bool(raw)
    if isinstance(raw, str) and raw.strip().lower() in ("true", "false", "yes", "no", "1", "0"):
        return raw.strip().lower() in ("true", "yes", "1")
    raise BadValue(f"expected true or false, got {_show(raw)}")


def _items(raw: Any) -> list[Any]:
    if not isinstance(raw, (list, tuple)):
        raise BadValue(f"expected a list, got {_show(raw)}")
    if not raw:
        raise BadValue("must not be empty")
    if len(raw) > MAX_LIST_ITEMS:
        raise BadValue(f"has {len(raw)} items; at most {MAX_LIST_ITEMS}")
    return list(raw)


def _vectors(raw: Any, number: Callable[[Any, str], float]) -> list[list[float]]:
    """A list of equal-length vectors; a list of plain numbers is a list of 1-vectors."""
    rows = _items(raw)
    vectors = [[number(x, f"rank {r} item {i}") for i, x in enumerate(_items(row))]
               if isinstance(row, (list, tuple)) else [number(row, f"rank {r}")]
               for r, row in enumerate(rows)]
    if sum(len(v) for v in vectors) > MAX_LIST_ITEMS:
        raise BadValue(f"has more than {MAX_LIST_ITEMS} numbers in all")
    if len({len(v) for v in vectors}) > 1:
        raise BadValue("every rank's vector must have the same length")
    return vectors
