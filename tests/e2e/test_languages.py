"""Every language in Chromium: numbers typed as the page writes them, math that renders.

Screenshots of each explanation go to tests/e2e/artifacts/languages (git-ignored), for a
reviewer to look at.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.test_journeys import problems  # noqa: F401 - a fixture

ARTIFACTS = Path(__file__).parent / "artifacts" / "languages"
CJK_SPACE = re.compile(r"[\u4e00-\u9fff] [\u4e00-\u9fff]")


@pytest.mark.parametrize(("lang", "typed", "echo"), [
    ("fr", "3,25 Go", "3,25 GB"),
    ("fr", "3,25", "3,25 GB"),
    ("tr", "3,25 GB", "3,25 GB"),
    ("zh", "３．２５ GB", "3.25 GB"),
    ("en", "3,250 MB", "3,250 MB"),
])
def test_a_number_typed_the_way_the_page_writes_it_is_graded_right(
        page: Page, live_server: str, problems: list[str], lang: str, typed: str,  # noqa: F811
        echo: str) -> None:
    page.goto(f"{live_server}/questions/zero3-per-gpu?lang={lang}")
    expect(page.locator("html")).to_have_attribute("lang", lang)
    page.locator("#answer").fill(typed)
    page.locator("form.answer button[type=submit]").click()
    grade = page.locator("#result .grade")
    expect(grade).to_have_class(re.compile(r"\bgood\b"))
    expect(grade).to_contain_text(echo)  # the reading is echoed in the page's language
    assert problems == []


def test_an_ambiguous_number_is_refused_in_french_and_the_text_is_kept(
        page: Page, live_server: str, problems: list[str]) -> None:  # noqa: F811
    page.goto(f"{live_server}/questions/zero3-per-gpu?lang=fr")
    page.locator("#answer").fill("3.250 Go")
    page.locator("form.answer button[type=submit]").click()
    grade = page.locator("#result .grade")
    expect(grade).to_have_class(re.compile(r"\bbad\b"))
    expect(grade).to_contain_text("3,250")
    expect(grade).to_contain_text("3 250")
    expect(page.locator("#answer")).to_have_value("3.250 Go")
    assert all("status of 422" in problem for problem in problems), problems  # the refusal


@pytest.mark.parametrize("lang", ["en", "fr", "tr", "zh"])
def test_explanations_with_math_render_as_math(page: Page, live_server: str,
                                               problems: list[str], lang: str) -> None:  # noqa: F811
    """Display math inside a paragraph, inline math, and the drawn numbers, in each language."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.set_viewport_size({"width": 1000, "height": 900})
    page.goto(f"{live_server}/questions/mfu-from-throughput?lang={lang}&seed=5")
    page.locator("#answer").fill("0.4")
    page.locator("form.answer button[type=submit]").click()
    explanation = page.locator("#result .explanation")
    expect(explanation).to_be_visible()
    expect(explanation.locator("math").first).to_be_visible()
    text = explanation.inner_text()
    assert "$" not in text and "\\times" not in text and "\\frac" not in text, text[:400]
    if lang == "zh":
        assert not CJK_SPACE.search(text), CJK_SPACE.findall(text)
    displayed = explanation.locator("span.math.display math")
    if displayed.count():
        box = displayed.first.bounding_box()
        assert box and box["width"] > 20 and box["height"] > 10
    explanation.screenshot(path=str(ARTIFACTS / f"mfu-explanation-{lang}.png"))
    assert problems == []
