"""CSRF on every state-changing route (SECURITY.md items 7-8), found by walking the app."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from app.main import app
from tests.conftest import app_routes


def unsafe_routes() -> list[tuple[str, str]]:
    found = []
    for r in app_routes():
        for method in getattr(r, "methods", set()) or set():
            if method in {"POST", "PUT", "PATCH", "DELETE"} and not r.path.startswith("/api/"):
                found.append((method, re.sub(r"\{[^}]+\}", "x", r.path)))
    return sorted(set(found))


ROUTES = unsafe_routes()


def test_the_walk_finds_the_forms():
    paths = {path for _, path in ROUTES}
    assert {"/language", "/login", "/logout", "/mock", "/questions/x/answer",
            "/mock/x/answer", "/progress/delete", "/review/practise"} <= paths


@pytest.mark.parametrize(("method", "path"), ROUTES)
def test_refused_without_a_token_or_with_a_wrong_one(client, method, path):
    browser = TestClient(app)
    browser.get("/")
    assert browser.request(method, path, data={}).status_code == 403
    assert browser.request(method, path, data={"csrf_token": "x" * 43}).status_code == 403
    other = TestClient(app)
    other.get("/")
    stolen = other.cookies.get("csrftoken")  # a token from another browser's session
    assert browser.request(method, path, data={"csrf_token": stolen}).status_code == 403


@pytest.mark.parametrize(("method", "path"), ROUTES)
def test_cross_site_refused_even_with_a_valid_token(client, method, path):
    browser = TestClient(app)
    browser.get("/")
    token = browser.cookies.get("csrftoken")
    for headers in ({"Sec-Fetch-Site": "cross-site"}, {"Origin": "https://evil.example"}):
        response = browser.request(method, path, data={"csrf_token": token}, headers=headers)
        assert response.status_code == 403


def test_same_origin_with_the_token_passes(client):
    browser = TestClient(app)
    browser.get("/")
    response = browser.post("/language", follow_redirects=False, headers={
        "Sec-Fetch-Site": "same-origin"}, data={"csrf_token": browser.cookies.get("csrftoken"),
                                               "lang": "fr", "next": "/"})
    assert response.status_code == 303
    header = browser.post("/language", follow_redirects=False, data={"lang": "fr"},
                          headers={"X-CSRF-Token": browser.cookies.get("csrftoken")})
    assert header.status_code == 303
