"""The pictures in real Chromium: each is drawn (non-empty bounding box), screenshotted for
a reviewer, redrawn by htmx as parameters change, and passes axe with no CSP violation.

Screenshots go to $RINGSIDE_PICTURE_DIR, or tests/e2e/artifacts/pictures (git-ignored).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.test_journeys import no_axe_violations, problems  # noqa: F401 - fixture

ARTIFACTS = Path(os.environ.get("RINGSIDE_PICTURE_DIR")
                 or Path(__file__).parent / "artifacts" / "pictures")
PAGES = {
    "ring-8": "/calculators/collective?op=all-reduce&world_size=8&message_bytes=800MB",
    "tree-6": "/calculators/collective?op=all-reduce&algorithm=tree&world_size=6"
              "&message_bytes=800MB",
    "ring-1024-latency": "/calculators/collective?op=all-reduce&world_size=1024"
                         "&message_bytes=8B&alpha_s=5us&bandwidth_bytes_per_s=100Gbit/s",
    "memory": "/calculators/model-memory?params=7.5e9&zero_stage=1&dp=64&device_bytes=80GB"
              "&activation_bytes=6GB",
    "activations": "/calculators/activation-memory?seq_len=2048&micro_batch=1&hidden=12288"
                   "&heads=96&tp=8&sequence_parallel=true",
    "gpipe": "/calculators/pipeline-bubble?stages=4&microbatches=8&schedule=gpipe",
    "1f1b": "/calculators/pipeline-bubble?stages=4&microbatches=8&schedule=1f1b",
    "interleaved": "/calculators/pipeline-bubble?stages=4&microbatches=8"
                   "&schedule=interleaved&virtual_stages=2",
    "interleaved-cut": "/calculators/pipeline-bubble?stages=8&microbatches=32"
                       "&schedule=interleaved&virtual_stages=2",
}


def shoot_pictures(page: Page, name: str) -> int:
    """Screenshot every picture on the page; each must have a size and an image."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    figures = page.locator("figure.picture")
    count = figures.count()
    for i in range(count):
        figure = figures.nth(i)
        svg = figure.locator("svg.picture")
        figure.scroll_into_view_if_needed()
        box = svg.bounding_box()
        assert box and box["width"] > 100 and box["height"] > 50, (name, i, box)
        kind = (svg.get_attribute("class") or "").split()[1]
        path = ARTIFACTS / f"{name}-{i + 1}-{kind}.png"
        image = figure.screenshot(path=str(path))
        assert len(image) > 2000 and path.stat().st_size == len(image)
    return count


@pytest.mark.parametrize("name", sorted(PAGES))
def test_picture_on_its_calculator_page(page: Page, live_server: str, name: str,
                                        problems: list[str]) -> None:  # noqa: F811
    page.set_viewport_size({"width": 1100, "height": 900})
    page.goto(f"{live_server}{PAGES[name]}&lang=en")
    expect(page.locator("#result figure.picture").first).to_be_visible()
    assert shoot_pictures(page, name) >= 1
    assert problems == []


@pytest.mark.parametrize("lang", ["fr", "tr", "zh"])
def test_picture_in_every_language(page: Page, live_server: str, lang: str,
                                   problems: list[str]) -> None:  # noqa: F811
    page.goto(f"{live_server}{PAGES['ring-8']}&lang={lang}")
    expect(page.locator("html")).to_have_attribute("lang", lang)
    shoot_pictures(page, f"ring-8-{lang}")
    page.goto(f"{live_server}{PAGES['interleaved']}&lang={lang}")
    shoot_pictures(page, f"interleaved-{lang}")
    assert problems == []


def test_picture_redrawn_by_htmx_and_accessible(page: Page, live_server: str,
                                                problems: list[str]) -> None:  # noqa: F811
    page.goto(f"{live_server}{PAGES['ring-8']}&lang=en")
    steps = page.locator("svg.steps g.step")
    expect(steps).to_have_count(14)
    no_axe_violations(page)
    page.locator("#p-world_size").fill("4")
    page.locator("#p-world_size").press("Tab")  # a change: htmx swaps the result in place
    expect(steps).to_have_count(6)
    expect(page).to_have_url(re.compile(r"world_size=4"))
    expect(page.locator("svg.steps g.step").first.locator("g.rank")).to_have_count(4)
    page.locator("#p-algorithm").select_option("tree")
    expect(page.locator("svg.steps .steps-body")).to_have_attribute("data-algorithm", "tree")
    shoot_pictures(page, "redrawn-tree-4")
    assert problems == []


def test_picture_in_a_question_explanation(page: Page, live_server: str,
                                           problems: list[str]) -> None:  # noqa: F811
    page.set_viewport_size({"width": 1100, "height": 900})
    page.goto(f"{live_server}/questions/pipeline-bubble-fraction?lang=en")
    page.get_by_label("Your answer, a number without unit").fill("0.75")
    page.get_by_role("button", name="Check my answer").click()
    figure = page.locator("#result .explanation figure.picture")
    expect(figure).to_be_visible()
    expect(figure.locator("svg.pipeline .pipeline-body")).to_have_attribute("data-stages", "4")
    shoot_pictures(page, "question-pipeline")
    no_axe_violations(page)
    page.goto(f"{live_server}/questions/ring-allreduce-bytes-per-rank?seed=3")
    page.locator("#language-select").select_option("zh")  # the answer is posted in it too
    page.locator("form.language button").click()
    expect(page.locator("html")).to_have_attribute("lang", "zh")
    page.locator("input#answer").fill("1 GB")
    page.locator("form.answer button[type=submit]").click()
    expect(page.locator("#result .explanation figure.picture").first).to_be_visible()
    expect(page.locator("#result svg.steps g.step").first).to_contain_text("第 1 步")
    shoot_pictures(page, "question-ring-zh")
    assert problems == []


def test_picture_of_progress(page: Page, live_server: str,
                             problems: list[str]) -> None:  # noqa: F811
    page.goto(f"{live_server}/questions/ring-allreduce-bytes-per-rank?lang=en")
    page.get_by_label("Your answer, in GB").fill("1.4 GB")
    page.get_by_role("button", name="Check my answer").click()
    expect(page.locator("#result figure.picture").first).to_be_visible()
    page.goto(f"{live_server}/progress?lang=en")
    expect(page.locator("svg.bars")).to_be_visible()
    assert shoot_pictures(page, "progress") >= 1
    no_axe_violations(page)
    assert problems == []
