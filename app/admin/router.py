"""The admin area: every route here needs a signed-in editor or admin."""

from __future__ import annotations

from fastapi import APIRouter, Request
from sqlalchemy import func, select
from starlette.responses import Response

from app.accounts.models import User
from app.bank.schema import LANGUAGES, SENIORITIES, TOPICS
from app.deps import AdminUser, EditorUser, SessionDep
from app.questions.models import Question, QuestionTranslation
from app.web.templating import render

router = APIRouter(prefix="/admin", include_in_schema=False)


def _private(response: Response) -> Response:
    response.headers["Cache-Control"] = "no-store"
    return response


@router.get("", name="admin:dashboard")
def dashboard(request: Request, session: SessionDep, user: EditorUser) -> Response:
    """Bank coverage: topic × seniority, and questions per language."""
    live = Question.deleted_at.is_(None)
    grid: dict[tuple[str, str], int] = {
        (topic, seniority): n for topic, seniority, n in session.execute(
            select(Question.topic, Question.seniority, func.count()).where(live)
            .group_by(Question.topic, Question.seniority))}
    total = sum(grid.values())
    per_language = dict(session.execute(
        select(QuestionTranslation.lang, func.count()).join(Question).where(live)
        .group_by(QuestionTranslation.lang)).all())
    return _private(render(request, "admin/dashboard.html", {
        "user": user, "grid": grid, "topics": TOPICS, "seniorities": SENIORITIES,
        "languages": LANGUAGES, "per_language": per_language, "total": total}))


@router.get("/users", name="admin:users")
def users(request: Request, session: SessionDep, user: AdminUser) -> Response:
    """Accounts (admins only)."""
    accounts = session.scalars(select(User).order_by(User.email)).all()
    return _private(render(request, "admin/users.html", {"user": user, "accounts": accounts}))
