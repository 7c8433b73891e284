"""The structured authoring form over HTTP: it renders every field, its htmx pieces come
from the calculator registry, Check names what fails, publishing is guarded, drafts are
kept, and a question edited through the form stays exactly the same."""

from __future__ import annotations

import html
import itertools
import re
from html.parser import HTMLParser

from sqlalchemy.orm import Session

from app.admin import authoring
from app.bank.loader import canonical, question_from_row
from app.bank.schema import LANGUAGES
from app.calculator.registry import REGISTRY
from tests.accounts.test_accounts import browser
from tests.admin.test_authoring import editor, version_on

_ids = itertools.count(1)


class FormFields(HTMLParser):
    """What a browser posts for the authoring form: (name, value) in document order."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.pairs: list[tuple[str, str]] = []
        self.inside = False
        self.select: tuple[str, list[tuple[str, bool]]] | None = None
        self.option: list | None = None
        self.textarea: tuple[str, list[str]] | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "form" and "authoring" in (a.get("class") or ""):
            self.inside = True
        if not self.inside:
            return
        if tag == "input" and a.get("name") and a.get("type", "text") not in ("submit",
                                                                              "button"):
            if a.get("type") in ("checkbox", "radio") and "checked" not in a:
                return
            self.pairs.append((a["name"], a.get("value", "on" if a.get("type") in (
                "checkbox", "radio") else "")))
        elif tag == "select" and a.get("name"):
            self.select = (a["name"], [])
        elif tag == "option" and self.select is not None:
            self.option = [a.get("value"), "selected" in a, []]
        elif tag == "textarea" and a.get("name"):
            self.textarea = (a["name"], [])

    def handle_data(self, data):
        if self.textarea is not None:
            self.textarea[1].append(data)
        elif self.option is not None:
            self.option[2].append(data)

    def handle_endtag(self, tag):
        if tag == "form" and self.inside:
            self.inside = False
        elif tag == "option" and self.option is not None and self.select is not None:
            value, selected, text = self.option
            self.select[1].append((value if value is not None else "".join(text), selected))
            self.option = None
        elif tag == "select" and self.select is not None:
            name, options = self.select
            chosen = [v for v, s in options if s] or [v for v, _ in options[:1]]
            self.pairs += [(name, v) for v in chosen[:1]]
            self.select = None
        elif tag == "textarea" and self.textarea is not None:
            text = "".join(self.textarea[1])
            self.pairs.append((self.textarea[0], text[1:] if text.startswith("\n") else text))
            self.textarea = None


def form_fields(page: str) -> list[tuple[str, str]]:
    parser = FormFields()
    parser.feed(page)
    return parser.pairs


def replace(pairs, **changes: str):
    changes = {k.replace("__", "."): v for k, v in changes.items()}
    return [(k, changes.get(k, v)) for k, v in pairs]


def submit(client, path: str, pairs, action: str | None = None, htmx: bool = False):
    data = [p for p in pairs if p[0] != "csrf_token"]
    data += [("csrf_token", client.cookies.get("csrftoken"))]
    if action:
        data.append(("action", action))
    body = "&".join(f"{_q(k)}={_q(v)}" for k, v in data)
    headers = {"Content-Type": "application/x-www-form-urlencoded"}
    if htmx:
        headers["HX-Request"] = "true"
    return client.post(path, content=body, headers=headers, follow_redirects=False)


def _q(text: str) -> str:
    from urllib.parse import quote_plus
    return quote_plus(text)


def stored(web_engine, slug: str) -> dict:
    with Session(web_engine) as session:
        return canonical(question_from_row(authoring.load(session, slug)))


def test_the_new_form_has_every_field_and_yaml_stays_a_click_away(client, web_engine):
    admin = editor(web_engine)
    page = admin.get("/admin/questions/new").text
    names = {name for name, _ in form_fields(page)}
    assert {"editor", "id", "kind", "topic", "seniority", "difficulty", "tags", "sources",
            "extra", "answer.calculator", "answer.value",
            "answer.tolerance_type", "answer.tolerance_value", "variants"} <= names
    assert {f"t.{lang}.{field}" for lang in LANGUAGES for field in (
        "title", "prompt", "explanation", "why_asked", "structure", "model_answer")} <= names
    assert '<datalist id="question-ids">' in page and 'value="ring-allreduce-steps"' in page
    for part in ("mistake", "choice", "rubric", "spoken", "follow_up"):
        assert f"/admin/questions/form/row?type={part}" in page
    assert "style=" not in page and "onclick" not in page
    yaml_page = admin.get("/admin/questions/new?editor=yaml").text
    assert 'name="text"' in yaml_page and 'name="answer.calculator"' not in yaml_page


def test_the_calculator_fragment_comes_from_the_registry(client, web_engine):
    admin = editor(web_engine)
    for name in ("collective", sorted(set(REGISTRY) - {"collective"})[0]):
        fragment = admin.get("/admin/questions/form/calculator",
                             params={"answer.calculator": name},
                             headers={"HX-Request": "true"}).text
        calc = REGISTRY[name]
        assert "<html" not in fragment
        for param in calc.params:
            assert f'name="answer.param.{param.name}"' in fragment
            if param.unit:
                assert f"({param.unit.base_unit})" in fragment
        for output in calc.outputs:
            assert f'<option value="{output.name}"' in fragment
    unknown = admin.get("/admin/questions/form/calculator",
                        params={"answer.calculator": "<nope>"}).text
    assert "There is no calculator" in unknown and "<nope>" not in unknown


def test_rows_are_added_and_removed_in_place(client, web_engine):
    admin = editor(web_engine)
    mistake = admin.get("/admin/questions/form/row?type=mistake").text
    row = re.search(r'name="mistake\.([a-z0-9]+)\.id"', mistake).group(1)
    assert all(f'name="mistake.{row}.text.{lang}"' in mistake for lang in LANGUAGES)
    assert 'hx-swap="delete"' in mistake and "<html" not in mistake
    choice = admin.get("/admin/questions/form/row?type=choice").text
    assert ".correct" in choice and all(f".feedback.{lang}" in choice for lang in LANGUAGES)
    assert 'name="rubric.' in admin.get("/admin/questions/form/row?type=rubric").text
    follow_up = admin.get("/admin/questions/form/row?type=follow_up").text
    assert 'name="follow_up"' in follow_up and 'list="question-ids"' in follow_up
    assert admin.get("/admin/questions/form/row?type=nothing").status_code == 404
    removed = admin.get("/admin/questions/form/remove")
    assert removed.status_code == 200 and removed.text == ""


def test_anonymous_visitors_get_no_piece_of_the_form(client):
    anonymous = browser()
    for path in ("/admin/questions/new", "/admin/questions/form/row?type=mistake",
                 "/admin/questions/form/calculator?answer.calculator=collective"):
        response = anonymous.get(path, follow_redirects=False)
        assert response.status_code in (302, 303, 401, 403)
        assert "answer.param" not in response.text and "mistake." not in response.text


def test_check_publish_and_draft_through_the_fields(client, web_engine):
    admin = editor(web_engine)
    slug = f"form-authored-{next(_ids)}"
    pairs = replace(form_fields(admin.get("/admin/questions/ring-allreduce-bytes-per-rank").text),
                    id=slug, answer__value="1.2 GB")
    pairs = [p for p in pairs if p[0] != "version"]
    checked = submit(admin, "/admin/questions/check", pairs, htmx=True)
    assert "<html" not in checked.text
    assert "answer.value" in checked.text
    assert "states 1.2 GB but the calculator gives 1.4 GB" in checked.text
    refused = submit(admin, "/admin/questions", pairs, "publish")
    assert refused.status_code == 422 and "Not published" in refused.text
    assert 'name="answer.value" value="1.2 GB"' in refused.text  # the form is kept
    assert 'name="text"' not in refused.text
    draft = submit(admin, "/admin/questions", pairs, "draft")
    assert draft.status_code == 303
    assert client.get(f"/questions/{slug}").status_code == 404
    page = admin.get(f"/admin/questions/{slug}").text
    assert 'value="1.2 GB"' in page
    fixed = replace(form_fields(page), answer__value="1400 MB")
    assert ("version", version_on(page)) in fixed
    assert submit(admin, f"/admin/questions/{slug}", fixed, "publish").status_code == 303
    for lang, title in (("en", "Bytes each rank sends"), ("zh", "环形 all-reduce")):
        public = client.get(f"/questions/{slug}?lang={lang}")
        assert public.status_code == 200 and title in public.text


def test_unreadable_fields_are_reported_and_nothing_is_saved(client, web_engine):
    admin = editor(web_engine)
    page = admin.get("/admin/questions/ring-allreduce-steps").text
    pairs = replace(form_fields(page), difficulty="hard", variants="world_size 4 8")
    checked = submit(admin, "/admin/questions/check", pairs, htmx=True)
    assert checked.status_code == 200
    assert "<code>variants</code>" in checked.text and "<code>difficulty</code>" in checked.text
    before = stored(web_engine, "ring-allreduce-steps")
    saved = submit(admin, "/admin/questions/ring-allreduce-steps", pairs, "draft")
    assert saved.status_code == 422 and 'value="hard"' in saved.text
    assert stored(web_engine, "ring-allreduce-steps") == before


def test_editing_through_the_fields_keeps_every_kind_identical(client, web_engine):
    admin = editor(web_engine)
    slugs = ["ring-allreduce-bytes-per-rank", "ring-allreduce-steps"]
    with Session(web_engine) as session:
        for kind in ("multi_choice", "open"):
            slugs.append(next(s for s in session.scalars(authoring.select(
                authoring.Question.slug).where(authoring.Question.kind == kind,
                                               authoring.Question.status == "published"))))
    for slug in slugs:
        before = stored(web_engine, slug)
        page = admin.get(f"/admin/questions/{slug}").text
        pairs = form_fields(page)
        checked = submit(admin, "/admin/questions/check", pairs, htmx=True)
        assert "Every check passes" in checked.text, (slug, html.unescape(checked.text)[:500])
        saved = submit(admin, f"/admin/questions/{slug}", pairs, "publish")
        assert saved.status_code == 303, slug
        assert stored(web_engine, slug) == before, slug
