"""In Chromium: sign in, author a numeric question through the structured form (pick the
calculator, fill its parameters, add a mistake, write four languages), state a wrong
answer, see the check fail, fix it, publish it, and find it on the public page in two
languages."""

from __future__ import annotations

import re

import yaml
from playwright.sync_api import Page, expect
from sqlalchemy.orm import Session

from app.accounts.service import create_user
from app.bank.schema import LANGUAGES
from app.config import ROOT
from tests.e2e.test_journeys import no_axe_violations, problems  # noqa: F401 - fixture

RING = ROOT / "question_bank/questions/collectives/ring-allreduce-bytes-per-rank.yaml"
PASSWORD = "a long enough passphrase"


def fill_texts(page: Page, lang: str, texts: dict) -> None:
    """One language's texts: show that language, then fill its fields."""
    page.locator(f"label[for=show-{lang}]").click()
    guidance = texts["guidance"]
    for field, value in (("title", texts["title"]), ("prompt", texts["prompt"]),
                         ("explanation", texts["explanation"]),
                         ("why", guidance["why_asked"]),
                         ("structure", "\n".join(guidance["structure"])),
                         ("model", guidance["model_answer"])):
        page.locator(f"#t-{lang}-{field}").fill(value)
    for i, follow_up in enumerate(texts["follow_ups"]):  # the spoken follow-up rows
        row = page.locator("#spoken-rows .form-row").nth(i)
        row.locator(f"textarea[id$='-ask-{lang}']").fill(follow_up["ask"])
        row.locator(f"textarea[id$='-answer-{lang}']").fill(follow_up["answer"])
        row.locator(f"textarea[id$='-points-{lang}']").fill("\n".join(follow_up["points"]))
    page.locator(f"[id$='-text-{lang}']:visible").fill(texts["mistakes"]["reduce-scatter-only"])


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
    page.get_by_label("Id", exact=True).fill("authored-in-a-browser")
    page.get_by_label("Topic").select_option("collectives")
    page.get_by_label("Tags (comma-separated)").fill("all-reduce, ring")
    page.get_by_label("Sources (one per line)").fill("\n".join(data["sources"]))

    # The calculator's parameters come from the registry once it is picked.
    page.locator("#answer-calculator").select_option("collective")
    expect(page.locator("#answer-param-world_size")).to_be_visible()
    page.locator("#answer-output").select_option("bytes_sent_per_rank")
    page.locator("#answer-param-op").select_option("all-reduce")
    page.locator("#answer-param-world_size").fill("8")
    page.locator("#answer-param-message_bytes").fill("800 MB")
    page.get_by_label("Stated answer (with its unit)").fill("1.2 GB")
    page.get_by_label("Unit the prompt asks for (GB, ms, min…; empty for a count)").fill("GB")

    # A follow-up added and one removed in place; a mistake with its texts.
    page.get_by_role("button", name="Add a follow-up").click()
    page.get_by_role("button", name="Add a follow-up").click()
    expect(page.locator("#follow-up-rows input")).to_have_count(2)
    page.locator("#follow-up-rows input").first.fill("ring-allreduce-steps")
    page.locator("#follow-up-rows button").last.click()
    expect(page.locator("#follow-up-rows input")).to_have_count(1)
    page.get_by_role("button", name="Add a mistake").click()
    page.locator("#mistake-rows input[id$='-id']").fill("reduce-scatter-only")
    page.locator("#mistake-rows textarea[id$='-params']").fill("op=reduce-scatter")

    for _ in data["translations"]["en"]["follow_ups"]:
        page.get_by_role("button", name="Add a spoken follow-up").click()
    expect(page.locator("#spoken-rows .form-row")).to_have_count(
        len(data["translations"]["en"]["follow_ups"]))
    for lang in LANGUAGES:
        texts = data["translations"][lang]
        texts["prompt"] = texts["prompt"].replace("{world_size}", "8").replace(
            "{message_bytes}", "800 MB")
        if lang == "en":
            texts["title"] = "Ring traffic, authored in a browser"
        fill_texts(page, lang, texts)

    page.get_by_role("button", name="Check").click()
    expect(page.locator("#check")).to_contain_text("states 1.2 GB but the calculator gives")
    no_axe_violations(page)

    page.get_by_role("button", name="Publish").click()
    expect(page.locator(".notice")).to_contain_text("Not published")
    expect(page.get_by_label("Stated answer (with its unit)")).to_have_value("1.2 GB")

    page.get_by_label("Stated answer (with its unit)").fill("1400 MB")
    page.get_by_role("button", name="Check").click()
    expect(page.locator("#check")).to_contain_text("Every check passes")
    page.get_by_role("button", name="Publish").click()
    expect(page.locator(".notice")).to_contain_text("Published")
    expect(page.locator("#mistake-rows input[id$='-id']")).to_have_value("reduce-scatter-only")
    no_axe_violations(page)

    for lang, title in (("en", "authored in a browser"), ("fr", "Octets envoyés")):
        page.goto(f"{live_server}/questions/authored-in-a-browser?lang={lang}")
        expect(page.locator("h1")).to_contain_text(title)
    # The refused publication answers 422 on purpose; Chromium logs any 4xx.
    assert [p for p in problems if "status of 422" not in p] == []
