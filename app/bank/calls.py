"""Running a question's calculator calls and comparing numbers with a tolerance.

Shared by ``bank check`` and, later, the grader: both must agree on what "the
calculator reproduces this value" means.
"""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Iterator, Mapping
from typing import Any

from app.bank.schema import CalculatorCall, QuestionFile, Tolerance
from app.calculator import get
from app.calculator.units import DIMENSIONS, parse
from app.lru import LRU

MAX_VARIANT_COMBINATIONS = 256


class CallError(ValueError):
    """A calculator call that cannot run or does not give a number."""


# Calculators are pure: a call with the same parameters gives the same number, and the
# grader and the bank check ask for the same calls again and again.
_VALUES: LRU[float] = LRU(8192)


def evaluate_call(call: CalculatorCall, overrides: Mapping[str, Any] | None = None) -> float:
    """The call's output times its factor; ``overrides`` replace params the call has."""
    key = json.dumps([call.name, call.output, call.factor, call.params, overrides],
                     sort_keys=True, default=str)
    found = _VALUES.get(key)
    return found if found is not None else _VALUES.put(key, _evaluate(call, overrides))


def _evaluate(call: CalculatorCall, overrides: Mapping[str, Any] | None) -> float:
    try:
        calculator = get(call.name)
    except KeyError as exc:
        raise CallError(str(exc)) from None
    name, index = split_output(call.output)
    if name not in {o.name for o in calculator.outputs}:
        raise CallError(f"{call.name} has no output '{name}'; outputs are "
                        f"{', '.join(o.name for o in calculator.outputs)}")
    params = dict(call.params)
    for key, value in (overrides or {}).items():
        if key in params:
            params[key] = value
    try:
        outputs = calculator.evaluate(params).outputs
    except ValueError as exc:
        raise CallError(f"{call.name}: {exc}") from None
    if name not in outputs:
        raise CallError(f"{call.name} gives no '{name}' for these parameters")
    value = outputs[name]
    if index is not None:
        if not isinstance(value, list) or index >= len(value):
            raise CallError(f"{call.name}.{name} has no item [{index}]")
        value = value[index]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise CallError(f"{call.name}.{call.output} is not a number")
    return float(value) * call.factor


def split_output(output: str) -> tuple[str, int | None]:
    """``synced_grad[0]`` -> ("synced_grad", 0); ``steps`` -> ("steps", None)."""
    name, _, rest = output.partition("[")
    return name, int(rest.rstrip("]")) if rest else None


def output_unit(call: CalculatorCall) -> str | None:
    return get(call.name).output(split_output(call.output)[0]).unit


def parse_value(value: Any, unit: str | None) -> float:
    """A stated value ('1.4 GB', 14, '1.75') in the base unit of a calculator output."""
    dimension = DIMENSIONS.get(unit) if unit else None
    if unit and dimension is None:
        raise ValueError(f"output unit {unit} cannot be compared")
    if isinstance(value, bool):
        raise ValueError("is a boolean, not a number")
    if isinstance(value, (int, float)):
        return float(value)
    return parse(str(value), dimension)


def within(candidate: float, expected: float, tolerance: Tolerance) -> bool:
    """Moodle's tolerance semantics."""
    t = tolerance.value
    if tolerance.type == "absolute":
        return abs(candidate - expected) <= t
    if tolerance.type == "relative":
        return abs(candidate - expected) <= t * abs(expected)
    if expected == 0:
        return candidate == 0
    low, high = sorted((expected / (1 + t), expected * (1 + t)))
    return low <= candidate <= high


def variant_combinations(question: QuestionFile) -> Iterator[dict[str, Any]]:
    """Every combination of variant values (a fixed sample when there are too many)."""
    keys = sorted(question.variants)
    combos = list(itertools.product(*(question.variants[k] for k in keys)))
    if len(combos) > MAX_VARIANT_COMBINATIONS:
        # A sample that is the same on every run, so a check is reproducible.
        combos = random.Random(question.id).sample(combos, MAX_VARIANT_COMBINATIONS)  # noqa: S311
    for combo in combos:
        yield dict(zip(keys, combo, strict=True))


def draw_variant(question: QuestionFile, rng: random.Random) -> dict[str, Any]:
    """One random set of new numbers."""
    return {key: rng.choice(values) for key, values in sorted(question.variants.items())}


def shown_params(question: QuestionFile, draw: dict[str, Any]) -> dict[str, Any]:
    """The answer calculator's parameters with the variant applied (for the prompt)."""
    if question.answer is None:
        return {}
    return {**question.answer.calculator.params, **draw}
