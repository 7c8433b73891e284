"""/api/v1/docs renders Swagger UI from our origin under the CSP, and can call the API."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.e2e.test_journeys import problems  # noqa: F401 - a fixture


def test_api_docs_render_without_a_csp_error(page: Page, live_server: str,
                                             problems: list[str]) -> None:  # noqa: F811
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto(f"{live_server}/api/v1/docs")
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("Ringside")
    operation = page.locator(".opblock-summary-path", has_text="/api/v1/calculators").first
    expect(operation).to_be_visible()
    assert all(url.startswith(live_server) for url in requested), requested  # no CDN
    assert problems == []
