"""Structured logs (SECURITY.md item 31): one JSON line per event, with UTC time and the
request id, for sign-ins, admin actions, throttling, CSRF refusals and errors; never a
password or a session token."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator

import pytest

from app.logs import configure_logging
from tests.accounts.test_accounts import PASSWORD, browser, make_user, sign_in


@pytest.fixture
def lines() -> Iterator[io.StringIO]:
    stream = io.StringIO()
    configure_logging("json", "INFO", stream=stream)
    yield stream
    configure_logging("json", "INFO")


def records(stream: io.StringIO) -> list[dict]:
    return [json.loads(line) for line in stream.getvalue().splitlines() if line.strip()]


def events(stream: io.StringIO, name: str) -> list[dict]:
    return [r for r in records(stream) if r["event"] == name]


def test_every_line_is_json_with_time_level_and_request_id(client, lines):
    response = client.get("/questions")
    (line,) = [r for r in events(lines, "request") if r["path"] == "/questions"]
    assert line["request_id"] == response.headers["x-request-id"]
    assert line["timestamp"].endswith("Z") and line["level"] == "info"
    assert line["status"] == 200 and line["method"] == "GET" and line["duration_ms"] >= 0


def test_sign_in_success_and_failure(client, web_engine, lines):
    email = make_user(web_engine, "editor")
    visitor = browser(ip="10.9.8.7")
    assert sign_in(visitor, email, "not the password").status_code == 401
    assert sign_in(visitor, email).status_code == 303
    (failed,) = events(lines, "sign_in_failed")
    (ok,) = events(lines, "sign_in")
    assert failed["email"] == email and failed["ip"] == "10.9.8.7" and failed["request_id"]
    assert ok["user_id"] and ok["role"] == "editor" and ok["request_id"] != failed["request_id"]
    text = lines.getvalue()
    assert PASSWORD not in text and "not the password" not in text
    assert visitor.cookies.get("ringside_session") not in text
    for cookie in visitor.cookies.values():
        assert cookie not in text


def test_throttling_is_logged(client, web_engine, lines):
    email = make_user(web_engine, "editor")
    visitor = browser()
    statuses = [sign_in(visitor, email, f"wrong {i}").status_code for i in range(6)]
    assert statuses[-1] == 429
    assert events(lines, "sign_in_throttled")[0]["email"] == email


def test_csrf_refusals_are_logged(client, lines):
    assert client.post("/language", data={"lang": "fr"}).status_code == 403
    assert client.post("/language", data={"lang": "fr"},
                       headers={"Sec-Fetch-Site": "cross-site"}).status_code == 403
    reasons = [r["reason"] for r in events(lines, "csrf_refused")]
    assert reasons == ["token", "cross-site"]


def test_admin_actions_name_the_user(client, web_engine, lines):
    admin = browser()
    sign_in(admin, make_user(web_engine, "admin"))
    admin.post("/admin/questions/check", data={
        "csrf_token": admin.cookies.get("csrftoken"), "text": "id: x"})
    (action,) = events(lines, "admin_action")
    assert action["path"] == "/admin/questions/check" and action["method"] == "POST"
    assert isinstance(action["user_id"], int) and action["status"] == 200


def test_secret_fields_are_redacted(lines):
    import structlog

    structlog.get_logger("ringside").warning("oops", password="hunter22", session_token="abc",
                                             detail="kept")
    (line,) = events(lines, "oops")
    assert line["password"] == line["session_token"] == "[redacted]"
    assert line["detail"] == "kept" and "hunter22" not in lines.getvalue()


def test_tracebacks_are_logged_without_local_variables(lines):
    import structlog

    def sign_in_with(password: str) -> None:
        raise RuntimeError("the database went away")

    try:
        sign_in_with("hunter22 is my password")
    except RuntimeError:
        structlog.get_logger("ringside").exception("unhandled_error", path="/login")
    (line,) = events(lines, "unhandled_error")
    assert line["exception"][0]["exc_value"] == "the database went away"
    assert "hunter22" not in lines.getvalue() and "locals" not in lines.getvalue()
