"""A question asked in percent shows the answer in percent in every language, not the
calculator's fraction ("la réponse est 0,3827" was what a French candidate read)."""

from __future__ import annotations

import re

import pytest

from tests.conftest import csrf_token

SLUG = "mfu-gqa-attention-flops"  # answer.unit: '%'; the calculator gives a fraction
HTMX = {"HX-Request": "true"}


@pytest.mark.parametrize(("lang", "typed", "expected"), [
    ("en", "1", "you answered 1 %"),
    ("fr", "1", "vous avez répondu 1 %"),
    ("tr", "1", "yanıtınız %1"),
    ("zh", "1", "你的答案是 1%"),
])
def test_a_percentage_answer_is_shown_as_a_percentage(client, lang, typed, expected):
    token = csrf_token(client, "/questions")
    response = client.post(f"/questions/{SLUG}/answer?lang={lang}", headers=HTMX,
                           data={"csrf_token": token, "answer": typed})
    text = re.sub(r"<[^>]+>", "", response.text)
    text = re.sub(r"&nbsp;|&#8239;|[\u00a0\u202f]", " ", text)  # (narrow) no-break spaces
    assert expected in text, text[:600]
    verdict = next(line for line in text.splitlines() if expected in line)
    assert re.search(r"38[.,]27", verdict) and not re.search(r"0[.,]38", verdict), verdict
