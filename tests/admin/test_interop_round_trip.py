"""Round trips through Moodle's formats: every choice and numerical question of the real
bank, exported as Moodle XML and as GIFT (app.admin.interop) and imported back, keeps its
texts, answers, feedback, numbers and units, or the export report or the import notes say
what changed. And every exported numerical question, read the way Moodle grades one
(qtype_numerical), is right when answered with its correct value in the unit it asks for."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from app.admin.interop import _texts, to_gift, to_moodle_xml
from app.admin.interop_import import read_gift, read_moodle, to_question
from app.bank.calls import evaluate_call
from app.bank.checks import check_bank
from app.calculator.reading import canonical_unit, dimension_of_unit
from app.calculator.units import from_base, parse, unit_dimension
from app.config import ROOT

BANK = [f.question for f in check_bank(ROOT / "question_bank").files]
EXPORTABLE = [q for q in BANK if q.kind != "open"]
NUMERIC = [q for q in BANK if q.kind == "numeric"]
FORMATS = {"moodle": (to_moodle_xml, read_moodle), "gift": (to_gift, read_gift)}
# Import notes that would mean a text changed on the way.
CHANGED = ("a $ that is not math", "images are not", "the link to", "superscript", "subscript",
           "texts in", "some multilang", "a MathML", "form controls")


def asked_value(question) -> float:
    """The correct answer in the unit the question asks for, from the calculator."""
    value = evaluate_call(question.answer.calculator)
    unit = question.answer.unit
    if unit == "%":
        return value * 100
    if unit:
        return from_base(value, dimension_of_unit(unit), canonical_unit(unit))
    return value


def base_tolerance(question) -> float:
    """The question's tolerance as an absolute one, in the calculator's base unit."""
    tolerance = question.answer.tolerance
    if tolerance.type == "absolute":
        return tolerance.value
    return tolerance.value * abs(evaluate_call(question.answer.calculator))


def expected_tolerance(question, fmt: str) -> float:
    """The imported absolute tolerance: in the base unit when the unit came back (Moodle
    XML), else in the number's own unit (the asked unit; percent for %)."""
    asked, tolerance = question.answer.unit, base_tolerance(question)
    if asked == "%":
        return tolerance * 100
    if asked and fmt == "gift":
        return tolerance / parse(f"1 {asked}", unit_dimension(asked))
    return tolerance


def report(exported) -> dict[str, str]:
    """The export report: question id -> what the format did not carry."""
    return dict(note.split(": not carried: ", 1) for note in exported.notes)


def words(text: str) -> str:
    return " ".join(text.split())


# ----------------------------------------------------------------------------- round trips


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_every_bank_question_comes_back(fmt):
    export, reader = FORMATS[fmt]
    exported = export(EXPORTABLE, "en")
    entries, refused = reader(exported.text.encode())
    assert refused == []
    assert len(entries) == len(EXPORTABLE)
    lost = report(exported)
    for original, entry in zip(EXPORTABLE, entries, strict=True):
        draft, notes = to_question(entry, original.topic, original.seniority, "x", "test")
        shown = _texts(original, "en")  # the texts as the pages show them, numbers filled
        texts = draft.translations["en"]
        assert draft.kind == original.kind, original.id
        assert texts.title == original.id  # the exports name questions by their id
        assert texts.prompt == shown.prompt.strip(), original.id
        assert texts.explanation.startswith(shown.explanation.strip()), original.id
        assert not [n for n in notes if n.startswith(CHANGED)], (original.id, notes)
        if original.kind == "numeric":
            _same_numbers(original, draft, shown, lost[original.id], fmt)
        else:
            _same_choices(original, draft, shown)


def _same_choices(original, draft, shown) -> None:
    texts = draft.translations["en"]
    assert [(texts.choices[c.key], c.correct) for c in draft.choices] == [
        (shown.choices[c.key].strip(), c.correct) for c in original.choices], original.id
    assert texts.choice_feedback == {k: v.strip() for k, v in shown.choice_feedback.items()}


def _same_numbers(original, draft, shown, lost: str, fmt: str) -> None:
    answer, asked = draft.answer, original.answer.unit
    texts = draft.translations["en"]
    if fmt == "moodle" and asked and asked != "%":
        number, unit = str(answer.value).split(" ")
        assert unit == canonical_unit(asked) and answer.unit == unit, original.id
    else:  # GIFT has no units, and Moodle has no % unit: the report says so
        number = answer.value
        assert answer.unit is None
        if asked:
            assert ("units (the number is in" in lost if fmt == "gift"
                    else "the percent sign" in lost), original.id
    assert float(number) == pytest.approx(asked_value(original), rel=1e-9), original.id
    assert answer.tolerance.type == "absolute"
    assert answer.tolerance.value == pytest.approx(expected_tolerance(original, fmt),
                                                   rel=1e-6), original.id
    if original.answer.tolerance.type != "absolute":
        assert "tolerance" in lost, original.id
    for mistake in original.answer.mistakes:  # named mistakes come back as listed answers
        feedback = words(shown.mistakes.get(mistake.id, ""))
        assert feedback in words(texts.explanation), (original.id, mistake.id)


# ----------------------------------------------------------------------------- Moodle's grading

EPSILON = 1e-14  # PHP's "precision" of 14 digits, which Moodle's tolerance adds (MDL-3225)
_MOODLE_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[-+]?\d+)?")


def moodle_grade(answers: list[tuple[str, float, float]], units: dict[str, float],
                 response: str) -> tuple[float, bool]:
    """The fraction Moodle's numerical question type gives ``response``, and whether it
    knew the response's unit (qtype_numerical_answer_processor::apply_units: spaces go,
    the number is divided by its unit's multiplier; then the first answer whose value ±
    tolerance, 'nominal', holds it, or '*', gives its fraction)."""
    text = response.replace(" ", "")
    number = _MOODLE_NUMBER.match(text)
    if number is None:
        return 0.0, False
    unit = text[number.end():]
    known = unit in units if unit else not units
    value = float(number.group(0)) / units.get(unit, 1.0)
    for answer, fraction, tolerance in answers:
        if answer == "*":
            return fraction, known
        slack = abs(tolerance) + EPSILON * max(abs(tolerance), abs(float(answer)), EPSILON)
        if float(answer) - slack <= value <= float(answer) + slack:
            return fraction, known
    return 0.0, known


def moodle_xml_numericals(text: str) -> dict[str, tuple[list, dict[str, float]]]:
    """id -> (answers, units) of each numerical question in a Moodle XML file."""
    found = {}
    for node in ET.fromstring(text.encode()).findall("question[@type='numerical']"):
        answers = [(a.findtext("text").strip(), float(a.get("fraction")) / 100,
                    float(a.findtext("tolerance") or 0)) for a in node.findall("answer")]
        units = {u.findtext("unit_name"): float(u.findtext("multiplier"))
                 for u in node.findall("units/unit")}
        found[node.findtext("name/text")] = (answers, units)
    return found


_GIFT_ANSWER = re.compile(r"^=(?:%(-?[\d.]+)%)?([^:#\s]+):([^#\s]+)", re.MULTILINE)


def gift_numericals(text: str) -> dict[str, tuple[list, dict[str, float]]]:
    """id -> (answers, no units) of each numerical ({#...}) question in a GIFT file."""
    found = {}
    for block in text.split("\n\n"):
        name = re.match(r"::(.*?)::", block)
        if name is None or "{#\n" not in block:
            continue
        body = block.split("{#\n", 1)[1]
        answers = [(value, float(weight) / 100 if weight else 1.0, float(tolerance))
                   for weight, value, tolerance in _GIFT_ANSWER.findall(body)]
        found[name.group(1).replace("\\", "")] = (answers, {})
    return found


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_every_exported_numerical_is_right_with_its_value_in_the_asked_unit(fmt):
    export, _ = FORMATS[fmt]
    text = export(NUMERIC, "en").text
    read = moodle_xml_numericals(text) if fmt == "moodle" else gift_numericals(text)
    assert set(read) == {q.id for q in NUMERIC}
    for question in NUMERIC:
        answers, units = read[question.id]
        value, asked = asked_value(question), question.answer.unit
        if fmt == "moodle" and asked and asked != "%":
            first = next(iter(units))  # Moodle's first unit, multiplier 1, is the asked one
            assert (first, units[first]) == (canonical_unit(asked), 1.0), question.id
            response = f"{value!r} {first}"
        else:
            response = repr(value)
        assert moodle_grade(answers, units, response) == (1.0, True), (question.id, response)
        for unit, multiplier in units.items():  # the same value in any unit Moodle offers
            assert moodle_grade(answers, units, f"{value * multiplier!r} {unit}")[0] == 1.0, (
                question.id, unit)
        if value:
            assert moodle_grade(answers, units, response.replace(
                repr(value), repr(value * 10), 1))[0] < 1.0, question.id


def test_minutes_are_answered_in_minutes_not_seconds():
    """The issue's example: a question asking for minutes must not be graded in seconds."""
    minutes = [q for q in NUMERIC if q.answer.unit == "min"]
    assert minutes
    read = moodle_xml_numericals(to_moodle_xml(minutes, "en").text)
    for question in minutes:
        answers, units = read[question.id]
        value = asked_value(question)
        assert moodle_grade(answers, units, f"{value!r} min") == (1.0, True)
        assert moodle_grade(answers, units, f"{value * 60!r} s") == (1.0, True)
        assert moodle_grade(answers, units, f"{value * 60!r} min")[0] == 0.0
