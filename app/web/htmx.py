"""Tell htmx requests for a fragment from full-page loads (htmx 2 and 4 headers)."""

from __future__ import annotations

from fastapi import Request


def is_partial(request: Request) -> bool:
    """True when htmx will swap the response into part of the page.

    htmx 4 says so in ``HX-Request-Type``; htmx 2 only sends ``HX-Request`` and marks
    history restores (which need the whole page) with ``HX-History-Restore-Request``.
    """
    request_type = request.headers.get("HX-Request-Type")
    if request_type is not None:
        return request_type == "partial"
    return (request.headers.get("HX-Request") == "true"
            and request.headers.get("HX-History-Restore-Request") != "true")
