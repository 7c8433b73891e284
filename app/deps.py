"""Typed dependencies shared by routes."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, HTTPException, Request
from sqlalchemy.orm import Session
from starlette.datastructures import FormData

from app.accounts.models import User
from app.db import get_session

# scope="function": commit before the response leaves, so the page a redirect leads to
# (often requested at once) sees what the request wrote.
SessionDep = Annotated[Session, Depends(get_session, scope="function")]


async def submitted_form(request: Request) -> FormData:
    """The posted form, read on the event loop so that the route itself can be a plain
    ``def``: FastAPI runs those in its threadpool, and database calls (or Argon2) made
    from an ``async def`` route would block every other request meanwhile."""
    return await request.form()


FormDep = Annotated[FormData, Depends(submitted_form)]


async def current_lang(request: Request) -> str:  # async: no thread for a lookup
    return str(request.state.lang)


LangDep = Annotated[str, Depends(current_lang)]


class SignInRequired(Exception):
    """Raised by page guards: the handler redirects to /login and back afterwards."""

    def __init__(self, next_path: str) -> None:
        self.next_path = next_path


def session_cookie_name(request: Request) -> str:
    """``__Host-`` prefix under HTTPS (Secure, no Domain, Path=/); plain name on http."""
    return "__Host-ringside_session" if request.url.scheme == "https" else "ringside_session"


def current_user(request: Request, session: SessionDep) -> User | None:
    from app.accounts.service import session_user

    return session_user(session, request.cookies.get(session_cookie_name(request)))


def _require(role: str | None) -> Any:
    async def guard(request: Request, user: Annotated[User | None, Depends(current_user)]
                    ) -> User:
        if user is None:
            if request.method == "GET":
                raise SignInRequired(request.url.path)
            raise HTTPException(401, "Sign in first.")
        request.state.user_id = user.id  # for the request's log line
        if role is not None and user.role != role:
            raise HTTPException(403, "Your account cannot do this.")
        return user

    return guard


EditorUser = Annotated[User, Depends(_require(None))]  # editors and admins
AdminUser = Annotated[User, Depends(_require("admin"))]
