"""Every text of every question, in every language and in other draws, as a browser gets it.

The answer fragment (feedback, explanation, pictures, guidance, model answer, follow-ups)
of each question is fetched over HTTP for the default numbers and two other draws, and
read the way a person would: no raw TeX outside MathML and code, no space between two
Chinese characters, no English sentence on a French, Turkish or Chinese page (outside
code, sources and the terms kept in English), and explanations whose numbers are the
drawn ones.
"""

from __future__ import annotations

import re

import pytest

from app.bank.checks import check_bank
from app.config import ROOT
from app.i18n import LANGUAGES
from app.practice.grading import variant_params
from tests.conftest import csrf_token

BANK = sorted((f.question for f in check_bank(ROOT / "question_bank").files),
              key=lambda q: q.id)
HTMX = {"HX-Request": "true", "HX-Request-Type": "partial"}
OTHER_SEEDS = (101, 202)

RAW_TEX = re.compile(r"\$|\\(?:times|frac|cdot|text|approx|sqrt|le|ge|sum|mathrm)\b|\^\{|_\{")
CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
CJK_SPACE = re.compile(rf"[{CJK}][ \t\n\u00a0]+[{CJK}]")
# Words that only an English sentence is made of: four or more of them in one sentence.
ENGLISH_UNIT = re.compile(r"\d\s*(days|years)\b")
ENGLISH_WORDS = {"the", "and", "of", "is", "are", "with", "this", "that", "which", "you",
                 "your", "be", "by", "from", "each", "its", "it", "not", "when", "than",
                 "was", "were", "does", "into", "what", "why", "how", "there", "their"}


def answer_data(question) -> dict:
    if question.kind == "numeric":
        return {"answer": "1"}
    if question.kind == "open":
        return {"answer": "An answer.", "step": "assess",
                "rubric": question.rubric[:1]}
    return {"answer": question.choices[0].key}


def without(html: str, *tags: str) -> str:
    for tag in tags:
        html = re.sub(rf"<{tag}\b.*?</{tag}>", "\x00", html, flags=re.S)
    return html


def section(html: str, name: str) -> str:
    found = re.search(rf'<section class="{name}">(.*?)</section>', html, re.S)
    return found.group(1) if found else ""


def visible_text(html: str) -> str:
    """Text between tags; a tag boundary becomes a marker so that only spaces inside one
    run of text can sit between two characters."""
    text = re.sub(r"<[^>]+>", "\x00", html)
    return re.sub(r"&nbsp;", "\u00a0", text).replace("&amp;", "&")


def english_sentences(text: str) -> list[str]:
    found = []
    for sentence in re.split(r"[.!?。！？:;\x00\n]", text):
        words = re.findall(r"[A-Za-z']+", sentence)
        if sum(word.lower() in ENGLISH_WORDS for word in words) >= 4:
            found.append(sentence.strip())
    return found


def cases() -> list:
    found = []
    for question in BANK:
        for seed in (None, *(OTHER_SEEDS if question.variants else ())):
            found.append(pytest.param(question.id, seed, id=f"{question.id}-{seed or 0}"))
    return found


@pytest.fixture(scope="module")
def token(client):
    return csrf_token(client, "/questions")


@pytest.mark.parametrize(("slug", "seed"), cases())
def test_answer_fragment_reads_right_in_every_language(client, token, slug, seed):
    question = next(q for q in BANK if q.id == slug)
    explanations = {}
    for lang in LANGUAGES:
        data = {"csrf_token": token, **answer_data(question), **({"seed": seed} if seed else {})}
        response = client.post(f"/questions/{slug}/answer?lang={lang}", data=data,
                               headers=HTMX)
        assert response.status_code in (200, 422), (slug, lang, response.text[:300])
        html = response.text
        assert "Explanation" in html or lang != "en", (slug, html[:300])
        prose = without(html, "math", "code", "pre", "svg", "script")
        tex = RAW_TEX.findall(visible_text(prose))
        assert not tex, (slug, lang, seed, tex[:5])
        if lang == "zh":
            spaced = CJK_SPACE.findall(visible_text(prose))
            assert not spaced, (slug, seed, spaced[:5])
        if lang != "en":
            readable = re.sub(r'<section class="sources">.*?</section>', " ",
                              prose, flags=re.S)
            english = english_sentences(visible_text(readable))
            assert not english, (slug, lang, english[:3])
            unit_words = ENGLISH_UNIT.findall(visible_text(readable))  # "14,13 days"
            assert not unit_words, (slug, lang, unit_words[:3])
        explanations[lang] = section(html, "explanation")
    page = client.get(f"/questions/{slug}?lang=zh" + (f"&seed={seed}" if seed else ""))
    prompt = re.search(r'<div class="prompt">(.*?)</div>', page.text, re.S).group(1)
    assert not CJK_SPACE.findall(visible_text(without(prompt, "math", "code", "pre"))), slug
    assert not RAW_TEX.findall(visible_text(without(prompt, "math", "code", "pre"))), slug


@pytest.mark.parametrize("slug", [q.id for q in BANK if q.variants and q.kind == "numeric"])
def test_explanations_follow_the_draw(client, token, slug):
    """Two draws with different answers never show the same explanation, in any language."""
    question = next(q for q in BANK if q.id == slug)
    other = next(s for s in range(2, 200)
                 if variant_params(question, s) != variant_params(question, 1))
    seeds = [1, other]
    for lang in LANGUAGES:
        seen = set()
        for seed in seeds:
            response = client.post(f"/questions/{slug}/answer?lang={lang}",
                                   data={"csrf_token": token, "answer": "1", "seed": seed},
                                   headers=HTMX)
            expected = re.search(r"the answer is ([^<.]+)|la réponse est ([^<]+?)\.|"
                                 r"doğru yanıt ([^<]+?)\.|正确答案是([^<]+?)。", response.text)
            seen.add((section(response.text, "explanation"), expected.group(0)
                      if expected else ""))
        explanations = {e for e, _ in seen}
        answers = {a for _, a in seen}
        if len(answers) > 1:
            assert len(explanations) == len(answers), (slug, lang)
