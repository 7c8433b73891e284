"""Liveness and readiness for orchestrators and load balancers.

``/healthz`` answers as long as the process serves requests. ``/readyz`` answers 200 only
when the database is reachable, its schema is at the newest migration and the question
bank has been loaded; otherwise 503 naming what is not ready.
"""

from __future__ import annotations

from functools import cache

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from sqlalchemy import func, select, text
from sqlalchemy.exc import SQLAlchemyError

from app.config import ROOT
from app.deps import SessionDep
from app.questions.models import Question

router = APIRouter(include_in_schema=False)


@cache
def migration_heads() -> frozenset[str]:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    return frozenset(ScriptDirectory.from_config(
        Config(toml_file=ROOT / "pyproject.toml")).get_heads())


@router.get("/healthz", name="healthz")
def healthz() -> JSONResponse:
    return JSONResponse({"status": "ok"}, headers={"Cache-Control": "no-store"})


@router.get("/readyz", name="readyz")
def readyz(session: SessionDep) -> JSONResponse:
    checks: dict[str, str] = {}
    try:
        session.execute(text("SELECT 1"))
        checks["database"] = "ok"
    except SQLAlchemyError as exc:
        checks["database"] = f"unreachable: {type(exc).__name__}"
    if checks["database"] == "ok":
        try:
            current = set(session.scalars(text("SELECT version_num FROM alembic_version")))
        except SQLAlchemyError:
            session.rollback()
            current = set()
        heads = migration_heads()
        checks["migrations"] = "ok" if current == heads else (
            f"at {', '.join(sorted(current)) or 'nothing'}; head is {', '.join(sorted(heads))}"
            " (run: ringside db upgrade)")
        if checks["migrations"] == "ok":
            published = session.scalar(select(func.count()).select_from(Question)
                                       .where(Question.public()))
            checks["bank"] = "ok" if published else "no question loaded (run: ringside bank load)"
    ready = all(v == "ok" for v in checks.values()) and len(checks) == 3
    return JSONResponse({"status": "ready" if ready else "not ready", "checks": checks},
                        status_code=200 if ready else 503,
                        headers={"Cache-Control": "no-store"})
