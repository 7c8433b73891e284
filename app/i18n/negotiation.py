"""Which language a request gets: ?lang=, then the cookie, then Accept-Language."""

from __future__ import annotations

import langcodes
from starlette.requests import HTTPConnection

from app.i18n import DEFAULT_LANGUAGE, LANGUAGES, current_language

COOKIE = "lang"
MAX_HEADER_ITEMS = 20


def parse_accept_language(header: str) -> list[str]:
    """Language tags by decreasing q-value (ties keep their order); q=0 means 'not this'."""
    weighted = []
    for position, item in enumerate(header.split(",")[:MAX_HEADER_ITEMS]):
        tag, _, params = item.strip().partition(";")
        quality = 1.0
        for param in params.split(";"):
            key, _, value = param.strip().partition("=")
            if key == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        if tag and tag != "*" and quality > 0:
            weighted.append((-quality, position, tag.strip()))
    return [tag for _, _, tag in sorted(weighted)]


def match(tag: str) -> str | None:
    """The supported language closest to ``tag``: fr-CA → fr; zh-TW → zh (the only Chinese)."""
    if tag in LANGUAGES:
        return tag
    try:
        best = langcodes.closest_supported_match(tag, list(LANGUAGES))
        return best or (langcodes.Language.get(tag).language if
                        langcodes.Language.get(tag).language in LANGUAGES else None)
    except (ValueError, LookupError):
        return None


def negotiate(connection: HTTPConnection) -> str:
    requested = connection.query_params.get("lang")
    if requested in LANGUAGES:
        return requested
    cookie = connection.cookies.get(COOKIE)
    if cookie in LANGUAGES:
        return cookie
    for tag in parse_accept_language(connection.headers.get("accept-language", "")):
        found = match(tag)
        if found:
            return found
    return DEFAULT_LANGUAGE


class LanguageMiddleware:
    """Sets the request's language for gettext and templates; responses vary with it."""

    def __init__(self, app: object) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: object, send: object) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)  # type: ignore[operator]
            return
        lang = negotiate(HTTPConnection(scope))
        scope.setdefault("state", {})["lang"] = lang
        token = current_language.set(lang)

        async def send_with_vary(message: dict) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers.append((b"vary", b"Accept-Language, Cookie"))
                headers.append((b"content-language", lang.encode()))
                message["headers"] = headers
            await send(message)  # type: ignore[operator]

        try:
            await self.app(scope, receive, send_with_vary)  # type: ignore[operator]
        finally:
            current_language.reset(token)
