"""Structured logs: one JSON object per line, each with the request id.

``configure_logging`` routes the ``ringside`` loggers (and uvicorn's) through structlog,
so ``log.info("sign_in", user_id=3)`` and ``logging.getLogger(...).exception(...)`` both
come out as JSON with a UTC timestamp. ``RequestLogMiddleware`` gives every request an id
(kept from a well-formed ``X-Request-ID`` header, else new), sends it back in the response
and writes one line per request; unsafe requests under ``/admin`` are logged as admin
actions with the user who made them. Secrets never reach a line: fields whose name says
password, token, secret or cookie are replaced before rendering.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import time
import uuid
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import IO, Any

import structlog
from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = structlog.get_logger("ringside")

_SECRET_FIELD = re.compile(r"password|token|secret|cookie|authorization", re.IGNORECASE)
_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
UNSAFE_METHODS = {"POST", "PUT", "PATCH", "DELETE"}
# Tracebacks as data, without the frames' local variables (they can hold a password).
_EXCEPTIONS = structlog.processors.ExceptionRenderer(
    structlog.tracebacks.ExceptionDictTransformer(show_locals=False))


# The request a line belongs to: (request id, client address), added to every line.
_REQUEST: ContextVar[tuple[str, str | None] | None] = ContextVar("ringside_request",
                                                                 default=None)
# Set by configure_logging when lines are JSON: the request line is written straight to
# it, the same object structlog would write, without the processor chain.
_JSON_HANDLER: logging.Handler | None = None
_LOGGER = logging.getLogger("ringside")


def _add_request(_logger: Any, _name: str, event: dict[str, Any]) -> dict[str, Any]:
    current = _REQUEST.get()
    if current is not None:
        event.setdefault("request_id", current[0])
        event.setdefault("ip", current[1])
    return event


def _redact(_logger: Any, _name: str, event: dict[str, Any]) -> dict[str, Any]:
    for key in list(event):
        if _SECRET_FIELD.search(key):
            event[key] = "[redacted]"
    return event


def configure_logging(fmt: str = "json", level: str = "INFO",
                      stream: IO[str] | None = None) -> None:
    """Set up structlog and the stdlib loggers it feeds; safe to call again (tests do)."""
    global _JSON_HANDLER
    timestamper = structlog.processors.TimeStamper(fmt="iso", utc=True)
    pre_chain: list[Any] = [_add_request, structlog.stdlib.add_log_level,
                            structlog.stdlib.add_logger_name, timestamper]
    renderer: Any = (structlog.processors.JSONRenderer() if fmt == "json"
                     else structlog.dev.ConsoleRenderer(colors=False))
    structlog.configure(
        processors=[*pre_chain, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=False,
    )
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=pre_chain,
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, _redact,
                    _EXCEPTIONS if fmt == "json" else structlog.processors.format_exc_info,
                    renderer]))
    for name in ("ringside", "uvicorn", "uvicorn.error"):
        logger = logging.getLogger(name)
        logger.handlers = [handler]
        logger.setLevel(level.upper())
        logger.propagate = False
    _JSON_HANDLER = handler if fmt == "json" else None
    # Our middleware writes one line per request; uvicorn's access log would repeat it.
    logging.getLogger("uvicorn.access").disabled = True


class RequestLogMiddleware:
    """A request id for every request, and one log line per request."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = dict(scope.get("headers", [])).get(b"x-request-id", b"").decode("latin-1")
        request_id = given if _REQUEST_ID.match(given) else uuid.uuid4().hex
        state = scope.setdefault("state", {})
        state["request_id"] = request_id
        client = scope.get("client")
        context = _REQUEST.set((request_id, client[0] if client else None))
        started = time.perf_counter()
        status = 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message["headers"] = [*message.get("headers", []),
                                      (b"x-request-id", request_id.encode())]
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            method, path = scope["method"], scope["path"]
            fields = {"method": method, "path": path, "status": status,
                      "duration_ms": round((time.perf_counter() - started) * 1000, 2),
                      "user_id": state.get("user_id")}
            if method in UNSAFE_METHODS and path.startswith("/admin"):
                log.info("admin_action", **fields)
            elif path not in ("/healthz", "/readyz"):
                _request_line(fields)
            _REQUEST.reset(context)


def _request_line(fields: dict[str, Any]) -> None:
    """The line of an ordinary request: the same JSON as ``log.info("request", ...)``,
    written without structlog's chain (which costs as much as serving a cached page)."""
    handler = _JSON_HANDLER
    if handler is None or not isinstance(handler, logging.StreamHandler):
        log.info("request", **fields)
        return
    if not _LOGGER.isEnabledFor(logging.INFO):
        return
    current = _REQUEST.get() or (None, None)
    line = json.dumps({**fields, "event": "request", "request_id": current[0],
                       "ip": current[1], "level": "info", "logger": "ringside",
                       "timestamp": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")})
    handler.acquire()
    try:
        handler.stream.write(line + "\n")
        handler.flush()
    finally:
        handler.release()
