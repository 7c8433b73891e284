"""The one Jinja2 environment: autoescaped templates whose blocks double as htmx fragments."""

from __future__ import annotations

from typing import Any

from fastapi import Request
from jinja2_fragments.fastapi import Jinja2Blocks
from starlette.responses import Response

from app.calculator.units import format_quantity
from app.config import ROOT
from app.web.htmx import is_partial

templates = Jinja2Blocks(directory=str(ROOT / "templates"))
templates.env.filters["quantity"] = format_quantity
templates.env.globals["static_version"] = "1"


def render(
    request: Request,
    template: str,
    context: dict[str, Any] | None = None,
    *,
    block: str | None = None,
    status_code: int = 200,
) -> Response:
    """Render a whole page, or only ``block`` when htmx asks for a fragment."""
    name = block if block and is_partial(request) else None
    response = templates.TemplateResponse(
        request, template, context or {}, block_name=name, status_code=status_code
    )
    response.headers.append("Vary", "HX-Request")
    return response
