"""Pictures on the pages: calculator pages (query string and htmx), question explanations
drawn with the question's own (variant) numbers, progress; in every language."""

from __future__ import annotations

import math
import re

import pytest

from app.bank.calls import shown_params
from app.bank.checks import check_bank
from app.calculator import run
from app.calculator.registry import value_from_text
from app.config import ROOT
from app.i18n import LANGUAGES
from app.practice.grading import variant_params
from tests.conftest import csrf_token
from tests.pictures.conftest import by_class, svgs, texts

HTMX = {"HX-Request": "true"}
BANK = {f.question.id: f.question for f in check_bank(ROOT / "question_bank").files}
PAGES = {
    "collective": "/calculators/collective?op=all-reduce&world_size=8&message_bytes=800MB",
    "model-memory": "/calculators/model-memory?params=7.5e9&zero_stage=1&dp=64",
    "activation-memory": "/calculators/activation-memory?seq_len=2048&micro_batch=1"
                         "&hidden=12288&heads=96&tp=8&sequence_parallel=true",
    "pipeline-bubble": "/calculators/pipeline-bubble?stages=4&microbatches=8&schedule=1f1b",
}
KINDS = {"collective": ["steps", "compare", "scaling"], "model-memory": ["stacked-bars"],
         "activation-memory": ["stacked-bars"], "pipeline-bubble": ["pipeline"]}
STEP_LABEL = {"en": "Step 1", "fr": "Étape 1", "tr": "Adım 1", "zh": "第 1 步"}


def kinds(root_svgs):
    return [s.get("class").split()[1] for s in root_svgs]


def no_style(html: str) -> None:
    assert not re.search(r"<svg[^>]*\sstyle=|<[a-z]+ [^>]*\bstyle=\"", html)


@pytest.mark.parametrize("name", sorted(PAGES))
def test_calculator_page_opened_with_a_query_string_draws_at_once(client, name):
    page = client.get(PAGES[name])
    assert page.status_code == 200 and "<html" in page.text
    found = svgs(page.text)
    assert kinds(found) == KINDS[name]
    assert all(s.find("title") is not None and s.find("desc") is not None for s in found)
    no_style(page.text)


@pytest.mark.parametrize("name", sorted(PAGES))
def test_htmx_redraw_returns_the_result_block_with_its_pictures(client, name):
    page = client.get(PAGES[name], headers=HTMX)
    assert page.status_code == 200 and "<html" not in page.text
    assert kinds(svgs(page.text)) == KINDS[name]


def test_htmx_redraw_follows_the_parameters(client):
    page = client.get(PAGES["collective"].replace("world_size=8", "world_size=4"),
                      headers=HTMX)
    steps = svgs(page.text)[0]
    assert len(by_class(steps, "step")) == 6
    assert all(len(by_class(s, "rank")) == 4 for s in by_class(steps, "step"))


def test_no_picture_without_a_result_or_with_errors(client):
    assert svgs(client.get("/calculators/collective").text) == []
    page = client.get("/calculators/collective?op=all-reduce&world_size=0&message_bytes=1")
    assert page.status_code == 422 and svgs(page.text) == []


def test_picture_only_input_is_a_field_and_is_validated(client):
    page = client.get("/calculators/model-memory")
    assert 'name="activation_bytes"' in page.text
    drawn = client.get(PAGES["model-memory"] + "&activation_bytes=12GB", headers=HTMX)
    parts = by_class(svgs(drawn.text)[0], "segment")
    assert [float(p.get("data-value")) for p in parts if p.get("data-part")
            == "activation_bytes"] == [12e9] * 4
    bad = client.get(PAGES["model-memory"] + "&activation_bytes=12 parsecs")
    assert bad.status_code == 422 and "activation_bytes" in bad.text


@pytest.mark.parametrize("lang", LANGUAGES)
def test_pictures_in_every_language(client, lang):
    page = client.get(f"{PAGES['collective']}&lang={lang}")
    assert f'<html lang="{lang}">' in page.text
    assert STEP_LABEL[lang] in texts(svgs(page.text)[0])


def _question_for(client, name: str):
    """A live numeric question bound to ``name`` (other tests may archive some)."""
    return next(q for q in BANK.values() if q.answer and q.answer.calculator.name == name
                and q.kind == "numeric" and client.get(f"/questions/{q.id}").status_code == 200)


def _answer(client, slug, seed=None, lang="en"):
    token = csrf_token(client, f"/questions/{slug}")
    data = {"csrf_token": token, "answer": "1"}
    if seed:
        data["seed"] = str(seed)
    return client.post(f"/questions/{slug}/answer?lang={lang}", data=data, headers=HTMX)


@pytest.mark.parametrize("name", sorted(PAGES))
def test_question_explanation_draws_its_calculator_with_its_numbers(client, name):
    question = _question_for(client, name)
    seed = 7 if question.variants else None
    params = shown_params(question, variant_params(question, seed))
    outputs = run(name, **{k: value_from_text(v) if isinstance(v, str) else v
                           for k, v in params.items()})
    page = _answer(client, question.id, seed)
    assert page.status_code == 200
    explanation = page.text[page.text.index('<section class="explanation">'):]
    found = svgs(explanation)
    assert kinds(found) == KINDS[name]
    written = [float(e.get("data-value")) for s in found for e in s.iter() if e.get("data-value")]
    if name == "collective":
        steps = by_class(found[0], "steps-body")[0]
        assert int(steps.get("data-world-size")) == params["world_size"]
        for group in by_class(found[1], "group"):  # the bar of the question's algorithm
            chosen = [b for b in by_class(group, "bar") if b.get("data-chosen") == "true"]
            metric = group.get("data-metric")
            if metric in outputs:
                assert math.isclose(float(chosen[0].get("data-value")), outputs[metric])
    elif name in ("model-memory", "activation-memory"):  # the bar of the question's case
        chosen = next(b for b in by_class(found[0], "bar") if b.get("data-chosen") == "true")
        assert math.isclose(float(chosen.get("data-total")), outputs["total_bytes"])
    else:
        assert any(math.isclose(v, outputs["bubble_fraction_of_total"]) for v in written)
        body = by_class(found[0], "pipeline-body")[0]
        assert int(body.get("data-stages")) == params["stages"]


def test_question_with_variants_draws_the_variant_shown(client):
    question = BANK["ring-allreduce-bytes-per-rank"]
    for seed in (3, 11, 12345):
        params = shown_params(question, variant_params(question, seed))
        n = params["world_size"]
        outputs = run("collective", **{k: value_from_text(v) if isinstance(v, str) else v
                                       for k, v in params.items()})
        found = svgs(_answer(client, question.id, seed).text)
        steps = by_class(found[0], "steps-body")[0]
        assert int(steps.get("data-world-size")) == n
        totals = [float(e.get("data-value")) for e in by_class(found[0], "line")
                  if e.get("data-value")]
        assert math.isclose(totals[-1], outputs["bytes_sent_per_rank"])


def test_question_pictures_are_translated(client):
    page = _answer(client, "pipeline-bubble-fraction", lang="zh")
    assert "气泡" in "".join(texts(svgs(page.text)[0]))


def test_progress_draws_accuracy_by_topic(client):
    client.cookies.clear()
    _answer(client, "ring-allreduce-bytes-per-rank")
    _answer(client, "pipeline-bubble-fraction")
    page = client.get("/progress")
    found = svgs(page.text)
    bars = by_class(found[0], "bar")
    assert len(bars) == 2 and all(float(b.get("data-value")) == 0 for b in bars)
    assert found[0].find("title").text == "Accuracy by topic"
    assert "<table" in page.text
    no_style(page.text)
    client.cookies.clear()
