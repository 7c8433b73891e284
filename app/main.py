"""The ASGI application: ``uvicorn app.main:app``."""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles
from starlette.middleware.trustedhost import TrustedHostMiddleware

from app.api.v1 import router as api_router
from app.calculator_pages.router import router as calculator_pages_router
from app.config import ROOT, get_settings
from app.home.router import router as home_router
from app.web import errors
from app.web.security import SecurityHeadersMiddleware


def create_app() -> FastAPI:
    settings = get_settings()
    app = FastAPI(
        title="Ringside",
        summary="Interview practice for distributed deep-learning training: calculators API.",
        version="1",
        debug=False,
        openapi_url="/api/v1/openapi.json",
        docs_url="/api/v1/docs",
        redoc_url=None,
    )
    app.add_middleware(TrustedHostMiddleware, allowed_hosts=settings.allowed_hosts)
    app.add_middleware(SecurityHeadersMiddleware)
    errors.install(app)
    app.mount("/static", StaticFiles(directory=ROOT / "static"), name="static")
    app.include_router(home_router)
    app.include_router(calculator_pages_router)
    app.include_router(api_router)
    return app


app = create_app()
