"""A page per calculator: a form, and the result with its worked formula.

Parameters travel in the query string, so a result is a link: questions link to
``/calculators/collective?op=all-reduce&world_size=8&message_bytes=800MB`` and the
page opens with that case computed. htmx swaps only the result block.
"""

from __future__ import annotations

from itertools import groupby

from fastapi import APIRouter, HTTPException, Request
from starlette.responses import Response

from app.calculator import InputError, calculators, get
from app.calculator.registry import UnknownCalculator, value_from_text
from app.web.templating import render

router = APIRouter(prefix="/calculators", include_in_schema=False)


@router.get("", name="calculators:index")
def index(request: Request) -> Response:
    """Every calculator, grouped by area."""
    areas = [(area, list(items)) for area, items in groupby(calculators(), key=lambda c: c.area)]
    return render(request, "calculators/index.html", {"areas": areas})


@router.get("/{name}", name="calculators:detail")
def detail(request: Request, name: str) -> Response:
    """The form; with parameters in the query string, the result too."""
    try:
        calculator = get(name)
    except UnknownCalculator as exc:
        raise HTTPException(404, str(exc)) from None
    known = {p.name for p in calculator.params}
    submitted = {k: v for k, v in request.query_params.items() if k in known and v.strip()}
    context: dict[str, object] = {"calculator": calculator, "values": submitted,
                                  "evaluation": None, "errors": {}}
    status = 200
    if submitted:
        try:
            context["evaluation"] = calculator.evaluate(
                {k: value_from_text(v) for k, v in submitted.items()})
        except InputError as exc:
            context["errors"] = {p.param: p.message for p in exc.problems}
            status = 422
    return render(request, "calculators/detail.html", context, block="result",
                  status_code=status)
