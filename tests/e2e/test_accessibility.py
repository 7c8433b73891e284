"""axe in Chromium on every page type, in English and Chinese (SECURITY.md item 25):
public pages, the mock interview, the candidate's pages, sign-in, the admin area and an
error page. Each page is also checked for console and CSP errors."""

from __future__ import annotations

import itertools
import re

import pytest
from playwright.sync_api import Page, expect
from sqlalchemy.orm import Session

from app.accounts.service import create_user
from tests.e2e.test_journeys import RING, no_axe_violations, problems  # noqa: F401 - fixture

PUBLIC = {
    "home": "/",
    "browse": "/questions?topic=collectives",
    "question": f"/questions/{RING}",
    "open question": "/questions/choose-parallelism",
    "calculators": "/calculators",
    "calculator with result": "/calculators/collective?op=all-reduce&world_size=8"
                              "&message_bytes=800MB",
    "experiments": "/experiments",
    "experiment": "/experiments/ddp-bucketing",
    "mock set-up": "/mock",
    "progress": "/progress",
    "review": "/review",
    "sign-in": "/login",
    "not found": "/questions/no-such-question",
}
ADMIN = {
    "dashboard": "/admin",
    "question list": "/admin/questions",
    "question form": "/admin/questions/new",
    "question edit": f"/admin/questions/{RING}",
    "revisions": f"/admin/questions/{RING}/revisions",
    "users": "/admin/users",
    "import": "/admin/import",
    "password": "/account/password",
}
PASSWORD = "a long enough passphrase"
_accounts = itertools.count()


def _with_lang(path: str, lang: str) -> str:
    return f"{path}{'&' if '?' in path else '?'}lang={lang}"


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("name", list(PUBLIC))
def test_public_pages(page: Page, live_server: str, problems: list[str],  # noqa: F811
                      name: str, lang: str) -> None:
    page.goto(live_server + _with_lang(PUBLIC[name], lang))
    expect(page.locator("html")).to_have_attribute("lang", lang)
    no_axe_violations(page)
    if name == "not found":  # the browser reports the page's own 404 status
        problems = [p for p in problems if "status of 404" not in p]
    assert problems == []


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_mock_interview_step(page: Page, live_server: str,
                                        problems: list[str], lang: str) -> None:  # noqa: F811
    page.goto(f"{live_server}/mock?lang={lang}")
    page.locator("form.setup button[type=submit]").click()
    page.wait_for_url(re.compile(r"/mock/[^/?]+"))
    expect(page.locator("form")).not_to_have_count(0)
    no_axe_violations(page)
    assert problems == []


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_admin_pages(page: Page, live_server: str, e2e_engine, problems: list[str],  # noqa: F811
                     lang: str) -> None:
    email = f"axe{next(_accounts)}-{lang}@example.org"
    with Session(e2e_engine) as session, session.begin():
        create_user(session, email, PASSWORD, "admin")
    page.goto(f"{live_server}/login?lang={lang}")
    page.locator("input[name=email]").fill(email)
    page.locator("input[name=password]").fill(PASSWORD)
    page.locator("form.login button[type=submit]").click()
    page.wait_for_url(f"{live_server}/admin*")
    for name, path in ADMIN.items():
        page.goto(live_server + _with_lang(path, lang))
        assert page.locator("h1").count() >= 1, name
        no_axe_violations(page)
    assert problems == []
