"""Ringside's calculator: every formula behind a numeric answer, in pure Python.

No web, template or database import is allowed here (a test checks it): the CLI, the
HTTP API, the pages, the bank check and the grader all call into this package.

    >>> from app.calculator import run
    >>> run("collective", op="all-reduce", world_size=8, message_bytes=800e6)["steps"]
    14
"""

from __future__ import annotations

from typing import Any

# Importing the modules registers their calculators.
from app.calculator import (  # noqa: F401
    collectives,
    compute,
    ddp,
    fault_tolerance,
    memory,
    parallel_comm,
    pipeline,
    unit_conversion,
)
from app.calculator.registry import (
    REGISTRY,
    Calculator,
    Evaluation,
    InputError,
    Problem,
    UnknownCalculator,
    get,
)

__all__ = [
    "Calculator",
    "Evaluation",
    "InputError",
    "Problem",
    "UnknownCalculator",
    "calculators",
    "evaluate",
    "get",
    "run",
]


def calculators() -> list[Calculator]:
    """Every calculator, in a stable order (by area, then name)."""
    return sorted(REGISTRY.values(), key=lambda c: (c.area, c.name))


def evaluate(name: str, params: dict[str, Any]) -> Evaluation:
    """Validate ``params`` (numbers or text with units) and run the calculator ``name``."""
    return get(name).evaluate(params)


def run(name: str, /, **params: Any) -> dict[str, Any]:
    """Run a calculator and return its outputs, e.g. ``run("mfu", params=..., ...)``."""
    return evaluate(name, params).outputs
