"""Server-rendered pages: home, calculators, errors, headers, static files."""

from __future__ import annotations

import json
import re

from app.calculator import calculators
from app.config import ROOT


def test_home(client):
    response = client.get("/")
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    assert "Practise distributed-training interviews" in response.text
    assert all(f"/calculators/{c.name}" in response.text for c in calculators())


def test_calculator_index_and_every_form(client):
    assert client.get("/calculators").status_code == 200
    for calc in calculators():
        page = client.get(f"/calculators/{calc.name}")
        assert page.status_code == 200
        for param in calc.params:
            assert f'name="{param.name}"' in page.text


def test_query_string_opens_the_computed_case(client):
    page = client.get("/calculators/collective?op=all-reduce&world_size=8&message_bytes=800MB")
    assert page.status_code == 200
    assert "1.4 GB" in page.text and "<html" in page.text
    assert 'value="800MB"' in page.text


def test_htmx_request_gets_only_the_result_block(client):
    page = client.get("/calculators/collective?op=all-reduce&world_size=8&message_bytes=800MB",
                      headers={"HX-Request": "true"})
    assert "<html" not in page.text and "1.4 GB" in page.text
    assert "HX-Request" in page.headers["vary"]


def test_bad_value_is_shown_next_to_its_field(client):
    page = client.get("/calculators/collective?op=all-reduce&world_size=0&message_bytes=1")
    assert page.status_code == 422
    assert "must be at least 1" in page.text
    assert 'aria-invalid="true"' in page.text


def test_unknown_calculator_page_is_404(client):
    page = client.get("/calculators/teleport")
    assert page.status_code == 404
    assert "unknown calculator" in page.text


def test_security_headers_and_no_inline_script(client):
    """script-src 'self' only: every script is a file of our origin, none inline, so the
    policy needs no nonce and the same page can be served to everyone."""
    page = client.get("/")
    csp = page.headers["content-security-policy"]
    assert "script-src 'self';" in csp and "nonce" not in csp and "unsafe" not in csp
    assert "object-src 'none'" in csp and "frame-ancestors 'none'" in csp
    for path in ("/", "/questions", "/questions/ring-allreduce-bytes-per-rank", "/mock",
                 "/calculators/collective", "/api/v1/docs"):
        for tag in re.findall(r"<script[^>]*>", client.get(path).text):
            assert re.search(r'\ssrc="/static/', tag), (path, tag)
        assert not re.search(r"<script(?![^>]*\ssrc=)[^>]*>", client.get(path).text), path
    assert page.headers["x-content-type-options"] == "nosniff"
    assert page.headers["x-frame-options"] == "DENY"
    assert "strict-transport-security" not in page.headers


def test_hsts_only_over_https(client):
    from fastapi.testclient import TestClient

    from app.main import app

    with TestClient(app, base_url="https://testserver") as https:
        assert "max-age=31536000" in https.get("/").headers["strict-transport-security"]


def test_no_inline_script_or_handler_in_templates():
    for path in (ROOT / "templates").rglob("*.html"):
        text = path.read_text()
        assert not re.search(r"<script(?![^>]*\bsrc=)", text), path
        assert not re.search(r"\son[a-z]+=", text), path
        assert "style=" not in text, path


def test_htmx_is_served_at_the_pinned_version(client):
    pinned = json.loads((ROOT / "package.json").read_text())["dependencies"]["htmx.org"]
    script = client.get("/static/vendor/htmx.min.js")
    assert script.status_code == 200
    assert f'version="{pinned}"' in script.text or f"version:\"{pinned}\"" in script.text
