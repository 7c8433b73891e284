"""Every page type on a 360 px phone, in English and Chinese: nothing scrolls sideways, the
navigation fits, and the text of the pictures stays readable (11 px or more on screen).

Screenshots go to tests/e2e/artifacts/phone (git-ignored) for a reviewer.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.test_journeys import problems  # noqa: F401 - a fixture

ARTIFACTS = Path(__file__).parent / "artifacts" / "phone"
PHONE = {"width": 360, "height": 740}
MIN_PICTURE_TEXT_PX = 11

PAGES = {
    "home": "/",
    "browse": "/questions?topic=collectives",
    "question": "/questions/ring-allreduce-bytes-per-rank",
    "calculators": "/calculators",
    "calculator-collective": "/calculators/collective?op=all-reduce&world_size=8"
                             "&message_bytes=800MB&alpha_s=5us&bandwidth_bytes_per_s=12.5GB/s",
    "calculator-memory": "/calculators/model-memory?params=7.5e9&zero_stage=3&dp=64",
    "calculator-pipeline": "/calculators/pipeline-bubble?stages=8&microbatches=32"
                           "&schedule=interleaved&virtual_stages=2",
    "experiments": "/experiments",
    "experiment": "/experiments/ddp-bucketing",
    "experiment-pictures": "/experiments/collective-traffic",
    "experiment-schedule": "/experiments/pipeline-schedules",
    "mock-setup": "/mock",
    "review": "/review",
    "progress": "/progress",
    "login": "/login",
}

# Overflow = the page is wider than the screen; elements are named to say what to fix.
OVERFLOW = """() => {
  const width = document.documentElement.clientWidth;
  const wide = [];
  for (const el of document.querySelectorAll('body *')) {
    const box = el.getBoundingClientRect();
    if (box.width > 0 && box.right > width + 1 && getComputedStyle(el).position !== 'fixed'
        && !el.closest('.scroll-x, .math.display, pre, table.outputs, .picture-table')) {
      wide.push(el.tagName.toLowerCase() + (el.className && typeof el.className === 'string'
                ? '.' + el.className.split(' ').join('.') : '') + ' ' + Math.round(box.right));
    }
  }
  return {scroll: document.documentElement.scrollWidth, width, wide: wide.slice(0, 8)};
}"""

SMALLEST_PICTURE_TEXT = """() => {
  let smallest = Infinity;
  for (const figure of document.querySelectorAll('figure.picture')) {
    const svg = figure.querySelector('svg');
    if (!svg || svg.getBoundingClientRect().width === 0) continue;  // swapped for its table
    for (const text of svg.querySelectorAll('text')) {
      const box = text.getBoundingClientRect();
      if (box.height > 0 && text.textContent.trim()) smallest = Math.min(smallest, box.height);
    }
  }
  return smallest;
}"""


def check_page(page: Page, name: str, lang: str) -> None:
    measured = page.evaluate(OVERFLOW)
    page.screenshot(path=str(ARTIFACTS / f"{name}-{lang}.png"), full_page=True)
    assert measured["scroll"] <= measured["width"], (name, lang, measured)
    smallest = page.evaluate(SMALLEST_PICTURE_TEXT)
    assert smallest >= MIN_PICTURE_TEXT_PX - 0.5, (name, lang, smallest)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_no_page_scrolls_sideways_on_a_phone(page: Page, live_server: str,
                                             problems: list[str], lang: str) -> None:  # noqa: F811
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.set_viewport_size(PHONE)
    for name, path in PAGES.items():
        separator = "&" if "?" in path else "?"
        page.goto(f"{live_server}{path}{separator}lang={lang}")
        check_page(page, name, lang)

    # A graded answer (explanation, worked steps, pictures) and a mock interview step.
    page.goto(f"{live_server}/questions/pipeline-bubble-fraction?lang={lang}")
    page.locator("#answer").fill("0.1")
    page.locator("form.answer button[type=submit]").click()
    expect(page.locator("#result .explanation")).to_be_visible()
    check_page(page, "answered", lang)

    page.goto(f"{live_server}/mock?lang={lang}")
    page.locator("#s-mid").check()
    page.locator("#m-length").select_option("3")
    page.locator("form.setup button[type=submit]").click()
    expect(page.locator("article.question")).to_be_visible()
    check_page(page, "mock-step", lang)
    assert problems == []


def test_the_header_stays_short_on_a_phone(page: Page, live_server: str) -> None:
    page.set_viewport_size(PHONE)
    page.goto(f"{live_server}/questions?lang=en")
    header = page.locator("header.site").bounding_box()
    assert header is not None and header["height"] <= PHONE["height"] * 0.15, header


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_no_question_page_scrolls_sideways_on_a_phone(page: Page, live_server: str,
                                                      lang: str) -> None:
    """Every question of the bank: code, tables and formulas scroll inside their own box."""
    from app.bank.checks import check_bank
    from app.config import ROOT

    page.set_viewport_size(PHONE)
    wide = []
    for bank_file in check_bank(ROOT / "question_bank").files:
        page.goto(f"{live_server}/questions/{bank_file.question.id}?lang={lang}")
        scroll = page.evaluate("() => document.documentElement.scrollWidth")
        if scroll > PHONE["width"]:
            wide.append((bank_file.question.id, scroll))
    assert not wide, wide
