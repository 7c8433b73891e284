"""The candidate's main journey in real Chromium, with console, CSP and axe checks."""

from __future__ import annotations

import re

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import ConsoleMessage, Page, expect

RING = "ring-allreduce-bytes-per-rank"


@pytest.fixture
def problems(page: Page) -> list[str]:
    """Console errors, CSP violations and page errors seen during a test."""
    seen: list[str] = []

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error" or "Content Security Policy" in message.text:
            seen.append(f"console: {message.text}")

    page.on("console", on_console)
    page.on("pageerror", lambda error: seen.append(f"pageerror: {error}"))
    page.add_init_script("document.addEventListener('securitypolicyviolation', e => "
                         "console.error('CSP violation: ' + e.violatedDirective));")
    return seen


def no_axe_violations(page: Page) -> None:
    results = Axe().run(page)
    assert results.violations_count == 0, results.generate_report()


def test_browse_filter_answer_and_switch_language(page: Page, live_server: str,
                                                  problems: list[str]) -> None:
    page.goto(f"{live_server}/")
    no_axe_violations(page)

    page.goto(f"{live_server}/questions")
    no_axe_violations(page)
    page.get_by_label("Seniority").select_option("mid")
    expect(page).to_have_url(re.compile(r"seniority=mid"))
    page.get_by_label("Topic").select_option("collectives")
    expect(page).to_have_url(re.compile(r"topic=collectives"))
    expect(page.locator("#results")).to_contain_text("Bytes each rank sends")
    expect(page.locator("#results")).not_to_contain_text("Steps of a ring all-reduce")

    page.locator(f'#results a[href="/questions/{RING}"]').click()
    expect(page).to_have_url(re.compile(RING))
    no_axe_violations(page)

    answer = page.get_by_label("Your answer, in GB")
    answer.fill("700 MB")
    page.get_by_role("button", name="Check my answer").click()
    result = page.locator("#result")
    expect(result).to_contain_text("This is a known mistake")
    expect(result).to_contain_text("reduce-scatter half")
    expect(page).to_have_url(re.compile(f"/questions/{RING}$"))  # swapped in place

    answer.fill("1.304 GiB")
    page.get_by_role("button", name="Check my answer").click()
    expect(result).to_contain_text("Correct")
    expect(result).to_contain_text("Explanation")
    expect(result.locator("math").first).to_be_attached()  # MathML rendered on the server
    no_axe_violations(page)

    page.get_by_label("Language").select_option("zh")
    page.get_by_role("button", name="Change").click()
    expect(page.locator("html")).to_have_attribute("lang", "zh")
    expect(page.locator("h1")).to_contain_text("环形 all-reduce")
    no_axe_violations(page)

    page.locator("#language-select").select_option("tr")
    page.locator("form.language button").click()
    expect(page.locator("html")).to_have_attribute("lang", "tr")
    expect(page.locator("h1")).to_contain_text("Halka all-reduce")

    assert problems == []


def test_keyboard_only_answer(page: Page, live_server: str, problems: list[str]) -> None:
    page.goto(f"{live_server}/questions/ring-allreduce-bytes-choice?lang=en")
    page.locator("#choice-a").focus()
    page.keyboard.press("ArrowDown")  # radios move with arrow keys
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    expect(page.locator("#result")).to_contain_text(re.compile("Correct|Not quite"))
    assert problems == []
