"""/api/v1/docs: Swagger UI served from our origin, so it runs under the strict CSP.

FastAPI's default page loads Swagger UI from a CDN and starts it with an inline script,
both of which the Content-Security-Policy refuses. The files come from the npm pin
(`make assets` copies them to static/vendor/swagger-ui) and the inline start-up script
carries the request's nonce.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse

router = APIRouter(include_in_schema=False)

VENDOR = "/static/vendor/swagger-ui"


@router.get("/api/v1/docs", name="api:docs")
def swagger_ui(request: Request) -> HTMLResponse:
    page = get_swagger_ui_html(openapi_url="/api/v1/openapi.json", title="Ringside API",
                               swagger_js_url=f"{VENDOR}/swagger-ui-bundle.js",
                               swagger_css_url=f"{VENDOR}/swagger-ui.css",
                               swagger_favicon_url="/static/favicon.svg")
    nonce = request.state.csp_nonce
    html = bytes(page.body).decode().replace("<script>", f'<script nonce="{nonce}">')
    return HTMLResponse(html)
