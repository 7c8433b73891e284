"""Typed dependencies shared by routes."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from sqlalchemy.orm import Session

from app.db import get_session

# scope="function": commit before the response leaves, so the page a redirect leads to
# (often requested at once) sees what the request wrote.
SessionDep = Annotated[Session, Depends(get_session, scope="function")]


def current_lang(request: Request) -> str:
    return str(request.state.lang)


LangDep = Annotated[str, Depends(current_lang)]
