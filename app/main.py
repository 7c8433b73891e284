"""The ASGI application: ``uvicorn app.main:app``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import Depends, FastAPI
from fastapi.staticfiles import StaticFiles
from starlette.middleware.gzip import GZipMiddleware
from starlette.middleware.trustedhost import TrustedHostMiddleware

from app.accounts.router import router as accounts_router
from app.admin.router import router as admin_router
from app.api.docs import router as api_docs_router
from app.api.questions import router as api_questions_router
from app.api.v1 import router as api_router
from app.calculator_pages.router import router as calculator_pages_router
from app.config import ROOT, get_settings
from app.experiments.router import router as experiments_router
from app.health import router as health_router
from app.home.router import router as home_router
from app.i18n.negotiation import LanguageMiddleware
from app.i18n.router import router as language_router
from app.logs import RequestLogMiddleware, configure_logging
from app.practice.router import router as practice_router
from app.questions.router import router as questions_router
from app.web import errors
from app.web.csrf import CsrfCookieMiddleware, csrf_protect
from app.web.errors import UnexpectedErrorMiddleware
from app.web.security import SecurityHeadersMiddleware


@asynccontextmanager
async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
    settings = get_settings()
    if settings.warm_up if settings.warm_up is not None else settings.env == "production":
        from app.warmup import warm_up

        warm_up()
    yield


def create_app() -> FastAPI:
    settings = get_settings()
    configure_logging(settings.log_format, settings.log_level)
    app = FastAPI(
        title="Ringside",
        summary="Interview practice for distributed deep-learning training: calculators API.",
        version="1",
        debug=False,
        openapi_url="/api/v1/openapi.json",
        docs_url=None,  # app/api/docs.py serves it under the CSP
        redoc_url=None,
        dependencies=[Depends(csrf_protect)],
        lifespan=lifespan,
    )
    # Last added runs first: the request log and id wrap everything, then compression,
    # headers, hosts, language, CSRF cookie; unexpected errors are answered innermost so
    # their page still goes through all of these.
    app.add_middleware(UnexpectedErrorMiddleware)
    app.add_middleware(CsrfCookieMiddleware)
    app.add_middleware(LanguageMiddleware)
    app.add_middleware(TrustedHostMiddleware, allowed_hosts=settings.allowed_hosts)
    app.add_middleware(SecurityHeadersMiddleware)
    app.add_middleware(GZipMiddleware, minimum_size=1000)
    app.add_middleware(RequestLogMiddleware)
    errors.install(app)
    app.mount("/static", StaticFiles(directory=ROOT / "static"), name="static")
    app.include_router(health_router)
    app.include_router(home_router)
    app.include_router(questions_router)
    app.include_router(calculator_pages_router)
    app.include_router(experiments_router)
    app.include_router(practice_router)
    app.include_router(accounts_router)
    app.include_router(admin_router)
    app.include_router(language_router)
    app.include_router(api_router)
    app.include_router(api_docs_router)
    app.include_router(api_questions_router)
    return app


app = create_app()
