"""/api/v1/docs: Swagger UI served from our origin, so it runs under the strict CSP.

FastAPI's default page loads Swagger UI from a CDN and starts it with an inline script,
both of which the Content-Security-Policy refuses. The files come from the npm pin
(`make assets` copies them to static/vendor/swagger-ui) and the start-up script is
`static/js/swagger-init.js`: no inline script, so `script-src 'self'` is enough.
"""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import HTMLResponse

router = APIRouter(include_in_schema=False)

VENDOR = "/static/vendor/swagger-ui"
PAGE = f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="{VENDOR}/swagger-ui.css">
<link rel="icon" href="/static/favicon.svg">
<title>Ringside API</title>
</head>
<body>
<div id="swagger-ui" data-openapi="/api/v1/openapi.json"></div>
<script src="{VENDOR}/swagger-ui-bundle.js"></script>
<script src="/static/js/swagger-init.js"></script>
</body>
</html>
"""


@router.get("/api/v1/docs", name="api:docs")
def swagger_ui() -> HTMLResponse:
    return HTMLResponse(PAGE)
