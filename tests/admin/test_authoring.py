"""Authoring in /admin: the calculator guards publishing, drafts, revisions, concurrent
edits, archiving, and hostile text rendered inert."""

from __future__ import annotations

import itertools
import re

import yaml

from app.config import ROOT
from tests.accounts.test_accounts import browser, make_user, sign_in

RING = ROOT / "question_bank/questions/collectives/ring-allreduce-bytes-per-rank.yaml"
_ids = itertools.count(1)


def question_text(slug: str, value: str = "1.4 GB", prompt_extra: str = "") -> str:
    data = yaml.safe_load(RING.read_text())
    data["id"] = slug
    data["answer"]["value"] = value
    for texts in data["translations"].values():
        texts["prompt"] += prompt_extra
    return yaml.safe_dump(data, allow_unicode=True, sort_keys=False)


def editor(web_engine):
    client = browser()
    sign_in(client, make_user(web_engine, role="editor"))
    return client


def post(client, path: str, **data: str):
    return client.post(path, follow_redirects=False,
                       data={"csrf_token": client.cookies.get("csrftoken"), **data})


def version_on(page: str) -> str:
    return re.search(r'name="version" value="(\d+)"', page).group(1)


def test_the_calculator_guards_publishing(client, web_engine):
    admin = editor(web_engine)
    slug = f"authored-{next(_ids)}"
    wrong = post(admin, "/admin/questions", text=question_text(slug, "1.2 GB"),
                 action="publish")
    assert wrong.status_code == 422
    assert "states 1.2 GB but the calculator gives 1.4 GB" in wrong.text
    assert "1.2 GB" in wrong.text and "<textarea" in wrong.text  # the text is kept
    draft = post(admin, "/admin/questions", text=question_text(slug, "1.2 GB"),
                 action="draft")
    assert draft.status_code == 303
    assert client.get(f"/questions/{slug}").status_code == 404  # drafts are not public
    dashboard = admin.get("/admin").text
    assert "Drafts failing checks" in dashboard and f"/admin/questions/{slug}" in dashboard
    page = admin.get(f"/admin/questions/{slug}").text
    fixed = post(admin, f"/admin/questions/{slug}", text=question_text(slug, "1400 MB"),
                 version=version_on(page), action="publish")
    assert fixed.status_code == 303
    for lang, title in (("en", "Bytes each rank sends"), ("zh", "环形 all-reduce")):
        public = client.get(f"/questions/{slug}?lang={lang}")
        assert public.status_code == 200 and title in public.text


def test_check_is_an_htmx_fragment_naming_fields(client, web_engine):
    admin = editor(web_engine)
    broken = question_text("checked-one", "1.2 GB").replace("  tr:", "  xx:")
    response = post(admin, "/admin/questions/check", text=broken)
    assert "answer.value" in response.text and "translations.tr" in response.text
    fragment = admin.post("/admin/questions/check", headers={"HX-Request": "true"},
                          data={"csrf_token": admin.cookies.get("csrftoken"),
                                "text": question_text("checked-two")})
    assert "<html" not in fragment.text and "Every check passes" in fragment.text
    assert "<math" in fragment.text  # the preview renders like the public page
    junk = post(admin, "/admin/questions/check", text="id: [unclosed")
    assert "(yaml)" in junk.text


def test_second_concurrent_save_is_refused_and_nothing_is_lost(client, web_engine):
    first, second = editor(web_engine), editor(web_engine)
    slug = f"concurrent-{next(_ids)}"
    post(first, "/admin/questions", text=question_text(slug), action="publish")
    version = version_on(first.get(f"/admin/questions/{slug}").text)
    assert version_on(second.get(f"/admin/questions/{slug}").text) == version
    ok = post(first, f"/admin/questions/{slug}", version=version, action="publish",
              text=question_text(slug, prompt_extra="\nFIRST EDIT"))
    assert ok.status_code == 303
    late = post(second, f"/admin/questions/{slug}", version=version, action="publish",
                text=question_text(slug, prompt_extra="\nSECOND EDIT"))
    assert late.status_code == 409
    assert "Someone saved this question" in late.text and "SECOND EDIT" in late.text
    assert "FIRST EDIT" in client.get(f"/questions/{slug}").text
    revisions = first.get(f"/admin/questions/{slug}/revisions").text
    assert revisions.count("status-published") >= 2 and "FIRST EDIT" in revisions


def test_restore_an_old_revision_as_a_draft(client, web_engine):
    admin = editor(web_engine)
    slug = f"restored-{next(_ids)}"
    post(admin, "/admin/questions", text=question_text(slug, prompt_extra="\nOLD"),
         action="publish")
    version = version_on(admin.get(f"/admin/questions/{slug}").text)
    post(admin, f"/admin/questions/{slug}", version=version, action="publish",
         text=question_text(slug, prompt_extra="\nNEW"))
    page = admin.get(f"/admin/questions/{slug}/revisions").text
    oldest = re.findall(rf"/admin/questions/{slug}/revisions/(\d+)/restore", page)[-1]
    assert post(admin, f"/admin/questions/{slug}/revisions/{oldest}/restore").status_code == 303
    edit = admin.get(f"/admin/questions/{slug}").text
    assert "OLD" in edit and "A draft is saved" in edit  # the restored text, to publish
    live = client.get(f"/questions/{slug}").text
    assert "NEW" in live and "OLD" not in live  # the published version stays live


def test_a_draft_of_a_published_question_keeps_it_live_until_published(client, web_engine):
    admin = editor(web_engine)
    slug = f"live-{next(_ids)}"
    post(admin, "/admin/questions", text=question_text(slug, prompt_extra="\nLIVE"),
         action="publish")
    version = version_on(admin.get(f"/admin/questions/{slug}").text)
    saved = post(admin, f"/admin/questions/{slug}", version=version, action="draft",
                 text=question_text(slug, prompt_extra="\nWORK IN PROGRESS"))
    assert saved.status_code == 303
    live = client.get(f"/questions/{slug}")
    assert live.status_code == 200 and "LIVE" in live.text
    assert "WORK IN PROGRESS" not in live.text
    edit = admin.get(f"/admin/questions/{slug}").text
    assert "WORK IN PROGRESS" in edit and "A draft is saved" in edit
    version = version_on(edit)
    post(admin, f"/admin/questions/{slug}", version=version, action="publish",
         text=question_text(slug, prompt_extra="\nWORK IN PROGRESS"))
    assert "WORK IN PROGRESS" in client.get(f"/questions/{slug}").text


def test_archive_hides_and_publishing_again_restores(client, web_engine):
    admin = editor(web_engine)
    slug = f"archived-{next(_ids)}"
    post(admin, "/admin/questions", text=question_text(slug), action="publish")
    version = version_on(admin.get(f"/admin/questions/{slug}").text)
    assert post(admin, f"/admin/questions/{slug}", version=version, action="archive",
                text="").status_code == 303
    assert client.get(f"/questions/{slug}").status_code == 404
    assert f"/admin/questions/{slug}" in admin.get("/admin/questions?status=archived").text
    version = version_on(admin.get(f"/admin/questions/{slug}").text)
    post(admin, f"/admin/questions/{slug}", version=version, action="publish",
         text=question_text(slug))
    assert client.get(f"/questions/{slug}").status_code == 200


def test_hostile_text_is_inert_on_public_and_admin_pages(client, web_engine):
    admin = editor(web_engine)
    slug = f"hostile-{next(_ids)}"
    hostile = ('\n<script>alert(1)</script> " onmouseover="x" {{ 7*7 }} '
               '[click](javascript:alert(2)) <a hx-get="/admin/users">x</a>')
    post(admin, "/admin/questions", text=question_text(slug, prompt_extra=hostile),
         action="publish")
    for page in (client.get(f"/questions/{slug}").text,
                 admin.get(f"/admin/questions/{slug}").text):
        body = page.split('<main id="main">', 1)[1]
        assert "<script>alert(1)" not in body
        assert 'href="javascript:' not in body
        assert '<a hx-get="/admin/users">' not in body
        assert "{{ 7*7 }}" in body or "{{ 7*7 }}" in body.replace("&#123;", "{")
        assert "49" not in body.split("7*7")[0][-5:]


def test_changing_the_english_text_marks_the_other_languages_stale(client, web_engine):
    admin = editor(web_engine)
    slug = f"stale-{next(_ids)}"
    post(admin, "/admin/questions", text=question_text(slug), action="publish")

    def save(text: str, **extra: str):
        version = version_on(admin.get(f"/admin/questions/{slug}").text)
        return post(admin, f"/admin/questions/{slug}", version=version, action="publish",
                    text=text, **extra)

    data = yaml.safe_load(question_text(slug))
    data["translations"]["en"]["explanation"] += "\nA new English paragraph."
    save(yaml.safe_dump(data, allow_unicode=True))
    page = admin.get(f"/admin/questions/{slug}").text
    assert "The English text changed after these translations: fr, tr, zh" in page
    assert f"/admin/questions/{slug}" in admin.get("/admin").text  # listed to review
    data["translations"]["fr"]["explanation"] += "\nUn nouveau paragraphe."
    save(yaml.safe_dump(data, allow_unicode=True))
    assert "these translations: tr, zh" in admin.get(f"/admin/questions/{slug}").text
    save(yaml.safe_dump(data, allow_unicode=True), confirm_translations="yes")
    assert "these translations" not in admin.get(f"/admin/questions/{slug}").text
