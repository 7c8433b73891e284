"""A whole mock interview in Chromium with the keyboard only, checked by axe."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.e2e.test_journeys import no_axe_violations, problems  # noqa: F401 - fixture


def press_button(page: Page, name: str) -> None:
    """Focus a submit button and press Enter, waiting for the page it leads to."""
    page.get_by_role("button", name=name).focus()
    with page.expect_navigation():
        page.keyboard.press("Enter")


def test_keyboard_only_mock_interview(page: Page, live_server: str,
                                      problems: list[str]) -> None:  # noqa: F811
    page.goto(f"{live_server}/mock?lang=en")
    no_axe_violations(page)
    page.locator("#s-junior").focus()
    page.keyboard.press("Space")
    page.locator("#m-length").select_option("3")
    page.locator("#m-seconds").select_option("120")
    press_button(page, "Start the interview")

    expect(page.locator("#timer .timer-clock")).to_be_visible()
    no_axe_violations(page)
    steps = []
    for _ in range(12):
        if page.locator(".big-score").count():
            break
        article = page.locator("article.question")
        steps.append((article.get_attribute("data-step"), article.get_attribute("data-number")))
        if page.locator("input[name=rubric]").count():
            press_button(page, "Confirm and continue")
        elif page.locator("textarea#answer").count():
            page.locator("textarea#answer").focus()
            page.keyboard.type("I would overlap the all-reduce with backward.")
            press_button(page, "Answer")
        elif page.locator("input[name=answer][type=text]").count():
            page.locator("input#answer").focus()
            page.keyboard.type("1")
            with page.expect_navigation():
                page.keyboard.press("Enter")
        else:
            page.locator("input[name=answer]").first.focus()
            page.keyboard.press("Space")
            press_button(page, "Answer")
    expect(page.locator(".big-score")).to_be_visible()
    asked = set(steps)  # an open question's assessment repeats its step
    assert {number for kind, number in asked if kind == "main"} == {"1", "2", "3"}
    assert {number for kind, number in asked if kind != "main"} == {"1", "2", "3"}
    expect(page.locator("svg.bars")).to_be_visible()
    no_axe_violations(page)
    assert problems == []
