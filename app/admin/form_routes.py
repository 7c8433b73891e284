"""htmx pieces of the structured authoring form: a new row, a calculator's parameters.

GET only, nothing stored: each returns a bit of HTML the form swaps in place.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import Response

from app.admin import form
from app.bank.schema import LANGUAGES
from app.calculator.registry import REGISTRY
from app.deps import EditorUser
from app.web.templating import render

router = APIRouter(prefix="/questions/form", include_in_schema=False)  # under /admin
PARTS = ("mistake", "choice", "rubric", "spoken", "follow_up")


def _fragment(request: Request, **context: object) -> Response:
    response = render(request, "admin/form_fragment.html", {
        "calculators": sorted(REGISTRY.values(), key=lambda c: c.name),
        "languages": LANGUAGES, **context})
    response.headers["Cache-Control"] = "no-store"
    return response


@router.get("/row", name="admin:question_form_row")
def new_row(request: Request, user: EditorUser) -> Response:
    """An empty mistake, choice, rubric, spoken or linked follow-up row, with its texts in
    every language."""
    part = request.query_params.get("type", "")
    if part not in PARTS:
        return Response(status_code=404)
    row = form.empty_row(part) if part != "follow_up" else {"row": form.new_row_id()}
    return _fragment(request, part=part, row=row)


@router.get("/calculator", name="admin:question_form_calculator")
def calculator_params(request: Request, user: EditorUser) -> Response:
    """The parameters (from the registry) and outputs of the chosen answer calculator."""
    name = request.query_params.get("answer.calculator", "")[:80]
    answer = {"calculator": name, "output": "", "factor": "", "params": {},
              "other_params": ""}
    return _fragment(request, part="calculator", calc=REGISTRY.get(name), answer=answer)


@router.get("/remove", name="admin:question_form_remove")
def remove(user: EditorUser) -> Response:
    """Nothing: the button that asks swaps its row out (hx-swap="delete")."""
    return Response("", media_type="text/html", headers={"Cache-Control": "no-store"})
