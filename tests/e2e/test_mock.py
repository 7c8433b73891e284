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


def test_the_clock_and_a_draft_survive_a_reload(page: Page, live_server: str,
                                                problems: list[str]) -> None:  # noqa: F811
    page.set_viewport_size({"width": 390, "height": 800})
    page.goto(f"{live_server}/mock?lang=en")
    page.locator("#s-senior").check()
    page.locator("#m-length").select_option("3")
    page.locator("#m-seconds").select_option("120")
    page.locator("form.setup button[type=submit]").click()
    clock = page.locator("#timer .timer-clock")
    expect(clock).to_be_visible()
    page.wait_for_timeout(2200)
    before = int(page.locator("#timer").get_attribute("data-remaining"))
    page.reload()
    after = int(page.locator("#timer").get_attribute("data-remaining"))
    assert after < before <= 120  # the server's clock, not a fresh one

    field = page.locator("#answer")
    if field.count():  # numeric and open questions have a text field to keep
        field.fill("a draft I do not want to lose")
    page.get_by_role("button", name="Pause").click()
    expect(page.locator(".paused-notice")).to_be_visible()
    expect(page.locator("article.question form.answer")).to_have_count(0)  # hidden
    page.reload()
    expect(page.locator(".paused-notice")).to_be_visible()
    page.get_by_role("button", name="Resume").click()
    if field.count():
        expect(page.locator("#answer")).to_have_value("a draft I do not want to lose")
    page.mouse.wheel(0, 2000)  # the clock stays on screen while scrolling (sticky)
    box = page.locator("#timer").bounding_box()
    assert box is not None and 0 <= box["y"] < 800
    assert problems == []


def test_a_typed_answer_survives_a_reload(page: Page, live_server: str,
                                          problems: list[str]) -> None:  # noqa: F811
    """Typed text is saved as the candidate types (htmx) and is back after a reload."""
    for _attempt in range(6):  # until the interview opens on a question with a text field
        page.goto(f"{live_server}/mock?lang=en")
        page.locator("#s-senior").check()
        page.locator("#m-length").select_option("3")
        page.locator("form.setup button[type=submit]").click()
        if page.locator("#answer").count():
            break
    field = page.locator("#answer")
    assert field.count(), "no interview started on a numeric or open question"
    with page.expect_response(lambda r: r.url.endswith("/draft")) as saved:
        field.press_sequentially("my unfinished answer", delay=20)
    assert saved.value.status == 204
    page.reload()
    expect(page.locator("#answer")).to_have_value("my unfinished answer")
    assert problems == []


def test_a_spoken_follow_up_is_self_checked_and_reported_on_a_phone(
        page: Page, live_server: str, e2e_engine, problems: list[str]) -> None:  # noqa: F811
    """The follow-up's own model answer and key points; a tick survives a reload (htmx
    autosave); the report shows both answers and the ticks."""
    from sqlalchemy import select
    from sqlalchemy.orm import Session

    from app.practice.models import MockInterview

    page.set_viewport_size({"width": 360, "height": 780})
    page.goto(f"{live_server}/mock?lang=fr")
    page.locator("#s-mid").check()
    page.locator("#m-length").select_option("3")
    page.locator("form.setup button[type=submit]").click()
    public_id = page.url.rsplit("/", 1)[1].split("?")[0]
    with Session(e2e_engine) as db, db.begin():  # question 1 is answered; a spoken follow-up
        interview = db.scalars(select(MockInterview).where(
            MockInterview.public_id == public_id)).one()
        slug = interview.plan[0]["slug"]
        interview.steps = [{"kind": "main", "slug": slug, "seed": None, "number": 1,
                            "answer": [], "correct": False, "score": 0.0, "seconds": 5.0,
                            "follow_up": {"spoken": 0}}]
        interview.stage = "follow_up"
    page.reload()
    expect(page.locator("article[data-step=spoken]")).to_be_visible()
    page.locator("#answer").fill("Je ne sais pas trop, il faudrait mesurer.")
    page.get_by_role("button", name="Répondre").click()
    expect(page.locator(".model-answer")).to_be_visible()
    boxes = page.locator("input[name=rubric]")
    assert boxes.count() >= 2
    with page.expect_response(lambda r: "/draft" in r.url and r.status == 204):
        boxes.nth(1).check()
    page.reload()
    assert page.locator("input[name=rubric]").nth(1).is_checked()
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    page.get_by_role("button", name="Confirmer et continuer").click()
    page.locator("form.end-early button").click()
    report = page.locator("li.spoken")
    expect(report.locator(".model-answer")).to_be_visible()
    expect(report.locator("li.ticked")).to_have_count(1)
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    page.screenshot(path="/tmp/ringside-report-spoken-360.png", full_page=True)
    assert problems == []
