"""Headers on every kind of response, errors without tracebacks, nothing changed by GET
(SECURITY.md items 1-6, 9, 22 and 30)."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session

from app.db import Base
from tests.conftest import app_routes, csrf_token
from tests.security.test_csrf import ROUTES as UNSAFE_ROUTES

EXPECTED = {
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "same-origin",
    "cross-origin-opener-policy": "same-origin",
}


class Boom(RuntimeError):
    pass


@pytest.fixture(scope="module")
def failing_client(client: TestClient) -> Iterator[TestClient]:
    """The same app with one route that raises, to see a real 500 go through the stack."""
    from app.main import app

    def explode() -> None:
        raise Boom("secret internals: /srv/ringside/app/boom.py line 1")

    app.add_api_route("/_test/boom", explode, include_in_schema=False)
    app.add_api_route("/api/v1/_test/boom", explode, include_in_schema=False)
    yield client
    app.router.routes[:] = [r for r in app.router.routes
                            if getattr(r, "path", "").rsplit("/", 1)[-1] != "boom"]


def signed_in(web_engine: Engine) -> TestClient:
    """A browser of its own, signed in as an admin."""
    from tests.accounts.test_accounts import browser, make_user, sign_in

    admin = browser()
    assert sign_in(admin, make_user(web_engine, "admin")).status_code == 303
    return admin


KINDS = {
    "public page": ("GET", "/questions", {}, 200),
    "htmx fragment": ("GET", "/calculators/collective?op=all-reduce&world_size=8"
                      "&message_bytes=800MB", {"HX-Request": "true"}, 200),
    "json api": ("GET", "/api/v1/questions", {}, 200),
    "static file": ("GET", "/static/vendor/htmx.min.js", {}, 200),
    "404 page": ("GET", "/questions/no-such-question", {}, 404),
    "422 page": ("GET", "/calculators/collective?world_size=-3", {}, 422),
    "422 json": ("POST", "/api/v1/calculators/collective", {}, 422),
    "500 page": ("GET", "/_test/boom", {}, 500),
    "500 json": ("GET", "/api/v1/_test/boom", {}, 500),
    "redirect": ("GET", "/admin", {}, 303),
}


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_kind_of_response_has_the_headers(failing_client, kind):
    method, path, headers, status = KINDS[kind]
    response = failing_client.request(method, path, headers=headers, follow_redirects=False,
                                      **({"json": {"op": "all-reduce"}} if method == "POST"
                                         else {}))
    assert response.status_code == status, response.text[:300]
    for name, value in EXPECTED.items():
        assert response.headers[name] == value, name
    csp = response.headers["content-security-policy"]
    assert "script-src 'self';" in csp and "nonce" not in csp and "unsafe-" not in csp
    assert re.fullmatch(r"[0-9a-f]{32}", response.headers["x-request-id"])
    content_type = response.headers.get("content-type", "")
    if content_type.startswith(("text/", "application/json", "application/javascript")):
        assert "charset=utf-8" in content_type or content_type.startswith(
            ("application/json", "application/javascript", "text/javascript"))


def test_admin_page_headers_and_no_cache(client, web_engine):
    response = signed_in(web_engine).get("/admin")
    assert response.status_code == 200
    assert response.headers["cache-control"] == "no-store"
    for name, value in EXPECTED.items():
        assert response.headers[name] == value


@pytest.mark.parametrize("path", ["/_test/boom", "/api/v1/_test/boom"])
def test_a_500_shows_no_traceback(failing_client, path):
    response = failing_client.get(path)
    assert response.status_code == 500
    for leak in ("Traceback", "secret internals", "boom.py", "Boom"):
        assert leak not in response.text
    assert "Something went wrong on our side" in response.text


def test_fragments_and_languages_are_varied_on(client):
    fragment = client.get("/calculators/collective?op=all-reduce&world_size=4"
                          "&message_bytes=1MB", headers={"HX-Request": "true"})
    vary = {v.strip().lower() for v in fragment.headers["vary"].split(",")}
    assert {"hx-request", "accept-language", "cookie"} <= vary


def test_a_well_formed_request_id_is_kept_and_a_bad_one_replaced(client):
    assert client.get("/healthz", headers={"X-Request-ID": "lb-1234.abc"}
                      ).headers["x-request-id"] == "lb-1234.abc"
    replaced = client.get("/healthz", headers={"X-Request-ID": "x\" onload=alert(1)"})
    assert re.fullmatch(r"[0-9a-f]{32}", replaced.headers["x-request-id"])


def test_unknown_host_is_refused(monkeypatch):
    import app.main as main
    from app.config import Settings

    monkeypatch.setattr(main, "get_settings", lambda: Settings(allowed_hosts=["ringside.example"]))
    strict = main.create_app()
    with TestClient(strict, base_url="http://evil.example") as other:
        assert other.get("/healthz").status_code == 400
    with TestClient(strict, base_url="http://ringside.example") as own:
        assert own.get("/healthz").status_code == 200


@pytest.mark.parametrize("path", ["/openapi.json", "/docs", "/redoc", "/questions/openapi.json"])
def test_api_docs_only_under_api_v1(client, path):
    assert client.get(path).status_code == 404
    assert client.get("/api/v1/openapi.json").status_code == 200


@pytest.mark.parametrize("path", ["/static/../.git/config", "/static/%2e%2e/.git/HEAD",
                                  "/static/../app/config.py", "/static/../pyproject.toml",
                                  "/.git/config"])
def test_source_and_git_are_not_served(client, path):
    response = client.get(path)
    assert response.status_code == 404
    assert "[core]" not in response.text and "SECRET" not in response.text


def test_pages_are_compressed(client):
    response = client.get("/questions", headers={"Accept-Encoding": "gzip"})
    assert response.headers["content-encoding"] == "gzip"
    assert "accept-encoding" in response.headers["vary"].lower()


def test_the_csrf_token_differs_in_every_page_and_still_works(client):
    """BREACH: compressed pages must not repeat the secret, so each page masks it anew."""
    token = csrf_token(client)
    first, second = (re.search(r'name="csrf_token" value="([^"]+)"', client.get("/").text
                               ).group(1) for _ in range(2))
    assert first != second and token not in (first, second)
    for masked in (first, second):
        response = client.post("/language", data={"lang": "fr", "csrf_token": masked,
                                                  "next": "/"}, follow_redirects=False)
        assert response.status_code == 303
    client.cookies.delete("lang")


def _row_counts(engine: Engine) -> dict[str, int]:
    with Session(engine) as session:
        return {name: session.scalar(select(func.count()).select_from(table))
                for name, table in Base.metadata.tables.items()}


def _safe_paths() -> list[str]:
    return sorted({re.sub(r"\{[^}]+\}", "x", r.path) for r in app_routes()
                   if "GET" in (getattr(r, "methods", None) or set())})


def test_get_changes_nothing(client, web_engine):
    """Every GET route, anonymous and signed in: no row added, changed or removed."""
    from tests.accounts.test_accounts import browser

    paths = _safe_paths()
    assert {"/", "/questions", "/mock", "/admin", "/login"} <= set(paths)
    admin, anonymous = signed_in(web_engine), browser()
    before = _row_counts(web_engine)
    for visitor in (admin, anonymous):
        for path in paths:
            visitor.get(path, follow_redirects=False)
    assert _row_counts(web_engine) == before
    assert UNSAFE_ROUTES  # the unsafe ones are covered by test_csrf.py
