"""Moodle XML and GIFT exports: what they carry, and the report of what they cannot."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from app.admin.interop import gift_escape, to_gift, to_moodle_xml
from app.bank.checks import check_bank
from app.config import ROOT
from tests.accounts.test_accounts import browser, make_user, sign_in

BANK = {f.question.id: f.question for f in check_bank(ROOT / "question_bank").files}
RING = BANK["ring-allreduce-bytes-per-rank"]


def test_numeric_question_in_moodle_xml_keeps_units_tolerance_and_mistakes():
    root = ET.fromstring(to_moodle_xml([RING], "en").text.split("?>", 1)[1])
    question = root.find("question")
    assert question.get("type") == "numerical"
    answers = question.findall("answer")
    right = answers[0]
    assert right.get("fraction") == "100" and right.find("text").text == "1.4"  # in GB
    assert float(right.find("tolerance").text) == pytest.approx(0.028)  # 2% relative
    wrong = {a.find("text").text: a.find("feedback/text").text for a in answers[1:]}
    assert "0.7" in wrong and "reduce-scatter half" in wrong["0.7"]  # a named mistake
    units = [(u.find("unit_name").text, float(u.find("multiplier").text))
             for u in question.findall("units/unit")]
    assert units[0] == ("GB", 1.0)
    assert ("MB", 1000.0) in units
    assert dict(units)["GiB"] == pytest.approx(1e9 / 2**30)


def test_choice_and_open_questions_in_moodle_xml():
    multi = next(q for q in BANK.values() if q.kind == "multi_choice")
    essay = next(q for q in BANK.values() if q.kind == "open")
    root = ET.fromstring(to_moodle_xml([multi, essay], "fr").text.split("?>", 1)[1])
    first, second = root.findall("question")
    assert first.get("type") == "multichoice" and first.find("single").text == "false"
    fractions = [float(a.get("fraction")) for a in first.findall("answer")]
    assert sum(f for f in fractions if f > 0) == pytest.approx(100)
    assert second.get("type") == "essay"
    assert multi.translations["fr"].prompt.split()[0] in first.find("questiontext/text").text


def test_gift_export_and_its_losses():
    exported = to_gift([RING, BANK["ring-allreduce-steps"]], "en")
    numeric, choice = exported.text.strip().split("\n\n")
    assert numeric.startswith("::ring-allreduce-bytes-per-rank::")
    assert "{#\n=1.4:0.028\n=%0%0.7:0.028#" in numeric
    assert "{=" in choice or " =" in choice
    report = "\n".join(exported.notes)
    assert "variants" in report and "units (the number is in GB)" in report
    assert "languages other than en" in report


def test_gift_escapes_its_control_characters():
    assert gift_escape("a = b ~ c # d {x} : y \\ z") == \
        "a \\= b \\~ c \\# d \\{x\\} \\: y \\\\ z"


def test_admin_downloads(client, web_engine):
    admin = browser()
    sign_in(admin, make_user(web_engine, role="editor"))
    xml = admin.get("/admin/export.moodle.xml?lang=tr&topic=memory")
    assert xml.status_code == 200 and xml.headers["content-type"].startswith("application/xml")
    assert "attachment" in xml.headers["content-disposition"]
    ET.fromstring(xml.content)
    assert admin.get("/admin/export.gift?lang=zh").status_code == 200
    assert "not carried" in admin.get("/admin/export.report.txt").text
    assert admin.get("/admin/export.gift?lang=de").status_code == 422
    assert admin.get("/admin/export.docx").status_code == 404


NUMERIC = [q for q in BANK.values() if q.kind == "numeric"]


def test_exports_carry_the_numbers_the_question_is_asked_with():
    """No raw {param} or {=…} left: Moodle's students need the numbers to answer."""
    xml = to_moodle_xml(NUMERIC, "fr").text
    gift = to_gift(NUMERIC, "fr").text
    for text in (xml, gift):
        assert "{world_size}" not in text and "{=" not in text and "{message_bytes}" not in text
    root = ET.fromstring(xml.split("?>", 1)[1])
    ring = next(q for q in root.findall("question") if q.find("name/text").text == RING.id)
    assert "8 GPU" in ring.find("questiontext/text").text


def test_numeric_answers_are_exported_in_the_unit_the_question_asks_for():
    for question in NUMERIC:
        unit = question.answer.unit
        if not unit or unit == "%":
            continue
        root = ET.fromstring(to_moodle_xml([question], "en").text.split("?>", 1)[1])
        units = [(u.find("unit_name").text, float(u.find("multiplier").text))
                 for u in root.findall("question/units/unit")]
        from app.calculator.reading import canonical_unit
        assert units[0] == (canonical_unit(unit), 1.0), question.id
    minutes = next(q for q in NUMERIC if q.answer.unit == "min")
    root = ET.fromstring(to_moodle_xml([minutes], "en").text.split("?>", 1)[1])
    units = dict((u.find("unit_name").text, float(u.find("multiplier").text))
                 for u in root.findall("question/units/unit"))
    assert units["s"] == pytest.approx(60)  # 1 min = 60 s: the answer times 60 in seconds


def test_math_is_written_for_moodles_mathjax_filter():
    mfu = BANK["mfu-from-throughput"]
    text = to_moodle_xml([mfu], "en").text
    assert "\\(" in text and "\\[" in text and "$" not in text


def test_gift_keeps_the_explanation_as_general_feedback_with_its_paragraphs():
    exported = to_gift([RING], "en").text
    assert "####A ring all-reduce is a reduce-scatter" in exported
    assert "\\n" in exported.split("####", 1)[1]  # paragraphs kept as GIFT's \n


def test_a_control_character_is_removed_and_reported_not_fatal():
    texts = RING.translations["en"]
    broken = RING.model_copy(update={"translations": {
        **RING.translations, "en": texts.model_copy(update={"prompt": texts.prompt + "\x07"})}})
    exported = to_moodle_xml([broken], "en")
    ET.fromstring(exported.text.split("?>", 1)[1])  # still a valid document
    assert "control characters" in "\n".join(exported.notes)


def test_topic_is_not_repeated_in_the_tags():
    question = RING.model_copy(update={"tags": [RING.topic, *RING.tags]})
    root = ET.fromstring(to_moodle_xml([question], "en").text.split("?>", 1)[1])
    tags = [t.find("text").text for t in root.findall("question/tags/tag")]
    assert len(tags) == len(set(tags))


def test_math_reaches_moodles_mathjax_through_markdown():
    """Moodle renders the exported texts as Markdown, which reads \\( as an escaped
    parenthesis: the export writes \\\\( so that MathJax receives \\( … \\)."""
    from markdown_it import MarkdownIt

    from app.admin.interop import moodle_text

    exported = moodle_text(r"Each rank sends $2\frac{N-1}{N} S$ of $\{x_i\}$, or $$S$$.")
    assert exported == (r"Each rank sends \\(2\frac{N-1}{N} S\\) of \\(\\{x_i\\}\\), or "
                        r"\\[S\\].")
    html = MarkdownIt("commonmark").render(exported)
    assert r"\(2\frac{N-1}{N} S\)" in html and r"\(\{x_i\}\)" in html and r"\[S\]" in html
