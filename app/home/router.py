"""The home page."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import Response

from app.calculator import calculators
from app.web.templating import render

router = APIRouter(include_in_schema=False)


@router.get("/", name="home")
def home(request: Request) -> Response:
    """What Ringside is, and where to start."""
    return render(request, "home.html", {"calculators": calculators()})
