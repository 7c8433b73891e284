"""Error pages and JSON errors: a clear message, never a traceback."""

from __future__ import annotations

from urllib.parse import quote

import structlog
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, RedirectResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.deps import SignInRequired
from app.i18n import _
from app.web.templating import render

log = structlog.get_logger("ringside")


def _wants_json(request: Request) -> bool:
    return request.url.path.startswith("/api/")


def install(app: FastAPI) -> None:
    @app.exception_handler(SignInRequired)
    async def sign_in(request: Request, exc: SignInRequired) -> Response:
        return RedirectResponse(f"/login?next={quote(exc.next_path)}", status_code=303)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        if _wants_json(request):
            return JSONResponse({"detail": exc.detail}, status_code=exc.status_code,
                                headers=getattr(exc, "headers", None))
        response = render(request, "errors/error.html",
                          {"status": exc.status_code, "message": exc.detail},
                          block="content", status_code=exc.status_code)
        response.headers.update(getattr(exc, "headers", None) or {})  # Retry-After, Allow...
        return response

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> Response:
        detail = [{"loc": list(e.get("loc", [])), "msg": e.get("msg", ""), "type": e.get("type")}
                  for e in exc.errors()]
        if _wants_json(request):
            return JSONResponse({"detail": detail}, status_code=422)
        message = "; ".join(f"{'.'.join(map(str, d['loc'][1:]))}: {d['msg']}" for d in detail)
        return render(request, "errors/error.html", {"status": 422, "message": message},
                      block="content", status_code=422)


def unexpected_error_response(request: Request) -> Response:
    message = _("Something went wrong on our side. The error has been logged.")
    if _wants_json(request):
        return JSONResponse({"detail": message}, status_code=500)
    return render(request, "errors/error.html", {"status": 500, "message": message},
                  block="content", status_code=500)


class UnexpectedErrorMiddleware:
    """The generic error page for an unhandled exception, answered from inside the other
    middleware so it still carries the security headers and the request id, and logged
    with that request id. (An ``Exception`` handler would run in Starlette's outermost
    ServerErrorMiddleware, after those had gone.)"""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def send_tracking(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, send_tracking)
        except Exception:
            log.exception("unhandled_error", method=scope["method"], path=scope["path"])
            if started:
                raise
            await unexpected_error_response(Request(scope))(scope, receive, send)
