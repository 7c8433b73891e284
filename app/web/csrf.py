"""Cross-site request forgery: refuse cross-site unsafe requests, and require a token.

Two layers (SECURITY.md items 7-8): the browser's ``Sec-Fetch-Site`` (or ``Origin``)
must say the request comes from our own pages, and every form post carries the
token from the ``csrftoken`` cookie in a ``csrf_token`` field or an ``X-CSRF-Token``
header (double submit). Pages carry the token masked with a fresh one-time pad, so a
compressed page never repeats the same secret bytes (the BREACH attack needs that);
the raw cookie value is accepted too. The JSON API under ``/api/`` is stateless and uses no
cookies, so it only gets the first layer.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import secrets

import structlog
from fastapi import HTTPException, Request
from starlette.requests import HTTPConnection
from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = structlog.get_logger("ringside")

COOKIE = "csrftoken"
FIELD = "csrf_token"
HEADER = "x-csrf-token"
SAFE_METHODS = {"GET", "HEAD", "OPTIONS", "TRACE"}
ALLOWED_FETCH_SITES = {"same-origin", "none"}


class CsrfCookieMiddleware:
    """Gives every browser a token cookie, and puts the token where templates find it."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        existing = HTTPConnection(scope).cookies.get(COOKIE, "")
        token = existing if 32 <= len(existing) <= 128 else secrets.token_urlsafe(32)
        scope.setdefault("state", {})["csrf_token"] = mask(token)
        secure = scope.get("scheme") == "https"

        async def send_with_cookie(message: Message) -> None:
            if message["type"] == "http.response.start" and token != existing:
                cookie = f"{COOKIE}={token}; Path=/; HttpOnly; SameSite=Lax"
                message.setdefault("headers", []).append(
                    (b"set-cookie", (cookie + ("; Secure" if secure else "")).encode()))
            await send(message)

        await self.app(scope, receive, send_with_cookie)


def mask(token: str) -> str:
    """The token XOR a random pad, pad first: different bytes in every response."""
    raw = token.encode()
    pad = secrets.token_bytes(len(raw))
    return base64.urlsafe_b64encode(pad + bytes(a ^ b for a, b in zip(raw, pad, strict=True))
                                    ).decode()


def unmask(sent: str) -> str | None:
    try:
        data = base64.urlsafe_b64decode(sent.encode())
    except (binascii.Error, ValueError):
        return None
    half = len(data) // 2
    if len(data) % 2 or not half:
        return None
    return bytes(a ^ b for a, b in zip(data[:half], data[half:], strict=True)).decode("latin-1")


def token_matches(cookie: str, sent: str) -> bool:
    if not cookie or not sent or len(sent) > 512:
        return False
    if hmac.compare_digest(cookie, sent):
        return True
    unmasked = unmask(sent)
    return unmasked is not None and hmac.compare_digest(cookie.encode(), unmasked.encode(
        "latin-1"))


def _same_origin(request: Request) -> bool:
    site = request.headers.get("sec-fetch-site")
    if site is not None:
        return site in ALLOWED_FETCH_SITES
    origin = request.headers.get("origin")
    if origin is None:
        return True  # non-browser clients and old browsers: the token decides
    own = f"{request.url.scheme}://{request.url.netloc}"
    return origin == own


async def csrf_protect(request: Request) -> None:
    """App-wide dependency: checks every unsafe request before its route runs."""
    if request.method in SAFE_METHODS:
        return
    if not _same_origin(request):
        log.warning("csrf_refused", reason="cross-site", path=request.url.path,
                    sec_fetch_site=request.headers.get("sec-fetch-site"),
                    origin=request.headers.get("origin"))
        raise HTTPException(403, "Cross-site request refused.")
    if request.url.path.startswith("/api/"):
        return
    cookie = request.cookies.get(COOKIE, "")
    sent = request.headers.get(HEADER)
    if sent is None:
        content_type = request.headers.get("content-type", "")
        if content_type.startswith(("application/x-www-form-urlencoded", "multipart/form-data")):
            value = (await request.form()).get(FIELD)
            sent = value if isinstance(value, str) else None
    if not token_matches(cookie, sent or ""):
        log.warning("csrf_refused", reason="token", path=request.url.path)
        raise HTTPException(403, "This form has expired or did not come from this site. "
                                 "Reload the page and try again.")
