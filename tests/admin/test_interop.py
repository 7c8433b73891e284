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
