"""Pictures drawn on the server: plain data here, SVG markup in templates/pictures/.

Each calculator with a picture has a builder that takes the calculator's
:class:`~app.calculator.Evaluation` and returns :class:`Figure` records whose numbers
come from that evaluation (or from runs of the same calculator with one parameter
changed). Pages render them with ``templates/pictures/figure.html``; the calculator page
draws them for its result, a question for the parameters the candidate was shown.

    collective          steps of the chosen algorithm (small multiples of a ring of
                        ranks), the algorithms compared, bytes and time over world sizes
    model-memory        stacked bars per device for ZeRO stages 0-3 (+ activations)
    activation-memory   bars per recomputation policy
    pipeline-bubble     the schedule as a timeline of forward, backward and idle cells

Recorded experiments have pictures of their own (app/pictures/experiments.py), drawn from
the recording with the calculator's figures beside the measured ones.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from app.calculator import InputError, UnknownCalculator, get
from app.calculator.registry import Evaluation, Param
from app.calculator.units import BYTES
from app.i18n import N_
from app.pictures import collective, memory, pipeline
from app.pictures.common import Figure, Table
from app.pictures.progress import topic_bars, trend

__all__ = ["EXTRA_PARAMS", "Figure", "Table", "for_call", "for_evaluation", "has_pictures",
           "topic_bars", "trend"]

Builder = Callable[[Evaluation, str, Mapping[str, Any]], list[Figure]]

BUILDERS: dict[str, Builder] = {
    "collective": lambda e, prefix, _extra: collective.figures(e, prefix),
    "model-memory": lambda e, prefix, extra: [memory.model_memory_figure(
        e, prefix, extra.get("activation_bytes"))],
    "activation-memory": lambda e, prefix, _extra: [memory.activation_figure(e, prefix)],
    "pipeline-bubble": lambda e, prefix, _extra: [pipeline.pipeline_figure(e, prefix)],
}

# Inputs a page can take for its picture only (the calculator does not know them).
EXTRA_PARAMS: dict[str, tuple[Param, ...]] = {
    "model-memory": (
        Param("activation_bytes", "number", N_("Optional, for the picture only: activation "
              "bytes per device (from the activation-memory calculator), stacked on every "
              "bar."), unit=BYTES, default=None, minimum=0, maximum=1e18),
    ),
}


def has_pictures(name: str) -> bool:
    return name in BUILDERS


def for_evaluation(evaluation: Evaluation, prefix: str = "pic",
                   extra: Mapping[str, Any] | None = None) -> list[Figure]:
    """The pictures of a calculator result (none for calculators without one)."""
    builder = BUILDERS.get(evaluation.calculator.name)
    return builder(evaluation, prefix, extra or {}) if builder else []


def for_call(name: str, params: Mapping[str, Any], prefix: str = "pic",
             extra: Mapping[str, Any] | None = None) -> list[Figure]:
    """Run the calculator ``name`` on ``params`` and draw its result ([] if it cannot run)."""
    if name not in BUILDERS:
        return []
    try:
        evaluation = get(name).evaluate(params)
    except (InputError, UnknownCalculator):
        return []
    return for_evaluation(evaluation, prefix, extra)
