"""Language negotiation, the switcher, localised pages and the English fallback."""

from __future__ import annotations

import re

import pytest
from sqlalchemy.orm import Session

from app.bank.checks import check_bank
from app.bank.loader import load_bank
from app.config import ROOT
from app.i18n import LANGUAGES
from app.i18n.negotiation import match, parse_accept_language
from app.i18n.router import safe_next
from tests.conftest import client_on, csrf_token

PAGES = ["/", "/questions", "/questions/ring-allreduce-bytes-per-rank", "/calculators",
         "/calculators/collective?op=all-reduce&world_size=8&message_bytes=800MB",
         "/questions/no-such-question"]
# One UI string per language that the base template always shows.
SKIP_LINK = {"en": "Skip to content", "fr": "Aller au contenu", "tr": "İçeriğe geç",
             "zh": "跳到正文"}


@pytest.mark.parametrize(("header", "expected"), [
    ("zh-TW,zh;q=0.9,en;q=0.5", "zh"),
    ("fr-CA", "fr"),
    ("xx", "en"),
    ("de-DE,tr;q=0.8", "tr"),
    ("en;q=0.1,fr;q=0.9", "fr"),
    ("fr;q=0", "en"),
    ("", "en"),
    ("*;q=0.5", "en"),
])
def test_accept_language(client, header, expected):
    client.cookies.clear()
    page = client.get("/", headers={"Accept-Language": header})
    assert f'<html lang="{expected}">' in page.text
    assert "Accept-Language" in page.headers["vary"]


def test_parse_and_match():
    assert parse_accept_language("a;q=0.2, b, c;q=bad") == ["b", "a"]
    assert match("zh-Hant-HK") == "zh" and match("tr-TR") == "tr" and match("!!") is None


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("path", PAGES)
def test_every_page_in_every_language(client, lang, path):
    sep = "&" if "?" in path else "?"
    page = client.get(f"{path}{sep}lang={lang}")
    assert page.status_code in (200, 404)
    assert f'<html lang="{lang}">' in page.text
    assert SKIP_LINK[lang] in page.text


def test_content_is_in_the_language_too(client):
    assert "环形 all-reduce" in client.get("/questions/ring-allreduce-bytes-per-rank?lang=zh").text
    assert "Octets envoyés" in client.get("/questions/ring-allreduce-bytes-per-rank?lang=fr").text


def test_numbers_are_formatted_for_the_locale(client):
    token = csrf_token(client, "/")
    page = client.post("/questions/ring-allreduce-bytes-per-rank/answer?lang=fr",
                       data={"csrf_token": token, "answer": "1.4 GB"})
    assert "1,4 GB" in page.text


def test_switcher_sets_a_cookie_and_redirects_on_site(client):
    token = csrf_token(client, "/")
    response = client.post("/language", data={"csrf_token": token, "lang": "tr",
                                              "next": "/questions?topic=memory&lang=fr"},
                           follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"] == "/questions?topic=memory"
    assert "lang=tr" in response.headers["set-cookie"]
    assert '<html lang="tr">' in client.get("/").text
    client.cookies.delete("lang")


@pytest.mark.parametrize("target", ["https://evil.example/", "//evil.example/x",
                                    "/\\evil.example", "javascript:alert(1)", "", None,
                                    "/ok\r\nSet-Cookie: x=1"])
def test_switcher_never_redirects_off_site(target):
    assert safe_next(target) == "/"


def test_switcher_refuses_a_post_without_token(client):
    client.cookies.clear()
    response = client.post("/language", data={"lang": "tr", "next": "/"},
                           follow_redirects=False)
    assert response.status_code == 403


def test_missing_translation_falls_back_to_english_and_says_so(engine):
    files = check_bank(ROOT / "question_bank").files
    ring = next(f for f in files if f.question.id == "ring-allreduce-bytes-per-rank")
    english_only = ring.question.model_copy(update={
        "translations": {"en": ring.question.translations["en"]}})
    with Session(engine) as session, session.begin():
        load_bank(session, [type(ring)(ring.path, english_only)])
    for client in client_on(engine):
        page = client.get("/questions/ring-allreduce-bytes-per-rank?lang=fr")
    assert '<html lang="fr">' in page.text
    assert "Bytes each rank sends" in page.text
    assert re.search(r'class="notice" lang="fr"', page.text)
