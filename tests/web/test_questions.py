"""Browse and practise pages, their htmx fragments, and the questions API."""

from __future__ import annotations

import re

import pytest

from app.bank.checks import check_bank
from app.config import ROOT
from app.i18n import LANGUAGES
from tests.conftest import csrf_token

BANK = {f.question.id: f.question for f in check_bank(ROOT / "question_bank").files}
RING = "ring-allreduce-bytes-per-rank"
HTMX = {"HX-Request": "true", "HX-Request-Type": "partial"}


def of_kind(kind: str) -> str:
    return next(q.id for q in BANK.values() if q.kind == kind)


def post_answer(client, slug, data, headers=None):
    token = csrf_token(client, f"/questions/{slug}")
    return client.post(f"/questions/{slug}/answer", data={"csrf_token": token, **data},
                       headers=headers or {})


class TestBrowse:
    def test_lists_every_question(self, client):
        page = client.get("/questions")
        assert page.status_code == 200
        assert f"{len(BANK)} questions" in page.text

    def test_filters_combine_and_stay_in_links(self, client):
        page = client.get("/questions?seniority=junior&topic=collectives")
        expected = [q for q in BANK.values() if q.seniority == "junior"
                    and q.topic == "collectives"]
        assert f"{len(expected)} question" in page.text
        assert all(f"/questions/{q.id}\"" in page.text for q in expected)
        assert 'value="junior" selected' in page.text

    def test_facet_counts_ignore_their_own_filter(self, client):
        page = client.get("/questions?seniority=junior")
        juniors = sum(1 for q in BANK.values() if q.seniority == "junior")
        seniors = sum(1 for q in BANK.values() if q.seniority == "senior")
        assert f"Junior ({juniors})" in page.text and f"Senior ({seniors})" in page.text

    @pytest.mark.parametrize(("query", "slug"), [
        ("ALL-REDUCE", RING),            # case-insensitive
        ("环形", RING),                   # Chinese substring
        ("octets envoyés", RING),        # French, accents
        ("OCTETS ENVOYES", RING),        # accents dropped on both sides
        ("halka", RING),                 # Turkish
        ("气泡", "pipeline-bubble-fraction"),  # the glossary's term finds every name of it
        ("bulle", "pipeline-bubble-fraction"),
        ("bubble", "pipeline-bubble-fraction"),
    ])
    def test_text_search(self, client, query, slug):
        page = client.get("/questions", params={"q": query})
        assert f"/questions/{slug}\"" in page.text

    def test_turkish_dotted_and_dotless_i(self, client):
        dotless = client.get("/questions", params={"q": "İŞLEM"})  # capital dotted İ
        plain = client.get("/questions", params={"q": "islem"})
        assert dotless.status_code == plain.status_code == 200
        count = re.search(r"(\d+) question", plain.text).group(1)
        assert re.search(r"(\d+) question", dotless.text).group(1) == count

    def test_tag_filter(self, client):
        page = client.get("/questions?tag=ring")
        assert f"/questions/{RING}\"" in page.text
        assert all(f"/questions/{q.id}\"" not in page.text for q in BANK.values()
                   if "ring" not in q.tags)

    def test_htmx_gets_the_results_block_only(self, client):
        page = client.get("/questions?topic=memory", headers=HTMX)
        assert "<html" not in page.text and 'class="questions"' in page.text

    def test_pagination(self, client):
        first = client.get("/questions")
        second = client.get("/questions?page=2")
        assert 'rel="next"' in first.text
        assert second.status_code == 200 and 'rel="prev"' in second.text

    @pytest.mark.parametrize("query", ["topic=nonsense", "difficulty=9", "page=-1",
                                       "kind=<script>", "tag=a%20b", "q=" + "x" * 5000])
    def test_tampered_filters_never_fail(self, client, query):
        page = client.get(f"/questions?{query}")
        assert page.status_code == 200
        assert "<script>" not in page.text.split("<main")[1]


class TestPractise:
    def test_every_question_page_renders_in_every_language(self, client):
        for slug in BANK:
            for lang in LANGUAGES:
                page = client.get(f"/questions/{slug}?lang={lang}")
                assert page.status_code == 200, (slug, lang)
                assert f'<html lang="{lang}">' in page.text

    def test_unknown_question_is_a_404_page(self, client):
        page = client.get("/questions/no-such-question")
        assert page.status_code == 404
        assert "no-such-question" in page.text and "<html" in page.text

    def test_numeric_right_in_several_units(self, client):
        for answer in ("1.4 GB", "1400 MB", "1.3 GiB", "1.4e9 B", "1.4"):
            response = post_answer(client, RING, {"answer": answer}, HTMX)
            assert response.status_code == 200
            assert "Correct" in response.text, answer
            assert "<html" not in response.text

    def test_named_mistake_is_explained(self, client):
        response = post_answer(client, RING, {"answer": "700 MB"}, HTMX)
        assert "This is a known mistake" in response.text
        assert "reduce-scatter half" in response.text

    def test_unit_slips_are_named(self, client):
        assert "other unit family" in post_answer(client, RING, {"answer": "1400 MiB"}).text
        bits = post_answer(client, "gpt3-175b-training-memory", {"answer": "22.4 TB"}).text
        assert "factor of 8" in bits
        assert "known mistake" in post_answer(client, RING, {"answer": "11.2 GB"}).text

    def test_worked_formula_and_calculator_link(self, client):
        text = post_answer(client, RING, {"answer": "1 GB"}).text
        assert "2(p−1)/p · S" in text
        assert "/calculators/collective?op=all-reduce" in text

    @pytest.mark.parametrize(("answer", "message"), [
        ("", "Write or choose an answer first"),
        ("abc", "We could not read a number"),
        ("5 s", "is not a unit of bytes"),
        ("9" * 500, "too long"),
        ("1e999 GB", "too large to be a number"),
    ])
    def test_bad_numeric_answers_get_a_clear_message(self, client, answer, message):
        response = post_answer(client, RING, {"answer": answer}, HTMX)
        assert response.status_code == 422
        assert message in response.text

    def test_plain_post_without_javascript_returns_the_whole_page(self, client):
        response = post_answer(client, RING, {"answer": "1.4 GB"})
        assert "<html" in response.text and "Correct" in response.text

    def test_new_numbers_redraws_and_grades_with_them(self, client):
        redirect = client.get(f"/questions/{RING}/new-numbers", follow_redirects=False)
        assert redirect.status_code == 303
        seed = int(redirect.headers["location"].split("seed=")[1])
        page = client.get(redirect.headers["location"])
        assert f'name="seed" value="{seed}"' in page.text
        from app.practice.grading import grade

        expected = grade(BANK[RING], ["1 B"], seed).expected
        answer = f"{expected} B"
        response = post_answer(client, RING, {"answer": answer, "seed": str(seed)}, HTMX)
        assert "Correct" in response.text

    def test_tampered_seed_is_refused(self, client):
        response = post_answer(client, RING, {"answer": "1 GB", "seed": "-4"})
        assert response.status_code == 422

    def test_single_choice(self, client):
        question = BANK["ring-allreduce-bytes-choice"]
        right = next(c.key for c in question.choices if c.correct)
        wrong = next(c.key for c in question.choices if not c.correct)
        assert "Correct" in post_answer(client, question.id, {"answer": right}, HTMX).text
        response = post_answer(client, question.id, {"answer": wrong}, HTMX).text
        assert "Not quite" in response
        feedback = question.translations["en"].choice_feedback[wrong]
        assert feedback.split()[0] in response

    def test_multi_choice_needs_every_right_key(self, client):
        slug = of_kind("multi_choice")
        question = BANK[slug]
        correct = [c.key for c in question.choices if c.correct]
        token = csrf_token(client, f"/questions/{slug}")
        both = client.post(f"/questions/{slug}/answer",
                           data={"csrf_token": token, "answer": correct}, headers=HTMX)
        assert "Correct" in both.text

    def test_tampered_choice_key(self, client):
        response = post_answer(client, "ring-allreduce-bytes-choice", {"answer": "z"}, HTMX)
        assert response.status_code == 422 and "Unknown choice" in response.text

    def test_open_question_self_assessment(self, client):
        slug = of_kind("open")
        question = BANK[slug]
        first = post_answer(client, slug, {"answer": "I would shard the optimizer state."}, HTMX)
        assert "Model answer" in first.text and 'name="rubric"' in first.text
        ticked = question.rubric[: len(question.rubric) - 1]
        token = csrf_token(client, f"/questions/{slug}")
        second = client.post(f"/questions/{slug}/answer", headers=HTMX, data={
            "csrf_token": token, "step": "assess", "answer": "x", "rubric": ticked})
        assert f"You covered {len(ticked)} of {len(question.rubric)} key points" in second.text

    def test_answer_text_is_escaped(self, client):
        slug = of_kind("open")
        response = post_answer(client, slug, {"answer": "<script>alert(1)</script>"}, HTMX)
        assert "<script>alert(1)" not in response.text


class TestApi:
    def test_list_with_filters(self, client):
        body = client.get("/api/v1/questions?seniority=senior&lang=zh").json()
        assert body["total"] == sum(1 for q in BANK.values() if q.seniority == "senior")
        assert all(item["seniority"] == "senior" for item in body["items"])

    def test_list_refuses_bad_filters(self, client):
        assert client.get("/api/v1/questions?difficulty=7").status_code == 422
        assert client.get("/api/v1/questions?lang=de").status_code == 422

    def test_one_question_without_its_answer(self, client):
        body = client.get(f"/api/v1/questions/{RING}?lang=tr").json()
        assert body["lang"] == "tr" and "800 MB" in body["prompt"]
        text = str(body)
        assert "1.4 GB" not in text and "mistakes" not in text and "explanation" not in body

    def test_answer(self, client):
        body = client.post(f"/api/v1/questions/{RING}/answer", json={"answer": "700 MB"}).json()
        assert body["correct"] is False and body["mistake"] == "reduce-scatter-only"
        right = client.post(f"/api/v1/questions/{RING}/answer", json={"answer": "1400 MB"})
        assert right.json() | {"feedback": ""} == right.json() | {"feedback": ""}
        assert right.json()["correct"] is True and right.json()["score"] == 1.0

    def test_answer_problems(self, client):
        response = client.post(f"/api/v1/questions/{RING}/answer", json={"answer": "lots"})
        assert response.status_code == 422 and response.json()["problem"] == "not-a-number"
        assert client.post("/api/v1/questions/nope/answer", json={"answer": "1"}).status_code \
            == 404
        assert client.post(f"/api/v1/questions/{RING}/answer", json={}).status_code == 422
