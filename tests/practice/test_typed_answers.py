"""Answers typed the way each language writes numbers, through the form and the JSON API.

For every numeric question, its correct value and its named mistakes are written as an
engineer of each language would type them (decimal comma and space or point grouping,
French byte units, full-width digits in Chinese, a bare number in the question's unit)
and must be graded exactly as the value itself. Ambiguous or digit-dropping texts are
refused with a message in the page's language.
"""

from __future__ import annotations

import html
from contextlib import contextmanager

import pytest
from babel.numbers import format_decimal

from app.bank.calls import evaluate_call, output_unit, variant_combinations
from app.bank.checks import check_bank
from app.calculator.reading import canonical_unit, dimension_of_unit
from app.calculator.units import from_base
from app.config import ROOT
from app.i18n import LANGUAGES, current_language
from app.practice.feedback import problem_message
from app.practice.grading import Grade, variant_params
from tests.conftest import csrf_token

NUMERIC = sorted((f.question for f in check_bank(ROOT / "question_bank").files
                  if f.question.kind == "numeric"), key=lambda q: q.id)
HTMX = {"HX-Request": "true", "HX-Request-Type": "partial"}

# How each language writes a unit (the canonical symbol where it has no word of its own).
UNIT_WORDS = {
    "fr": {"B": "octets", "kB": "ko", "MB": "Mo", "GB": "Go", "TB": "To", "KiB": "Kio",
           "MiB": "Mio", "GiB": "Gio", "TiB": "Tio", "day": "jours", "year": "ans",
           "h": "heures"},
    "tr": {"B": "bayt", "s": "saniye", "min": "dakika", "h": "saat", "day": "gün",
           "year": "yıl"},
    "zh": {"B": "字节", "s": "秒", "ms": "毫秒", "min": "分钟", "h": "小时", "day": "天",
           "year": "年"},
    "en": {"day": "days", "year": "years"},
}
FULL_WIDTH = str.maketrans("0123456789.,", "０１２３４５６７８９．，")


def written(value: float, unit: str | None, lang: str, with_unit: bool = True) -> str:
    """``value`` (in the base unit) as a ``lang`` engineer types it, in ``unit``."""
    if unit == "%":
        number = format_decimal(round(value * 100, 6), format="#,##0.######", locale=lang)
        return {"fr": f"{number} %", "tr": f"%{number}"}.get(lang, f"{number}%") \
            if with_unit else number
    if unit:
        canonical = canonical_unit(unit)
        value = from_base(value, dimension_of_unit(canonical), canonical)
    if abs(value) >= 1e15:  # written as scientific notation, with the language's decimal mark
        mantissa, exponent = f"{value:.6e}".split("e")
        number = format_decimal(float(mantissa), format="0.######", locale=lang) + \
            f"e{int(exponent)}"
    else:
        number = format_decimal(float(f"{value:.6g}"), format="#,##0.############", locale=lang)
    if lang == "zh":
        number = number.translate(FULL_WIDTH)
    if not unit or not with_unit:
        return number
    word = UNIT_WORDS[lang].get(canonical_unit(unit), canonical_unit(unit))
    return f"{number} {word}"


def cases() -> list[tuple[str, int | None]]:
    """Every numeric question with its default numbers, and one other draw if it has any."""
    found = []
    for question in NUMERIC:
        found.append((question.id, None))
        if question.variants:
            found.append((question.id, 7))
    return found


def expected_of(question, seed):
    return evaluate_call(question.answer.calculator, variant_params(question, seed))


@pytest.fixture(scope="module")
def token(client):
    return csrf_token(client, "/questions")


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize(("slug", "seed"), cases())
def test_the_correct_value_as_each_language_writes_it(client, token, slug, seed, lang):
    question = next(q for q in NUMERIC if q.id == slug)
    expected = expected_of(question, seed)
    unit = question.answer.unit
    texts = {written(expected, unit, lang), written(expected, unit, lang, with_unit=False)}
    for text in texts:
        data = {"csrf_token": token, "answer": text, **({"seed": seed} if seed else {})}
        page = client.post(f"/questions/{slug}/answer?lang={lang}", data=data, headers=HTMX)
        assert page.status_code == 200, (text, page.text[:500])
        assert 'class="grade good"' in page.text, (slug, lang, text)
        api = client.post(f"/api/v1/questions/{slug}/answer?lang={lang}",
                          json={"answer": text, "seed": seed})
        assert api.status_code == 200, api.text
        body = api.json()
        assert body["correct"], (slug, lang, text, body)
        assert body["answer_unit"] == unit
        assert body["read_as"]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_named_mistakes_as_each_language_writes_them(client, lang):
    checked = 0
    for question in NUMERIC:
        expected = expected_of(question, None)
        for mistake in question.answer.mistakes:
            wrong = evaluate_call(mistake.calculator)
            text = written(wrong, question.answer.unit, lang)
            body = client.post(f"/api/v1/questions/{question.id}/answer?lang={lang}",
                               json={"answer": text}).json()
            assert not body["correct"], (question.id, mistake.id, text)
            if abs(wrong - expected) > 0.05 * abs(expected):
                assert body["mistake"] is not None, (question.id, mistake.id, text, body)
            checked += 1
    assert checked > 50


@contextmanager
def language(lang: str):
    token = current_language.set(lang)
    try:
        yield
    finally:
        current_language.reset(token)


def message_in(lang: str, code: str, **args: str) -> str:
    with language(lang):
        return problem_message(Grade(kind="numeric", problem=code, problem_args=args,
                                     answer_unit="GB"))


@pytest.mark.parametrize(("lang", "text", "code", "args"), [
    ("fr", "1.400 Go", "ambiguous", {"text": "1.400 Go", "decimal": "1,400",
                                     "grouped": "1 400"}),
    ("fr", "1 40 Go", "bad-grouping", {"text": "1 40 Go"}),
    ("tr", "1,400.5 GB", "mixed-marks", {"text": "1,400.5 GB"}),
    ("zh", "1 4000 MB", "bad-grouping", {"text": "1 4000 MB"}),
    ("en", "1.400,5 GB", "mixed-marks", {"text": "1.400,5 GB"}),
    ("fr", "3,25 Xo", "unknown-unit", {"unit": "Xo"}),
])
def test_ambiguous_or_digit_dropping_text_is_refused_in_the_page_language(
        client, token, lang, text, code, args):
    slug = "zero3-per-gpu"
    expected = html.escape(message_in(lang, code, **args), quote=False)
    page = client.post(f"/questions/{slug}/answer?lang={lang}",
                       data={"csrf_token": token, "answer": text}, headers=HTMX)
    assert page.status_code == 422
    assert expected in page.text, (expected, page.text[:600])
    api = client.post(f"/api/v1/questions/{slug}/answer?lang={lang}", json={"answer": text})
    assert api.status_code == 422
    assert api.json()["problem"] == code
    assert api.json()["feedback"] == message_in(lang, code, **args)


def test_the_reading_is_echoed_in_the_page_language(client, token):
    page = client.post("/questions/zero3-per-gpu/answer?lang=fr",
                       data={"csrf_token": token, "answer": "3,25"}, headers=HTMX)
    with language("fr"):
        from app.i18n import _
        echo = _("Read as %(reading)s (a number without unit is read in %(unit)s).",
                 reading="3,25 GB", unit="GB")
    assert html.escape(echo, quote=False) in page.text


def test_every_variant_draw_is_graded_with_its_own_numbers(client):
    """The API grades a redrawn question against that draw's answer, in every language."""
    question = next(q for q in NUMERIC if q.id == "ring-allreduce-bytes-per-rank")
    draws = list(variant_combinations(question))
    assert len(draws) > 4
    for seed in (3, 11, 19):
        expected = expected_of(question, seed)
        unit = output_unit(question.answer.calculator)
        assert unit == "B"
        for lang in LANGUAGES:
            body = client.post(f"/api/v1/questions/{question.id}/answer?lang={lang}",
                               json={"answer": written(expected, "GB", lang), "seed": seed})
            assert body.json()["correct"], (seed, lang)
