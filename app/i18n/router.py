"""The language switcher: a POST that remembers the choice in a cookie."""

from __future__ import annotations

from urllib.parse import urlsplit

from fastapi import APIRouter, Request
from starlette.responses import RedirectResponse, Response

from app.i18n import LANGUAGES
from app.i18n.negotiation import COOKIE

router = APIRouter(include_in_schema=False)
ONE_YEAR = 365 * 24 * 3600


def safe_next(target: str | None) -> str:
    """Only a path on this site: no scheme, no host, no '//' or backslash tricks."""
    if not target or len(target) > 2000:
        return "/"
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or not target.startswith("/") or target.startswith("//") \
            or "\\" in target or any(ord(c) < 32 for c in target):
        return "/"
    return target


@router.post("/language", name="language:set")
async def set_language(request: Request) -> Response:
    form = await request.form()
    lang = form.get("lang")
    target = safe_next(form.get("next") if isinstance(form.get("next"), str) else None)
    # A ?lang= left in the target would override the new choice.
    parts = urlsplit(target)
    query = "&".join(p for p in parts.query.split("&") if p and not p.startswith("lang="))
    response = RedirectResponse(parts.path + (f"?{query}" if query else ""), status_code=303)
    if lang in LANGUAGES:
        response.set_cookie(COOKIE, str(lang), max_age=ONE_YEAR, httponly=True, samesite="lax",
                            secure=request.url.scheme == "https")
    return response
