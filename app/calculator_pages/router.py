"""A page per calculator: a form, and the result with its worked formula.

Parameters travel in the query string, so a result is a link: questions link to
``/calculators/collective?op=all-reduce&world_size=8&message_bytes=800MB`` and the
page opens with that case computed and drawn (app/pictures). htmx swaps only the result
block, pictures included, as the parameters change.
"""

from __future__ import annotations

from itertools import groupby

from fastapi import APIRouter, HTTPException, Request
from starlette.responses import Response

from app import pictures
from app.calculator import InputError, calculators, get
from app.calculator.registry import BadValue, Calculator, UnknownCalculator, value_from_text
from app.i18n import _
from app.web.templating import drawn, render, shared_page

router = APIRouter(prefix="/calculators", include_in_schema=False)


@router.get("", name="calculators:index")
def index(request: Request) -> Response:
    """Every calculator, grouped by area."""
    areas = [(area, list(items)) for area, items in groupby(calculators(), key=lambda c: c.area)]
    return render(request, "calculators/index.html", {"areas": areas})


@router.get("/{name}", name="calculators:detail")
async def detail(request: Request, name: str) -> Response:
    """The form; with parameters in the query string, the result too: a page that
    depends only on its URL and language, computed and drawn once per worker."""
    try:
        calculator = get(name)
    except UnknownCalculator as exc:
        raise HTTPException(404, str(exc)) from None
    return await shared_page(request, "calculators/detail.html",
                             lambda: _context(request, calculator), block="result")


def _context(request: Request, calculator: Calculator) -> tuple[dict[str, object], int]:
    name = calculator.name
    extra_params = pictures.EXTRA_PARAMS.get(name, ())
    known = {p.name for p in calculator.params}
    extra_names = {p.name for p in extra_params}
    submitted = {k: v for k, v in request.query_params.items()
                 if k in known | extra_names and v.strip()}
    context: dict[str, object] = {"calculator": calculator, "values": submitted,
                                  "extra_params": extra_params, "evaluation": None,
                                  "pictures_html": "", "errors": {}}
    status = 200
    given = {k: v for k, v in submitted.items() if k in known}
    if given:
        errors: dict[str, str] = {}
        extra: dict[str, object] = {}
        for param in extra_params:  # inputs for the picture only
            if param.name in submitted:
                try:
                    extra[param.name] = param.coerce(value_from_text(submitted[param.name]))
                except BadValue as exc:
                    errors[param.name] = str(exc)
        try:
            evaluation = calculator.evaluate({k: value_from_text(v) for k, v in given.items()})
        except InputError as exc:
            errors = {p.param: p.message for p in exc.problems} | errors
        if errors:
            context["errors"] = errors
            status = 422
        else:
            context["evaluation"] = evaluation
            context["pictures_html"] = drawn(name, evaluation.params, "calc", _("Pictures"), extra)
    return context, status
