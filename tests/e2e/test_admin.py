"""In Chromium: sign in, author a numeric question whose answer is wrong, see the check
fail, fix it, publish it, and find it on the public page in two languages."""

from __future__ import annotations

import re

import yaml
from playwright.sync_api import Page, expect
from sqlalchemy.orm import Session

from app.accounts.service import create_user
from app.config import ROOT
from tests.e2e.test_journeys import no_axe_violations, problems  # noqa: F401 - fixture

RING = ROOT / "question_bank/questions/collectives/ring-allreduce-bytes-per-rank.yaml"
PASSWORD = "a long enough passphrase"


def test_author_a_question_guarded_by_the_calculator(page: Page, live_server: str,
                                                     e2e_engine, problems: list[str]  # noqa: F811
                                                     ) -> None:
    with Session(e2e_engine) as session, session.begin():
        create_user(session, "author@example.org", PASSWORD, "editor")
    page.goto(f"{live_server}/admin")
    expect(page).to_have_url(re.compile(r"/login\?next=/admin"))
    page.get_by_label("E-mail address").fill("author@example.org")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("h1")).to_contain_text("Bank coverage")

    page.goto(f"{live_server}/admin/questions/new")
    data = yaml.safe_load(RING.read_text())
    data["id"] = "authored-in-a-browser"
    data["translations"]["en"]["title"] = "Ring traffic, authored in a browser"
    data["answer"]["value"] = "1.2 GB"
    page.get_by_label("Question (YAML)").fill(yaml.safe_dump(data, allow_unicode=True))
    page.get_by_role("button", name="Check").click()
    expect(page.locator("#check")).to_contain_text("states 1.2 GB but the calculator gives")
    no_axe_violations(page)

    page.get_by_role("button", name="Publish").click()
    expect(page.locator(".notice")).to_contain_text("Not published")

    data["answer"]["value"] = "1400 MB"
    page.get_by_label("Question (YAML)").fill(yaml.safe_dump(data, allow_unicode=True))
    page.get_by_role("button", name="Check").click()
    expect(page.locator("#check")).to_contain_text("Every check passes")
    page.get_by_role("button", name="Publish").click()
    expect(page.locator(".notice")).to_contain_text("Published")

    for lang, title in (("en", "authored in a browser"), ("fr", "Octets envoyés")):
        page.goto(f"{live_server}/questions/authored-in-a-browser?lang={lang}")
        expect(page.locator("h1")).to_contain_text(title)
    # The refused publication answers 422 on purpose; Chromium logs any 4xx.
    assert [p for p in problems if "status of 422" not in p] == []
