"""The anonymous candidate profile of a request: its cookie, found or created."""

from __future__ import annotations

from fastapi import Request
from sqlalchemy.orm import Session
from starlette.responses import Response

from app.practice import service
from app.practice.models import Profile

ONE_YEAR = 365 * 24 * 3600


def profile_of(request: Request, session: Session) -> Profile | None:
    return service.find_profile(session, request.cookies.get(service.PROFILE_COOKIE))


def ensure_profile(request: Request, session: Session) -> tuple[Profile, str | None]:
    """The request's profile, or a new one with the token its cookie must carry."""
    profile = profile_of(request, session)
    if profile is not None:
        return profile, None
    return service.new_profile(session)


def set_profile_cookie(request: Request, response: Response, token: str | None) -> None:
    if token:
        response.set_cookie(service.PROFILE_COOKIE, token, max_age=ONE_YEAR, httponly=True,
                            samesite="lax", secure=request.url.scheme == "https")
