"""Moodle XML and GIFT imports: hand-written files of each format, entries refused with
their line, no DTD, a round trip through our own exports, and the preview-then-apply flow
that saves drafts."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.admin import interop_import
from app.admin.interop import _numbers, _texts, to_gift, to_moodle_xml
from app.admin.interop_import import (
    FileProblem,
    detect_format,
    read_gift,
    read_moodle,
    slugify,
    to_question,
    to_text,
    unique_slug,
)
from app.bank.calls import output_unit, parse_value
from app.bank.checks import check_bank
from app.config import ROOT
from app.questions.models import Question, QuestionRevision
from tests.accounts.test_accounts import browser, make_user, sign_in

FIXTURES = Path(__file__).parent / "fixtures"
MOODLE = (FIXTURES / "moodle_sample.xml").read_bytes()
GIFT = (FIXTURES / "gift_sample.gift").read_bytes()
BANK = {f.question.id: f.question for f in check_bank(ROOT / "question_bank").files}


def imported(payload: bytes, reader):
    """{line: (question, notes)} and [(line, message)] refused, as the preview sees them."""
    entries, refused = reader(payload)
    drafts, problems = {}, [(r.line, r.message) for r in refused]
    for entry in entries:
        try:
            drafts[entry.line] = to_question(entry, "collectives", "mid", f"q-{entry.line}",
                                             "test")
        except interop_import.Malformed as exc:
            problems.append((entry.line, str(exc)))
    return drafts, sorted(problems)


def en(question):
    return question.translations["en"]


def choices(question):
    return [(en(question).choices[c.key], c.correct) for c in question.choices]


# ----------------------------------------------------------------------------- Moodle XML


def test_moodle_xml_file_every_feature():
    drafts, _ = imported(MOODLE, read_moodle)
    assert sorted(drafts) == [9, 40, 63, 100]  # the category entry is not a question

    single, notes = drafts[9]
    assert single.kind == "single_choice" and single.difficulty == 2
    assert single.topic == "collectives" and single.seniority == "mid"
    assert list(single.translations) == ["en"]
    assert en(single).title == "Ring all-reduce: steps on 8 ranks"
    prompt = en(single).prompt
    assert prompt.startswith("How many **steps** does a ring all-reduce take on 8 ranks?")
    assert "R & D's ring <1 MB>" in prompt  # entities decoded: shown as text, not HTML
    assert "<p>" not in prompt and "<strong>" not in prompt and "alert" not in prompt
    assert "[image: A ring of 8 GPUs]" in prompt and any("images" in n for n in notes)
    assert choices(single) == [("14", True), ("*7*", False), ("3", False)]  # <em>7</em>
    assert en(single).choice_feedback == {"b": "Only the reduce-scatter half.",
                                          "c": "log2 N is recursive doubling."}
    assert "- 7 steps\n- 7 more" in en(single).explanation
    assert "Right: 2(N−1)." in en(single).explanation  # the correct answer's feedback
    assert single.tags == ["all-reduce", "ring", "distributed-training"]  # + the category

    multi, notes = drafts[40]
    assert multi.kind == "multi_choice"
    assert en(multi).prompt == ("Which states does **ZeRO stage 2** shard across "
                                "data-parallel ranks?")  # Markdown kept
    assert choices(multi) == [("Optimizer state", True), ("Gradients", True),
                              ("Parameters", False), ("Activations", False)]
    assert en(multi).choice_feedback["c"] == "That is stage 3."

    numeric, notes = drafts[63]
    assert numeric.kind == "numeric"
    assert numeric.answer.calculator.name == "bind-a-calculator"
    assert numeric.answer.value == "1.4 GB"  # the unit with multiplier 1
    assert numeric.answer.tolerance.type == "absolute"
    assert numeric.answer.tolerance.value == pytest.approx(0.028e9)  # 0.028 GB, in bytes
    explanation = en(numeric).explanation
    assert explanation.startswith("2(N-1)/N times the buffer.\\\nEach chunk goes round "
                                  "twice.")  # a line break: moodle_auto_format
    assert "1.4 ± 0.028 GB" in explanation and "Bind it to a calculator" in explanation
    assert "- 1.6 ± 0.05 GB (50%): Close: you sent the whole buffer twice." in explanation
    assert "- 0.7 ± 0.01 GB (0%): Only the **reduce-scatter** half." in explanation
    assert any("2 other answer(s)" in n for n in notes)

    truefalse, _ = drafts[100]
    assert truefalse.kind == "single_choice"
    assert choices(truefalse) == [("True", False), ("False", True)]
    assert en(truefalse).choice_feedback == {"a": "No: three stages wait at any time."}


def test_moodle_xml_refusals_name_their_line():
    _, refused = imported(MOODLE, read_moodle)
    assert refused == [
        (115, "unsupported question type 'essay'"),
        (120, "multichoice question has no correct answer: no choice is at 100% (the best is "
              "50%), and Moodle refuses it too (one of the choices should be 100%, so that it "
              "is possible to get a full grade)"),
        (128, "numerical answer 'abc' is not a number"),
        (134, "unsupported question type 'matching'"),
        (139, "unsupported question type 'shortanswer'"),
    ]


@pytest.mark.parametrize("payload", [
    (FIXTURES / "moodle_xxe.xml").read_bytes(),
    (FIXTURES / "moodle_xxe.xml").read_text().replace("UTF-8", "UTF-16").encode("utf-16"),
    b'<?xml version="1.0"?>\n<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 '
    b'"&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>\n<quiz>&lol2;</quiz>',
], ids=["xxe", "xxe-utf16", "billion-laughs"])
def test_doctype_and_entities_are_refused(payload):
    with pytest.raises(FileProblem, match=r"^line 2: a DOCTYPE or ENTITY declaration is not "
                                          r"accepted"):
        read_moodle(payload)


@pytest.mark.parametrize(("payload", "message"), [
    (b"<quiz><question type='multichoice'>", "line 1: the XML is not well-formed (no element "
                                             "found)"),
    (b"<quiz>\n<question>&nbsp;</question></quiz>", "line 2: the XML is not well-formed "
                                                    "(undefined entity)"),
    (b"<html><body/></html>", "line 1: the document is <html>, not <quiz>"),
    (b"<quiz>\n</quiz>", "the file has no questions"),
])
def test_unreadable_moodle_files_say_why(payload, message):
    with pytest.raises(FileProblem, match=re.escape(message)):
        read_moodle(payload)


# ----------------------------------------------------------------------------- GIFT


def test_gift_file_every_feature():
    drafts, _ = imported(GIFT, read_gift)
    # Comments and the category are skipped: the first question starts on line 7.
    assert sorted(drafts) == [7, 15, 22, 24, 26, 28, 33, 35]

    single, _ = drafts[7]
    assert single.kind == "single_choice"
    assert en(single).title == "Ring all-reduce steps"
    assert en(single).prompt == "How many **steps** does a ring all-reduce take on 8 ranks?"
    assert choices(single) == [("14", True), ("7", False), ("3", False)]
    assert en(single).choice_feedback == {"b": "Only the reduce-scatter half.",
                                          "c": "log2 N is recursive doubling."}
    assert "2(N-1): a reduce-scatter then an all-gather." in en(single).explanation

    multi, _ = drafts[15]
    assert multi.kind == "multi_choice"
    assert en(multi).title == "ZeRO stage 2: what is sharded?"  # \: in a title
    assert choices(multi) == [("Optimizer state", True), ("Gradients", True),
                              ("Parameters", False)]
    assert en(multi).choice_feedback == {"c": "That is stage 3."}
    assert en(multi).explanation.startswith("Stage 2 shards optimizer state and gradients.")

    escapes, _ = drafts[22]
    assert en(escapes).prompt == "Is a = b ~ c # d {e} : f written with escapes?\\\nYes."
    assert choices(escapes) == [("the escaped one", True), ("the plain one", False)]

    untitled, _ = drafts[24]
    assert en(untitled).title == "Which collective sums and shares?"

    numeric, _ = drafts[26]
    assert numeric.kind == "numeric" and numeric.answer.value == 1.4
    assert (numeric.answer.tolerance.type, numeric.answer.tolerance.value) == ("absolute", 0.028)
    assert "**800 MB**" in en(numeric).prompt  # [markdown]

    partial, _ = drafts[28]
    assert partial.answer.value == 3.5 and partial.answer.tolerance.value == 0.1
    assert "- 3 ± 0.5 (50%): Rounded down." in en(partial).explanation

    ranged, _ = drafts[33]
    assert ranged.answer.value == 3.5 and ranged.answer.tolerance.value == 0.5

    truth, _ = drafts[35]
    assert choices(truth) == [("True", True), ("False", False)]
    assert en(truth).choice_feedback == {"b": "It is one."}
    assert "Right." in en(truth).explanation


def test_gift_refusals_name_their_line():
    _, refused = imported(GIFT, read_gift)
    assert refused == [
        (37, "unsupported question type 'essay'"),
        (39, "numerical answer 'abc' is not a number"),
        (41, "multiple-answer multichoice question has no correct answer: its positive "
             "grades add up to 0%, not 100%, and Moodle refuses it too (the positive grades you "
             "have chosen do not add up to 100%)"),
        (43, "unsupported question type 'matching'"),
        (45, "unsupported question type 'shortanswer'"),
        (47, "the answer block '{' is not closed with '}'"),
    ]


def test_gift_odd_entries():
    _, refused = imported(b"Two right {=a =b ~c}\n\nNo block here\n\nHow many? {#1:x}\n\n"
                          b"::T:: Weird {~%abc%a ~b}\n", read_gift)
    assert refused == [
        (1, "single-answer multichoice question has 2 answers at 100%; a single choice has "
            "exactly one correct answer"),
        (3, "no answer block {…}: this is a description, not a question"),
        (5, "tolerance 'x' is not a number"),
        (7, "answer weight 'abc' is not a number"),
    ]
    with pytest.raises(FileProblem, match="not UTF-8"):
        read_gift(b"\xff\xfe\x00bad")
    with pytest.raises(FileProblem, match="no questions"):
        read_gift(b"// only a comment\n\n$CATEGORY: x\n")


# ----------------------------------------------------------------------------- pieces


def test_text_conversion():
    assert to_text("<p>a&lt;b</p><p>c <em>d</em></p>", "html") == ("a<b\n\nc *d*", 0)
    assert to_text("line one\nline <b>two</b>", "moodle_auto_format") == (
        "line one\\\nline **two**", 0)
    assert to_text("x<y and z>w <span>kept</span>", "markdown") == ("x<y and z>w kept", 0)
    assert to_text("<b>literal</b>", "plain_text") == ("<b>literal</b>", 0)
    assert to_text("<style>p{}</style><img alt='plot'>", "html") == ("[image: plot]", 1)


def test_slugs_are_unique():
    assert slugify("ZeRO stage 2: what is sharded?") == "zero-stage-2-what-is-sharded"
    assert unique_slug("Ring", {"ring", "ring-2"}) == "ring-3"
    assert unique_slug("环形", set()) == "imported-question"


def test_format_detection():
    assert detect_format("bank.zip", b"not a zip") == "zip"
    assert detect_format("quiz.XML", b"") == "moodle"
    assert detect_format("quiz.txt", b"<p>") == "gift"
    assert detect_format("upload", b"\xef\xbb\xbf <?xml") == "moodle"
    assert detect_format("upload", b"PK\x03\x04...") == "zip"
    assert detect_format("upload", b"::a:: b {=c ~d}") == "gift"


# ----------------------------------------------------------------------------- round trip


ROUND_TRIP = [q for q in BANK.values() if q.kind != "open"]


@pytest.mark.parametrize("export", [to_moodle_xml, to_gift], ids=["moodle", "gift"])
def test_round_trip_through_our_exports(export):
    essay = next(q for q in BANK.values() if q.kind == "open")
    reader = read_moodle if export is to_moodle_xml else read_gift
    entries, refused = reader(export([*ROUND_TRIP, essay], "en").text.encode())
    assert [r.message for r in refused] == ["unsupported question type 'essay'"]
    assert len(entries) == len(ROUND_TRIP)
    for original, entry in zip(ROUND_TRIP, entries, strict=True):
        draft, _ = to_question(entry, original.topic, original.seniority, "x", "test")
        assert draft.kind == original.kind, original.id
        assert en(draft).title == original.id  # the exports name questions by id
        if original.kind == "numeric":
            numbers = _numbers(original)
            unit = next(iter(numbers.units), None) if export is to_moodle_xml else None
            stated = f"{numbers.value:.10g} {unit}" if unit else numbers.value
            if isinstance(stated, float):
                assert draft.answer.value == pytest.approx(stated, rel=1e-9), original.id
            else:
                assert draft.answer.value == stated, original.id
            scale = parse_value(f"1 {unit}", output_unit(original.answer.calculator)) \
                if unit else 1.0
            assert draft.answer.tolerance.value == pytest.approx(
                numbers.tolerance * scale, rel=1e-6)
            for _, wrong in numbers.mistakes:  # named mistakes survive as text
                assert f"- {wrong:.10g} ± " in en(draft).explanation
        else:
            shown = _texts(original, "en")  # the exports carry the texts as candidates see them
            # The import turns Moodle's \\(…\\) back into our $…$: the texts come back whole.
            expected = [(shown.choices[c.key].strip(), c.correct) for c in original.choices]
            assert choices(draft) == expected, original.id
            wrong = {shown.choices[k].strip(): text.strip() for k, text in
                     shown.choice_feedback.items()}
            assert {en(draft).choices[k]: text for k, text in
                    en(draft).choice_feedback.items()} == wrong, original.id


# ----------------------------------------------------------------------------- the web flow


def editor(web_engine):
    client = browser()
    sign_in(client, make_user(web_engine, role="editor"))
    return client


def upload(client, name: str, payload: bytes, **fields: str):
    return client.post("/admin/import", follow_redirects=False, data={
        "csrf_token": client.cookies.get("csrftoken"), "action": "preview", **fields},
        files={"file": (name, payload, "application/octet-stream")})


def apply(client, preview_page: str):
    fields = {name: html.unescape(value) for name, value in re.findall(
        r'<input type="hidden" name="(\w+)" value="([^"]*)"',
        preview_page.split('name="action" value="apply"', 1)[1])}
    return client.post("/admin/import", follow_redirects=False, data={
        "csrf_token": client.cookies.get("csrftoken"), "action": "apply", **fields})


def imported_slugs(page: str) -> list[str]:
    return re.findall(r'href="/admin/questions/([a-z0-9-]+)"', page)


def test_moodle_upload_preview_then_apply_saves_drafts(client, web_engine):
    admin = editor(web_engine)
    preview = upload(admin, "quiz.xml", MOODLE, topic="collectives", seniority="senior")
    assert preview.status_code == 200
    page = preview.text
    assert "Preview: nothing is saved yet" in page and "Moodle XML" in page
    assert "line 128: numerical answer &#39;abc&#39; is not a number" in page
    assert "line 120: multichoice question has no correct answer" in page
    assert "line 115: unsupported question type &#39;essay&#39;" in page
    assert "must be bound to a calculator" in page
    assert "<code>ring-all-reduce-steps-on-8-ranks</code>" in page
    with Session(web_engine) as session:
        assert session.scalar(select(func.count()).where(
            Question.slug == "ring-all-reduce-steps-on-8-ranks")) == 0  # nothing yet

    applied = apply(admin, page)
    assert applied.status_code == 200 and "Imported as drafts" in applied.text
    slugs = imported_slugs(applied.text)
    assert len(slugs) == 4 and "ring-all-reduce-steps-on-8-ranks" in slugs
    with Session(web_engine) as session:
        rows = session.scalars(select(Question).where(Question.slug.in_(slugs))).all()
        assert {r.status for r in rows} == {"draft"}
        assert {(r.topic, r.seniority, r.difficulty) for r in rows} == {
            ("collectives", "senior", 2)}
        assert {r.kind for r in rows} == {"single_choice", "multi_choice", "numeric"}
        assert session.scalar(select(func.count()).select_from(QuestionRevision).where(
            QuestionRevision.question_id.in_([r.id for r in rows]))) == 4
    for slug in slugs:
        assert client.get(f"/questions/{slug}").status_code == 404  # drafts are not public
    assert "Ring all-reduce: steps on 8 ranks" not in client.get(
        "/questions?q=ring").text
    assert "ring-all-reduce-steps-on-8-ranks" in admin.get("/admin").text  # failing checks

    numeric = next(s for s in slugs if s.startswith("bytes-each-rank"))
    assert admin.get(f"/admin/questions/{numeric}").status_code == 200
    form = admin.get(f"/admin/questions/{numeric}?editor=yaml").text
    assert "bind-a-calculator" in form and "value: 1.4 GB" in form
    version = re.search(r'name="version" value="(\d+)"', form).group(1)
    text = re.search(r"<textarea[^>]*>(.*?)</textarea>", form, re.DOTALL).group(1)
    published = admin.post(f"/admin/questions/{numeric}", follow_redirects=False, data={
        "csrf_token": admin.cookies.get("csrftoken"), "text": html.unescape(text),
        "version": version, "action": "publish"})
    assert published.status_code == 422  # the checks still guard publishing
    assert "unknown calculator &#39;bind-a-calculator&#39;" in published.text


def test_gift_upload_and_slugs_made_unique(client, web_engine):
    admin = editor(web_engine)
    missing = upload(admin, "quiz.txt", GIFT)
    assert missing.status_code == 422 and "Choose the topic and seniority" in missing.text
    wrong = upload(admin, "quiz.gift", GIFT, topic="cooking", seniority="mid")
    assert wrong.status_code == 422
    first = upload(admin, "quiz.txt", GIFT, topic="memory", seniority="junior")
    assert "GIFT" in first.text and "line 47: the answer block" in first.text
    slugs = imported_slugs(apply(admin, first.text).text)
    assert "ring-all-reduce-steps" in slugs and len(slugs) == 8
    again = upload(admin, "quiz.gift", GIFT, topic="memory", seniority="junior")
    assert "<code>ring-all-reduce-steps-2</code>" in again.text


def test_unreadable_uploads_give_a_message_not_an_error(client, web_engine):
    admin = editor(web_engine)
    for name, payload, message in [
        ("empty.xml", b"", "the file is empty"),
        ("empty.gift", b"  \n\n", "the file is empty"),
        ("broken.xml", b"<quiz>\n<question type='essay'>\n</quiz>",
         "line 3: the XML is not well-formed (mismatched tag)"),
        ("xxe.xml", (FIXTURES / "moodle_xxe.xml").read_bytes(),
         "line 2: a DOCTYPE or ENTITY declaration is not accepted"),
        ("latin1.gift", "Caf\u00e9 {=a ~b}".encode("latin-1"), "the file is not UTF-8 text"),
    ]:
        response = upload(admin, name, payload, topic="memory", seniority="mid")
        assert response.status_code == 200, name
        assert "cannot be imported" in response.text and message in response.text, name
        assert 'name="action" value="apply"' not in response.text
    assert "root:" not in upload(admin, "xxe.xml", (FIXTURES / "moodle_xxe.xml").read_bytes(),
                                 topic="memory", seniority="mid").text


def test_apply_is_one_transaction(client, web_engine, monkeypatch):
    admin = editor(web_engine)
    page = upload(admin, "q.gift", b"::Tx one:: a {=a ~b}\n\n::Tx two:: b {=a ~b}\n",
                  topic="memory", seniority="mid").text
    real_save, calls = interop_import.authoring.save, []

    def failing_save(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("the database went away")
        return real_save(*args, **kwargs)

    monkeypatch.setattr(interop_import.authoring, "save", failing_save)
    assert apply(admin, page).status_code == 500
    with Session(web_engine) as session:
        assert session.scalar(select(func.count()).where(
            Question.slug.in_(["tx-one", "tx-two"]))) == 0


def test_only_signed_in_editors_with_csrf_import(client, web_engine):
    anonymous = browser()
    response = anonymous.post("/admin/import", follow_redirects=False, data={
        "csrf_token": anonymous.cookies.get("csrftoken"), "action": "preview",
        "topic": "memory", "seniority": "mid"}, files={"file": ("q.gift", GIFT, "text/plain")})
    assert response.status_code in (303, 401, 403)
    assert "Preview" not in response.text
    admin = editor(web_engine)
    forged = admin.post("/admin/import", follow_redirects=False, data={
        "action": "preview", "topic": "memory", "seniority": "mid"},
        files={"file": ("q.gift", GIFT, "text/plain")})
    assert forged.status_code == 403
    damaged = admin.post("/admin/import", data={
        "csrf_token": admin.cookies.get("csrftoken"), "action": "apply", "format": "gift",
        "topic": "nowhere", "seniority": "mid", "payload": ""})
    assert damaged.status_code == 422
