"""The home page."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import Response

from app.calculator import calculators
from app.deps import SessionDep
from app.questions.repository import bank_figures
from app.web.templating import render

router = APIRouter(include_in_schema=False)


@router.get("/", name="home")
def home(request: Request, session: SessionDep) -> Response:
    """What Ringside is, where to start, and how big the bank is."""
    return render(request, "home.html", {"calculators": calculators(),
                                         "figures": bank_figures(session)})
