"""Export to Moodle XML and GIFT, saying what each format cannot carry.

Moodle's numerical type has an absolute tolerance and optional units with multipliers;
wrong answers can be listed with a 0% grade and their own feedback, so our named
mistakes survive. GIFT has no units and only an absolute tolerance. Neither knows our
seniority, difficulty, variants, evidence, follow-ups, guidance or more than one
language: the report lists those losses.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

from app.bank.calls import CallError, evaluate_call, output_unit
from app.bank.schema import NumericAnswer, QuestionFile

# Units offered to Moodle for byte answers: name -> bytes per unit.
BYTE_UNITS = {"B": 1.0, "kB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12, "KiB": 2.0**10,
              "MiB": 2.0**20, "GiB": 2.0**30, "TiB": 2.0**40}
_UNIT_IN_VALUE = re.compile(r"^\s*[-+0-9.eE]+\s*([A-Za-z]+)\s*$")


@dataclass
class Exported:
    text: str
    notes: list[str] = field(default_factory=list)


def _stated_unit(question: QuestionFile) -> str | None:
    assert isinstance(question.answer, NumericAnswer)
    match = _UNIT_IN_VALUE.match(str(question.answer.value))
    return match.group(1) if match and match.group(1) in BYTE_UNITS else None


def _numbers(question: QuestionFile) -> tuple[float, float, str | None, float,
                                              list[tuple[str, float]]]:
    """Answer, absolute tolerance and mistakes in the unit the question states."""
    assert isinstance(question.answer, NumericAnswer)
    answer = question.answer
    base = evaluate_call(answer.calculator)
    unit = _stated_unit(question) if output_unit(answer.calculator) == "B" else None
    scale = BYTE_UNITS[unit] if unit else 1.0
    value = base / scale
    t = answer.tolerance
    tolerance = {"absolute": t.value / scale, "relative": t.value * abs(value),
                 "geometric": t.value * abs(value)}[t.type]
    mistakes = []
    for mistake in answer.mistakes:
        try:
            mistakes.append((mistake.id, evaluate_call(mistake.calculator) / scale))
        except CallError:
            continue
    return value, tolerance, unit, scale, mistakes


def _common_losses(question: QuestionFile, lang: str) -> list[str]:
    lost = ["seniority", "difficulty", "interview guidance", "spoken follow-ups"]
    if question.variants:
        lost.append("variants (new numbers)")
    if question.evidence:
        lost.append("evidence from recorded experiments")
    if len(question.translations) > 1:
        lost.append(f"languages other than {lang}")
    return lost


def to_moodle_xml(questions: list[QuestionFile], lang: str) -> Exported:
    quiz = ET.Element("quiz")
    notes = []
    for question in questions:
        texts = question.translations.get(lang) or question.translations["en"]
        kind = {"numeric": "numerical", "single_choice": "multichoice",
                "multi_choice": "multichoice", "open": "essay"}[question.kind]
        node = ET.SubElement(quiz, "question", type=kind)
        _text(ET.SubElement(node, "name"), question.id)
        _text(ET.SubElement(node, "questiontext", format="markdown"), texts.prompt)
        _text(ET.SubElement(node, "generalfeedback", format="markdown"), texts.explanation)
        ET.SubElement(node, "defaultgrade").text = "1"
        tags = ET.SubElement(node, "tags")
        for tag in [question.topic, *question.tags]:
            _text(ET.SubElement(tags, "tag"), tag)
        lost = _common_losses(question, lang)
        if question.kind == "numeric":
            value, tolerance, unit, scale, mistakes = _numbers(question)
            _answer(node, 100, _g(value), texts.explanation.split("\n\n")[0], tolerance)
            for mistake_id, wrong in mistakes:
                _answer(node, 0, _g(wrong), texts.mistakes.get(mistake_id, ""), tolerance)
            if unit:
                units = ET.SubElement(node, "units")
                # Moodle's first unit is the one the answer is in (multiplier 1).
                ordered = [unit] + [name for name in BYTE_UNITS if name != unit]
                for name in ordered:
                    size = BYTE_UNITS[name]
                    item = ET.SubElement(units, "unit")
                    ET.SubElement(item, "multiplier").text = _g(scale / size)
                    ET.SubElement(item, "unit_name").text = name
                ET.SubElement(node, "unitgradingtype").text = "1"  # unit part of the grade
                ET.SubElement(node, "unitpenalty").text = "0.5"
                ET.SubElement(node, "showunits").text = "0"  # typed with the number
                ET.SubElement(node, "unitsleft").text = "0"
            if question.answer.tolerance.type != "absolute":  # type: ignore[union-attr]
                lost.append("a relative tolerance (turned into an absolute one)")
        elif question.kind == "open":
            _text(ET.SubElement(node, "graderinfo", format="markdown"),
                  texts.guidance.model_answer + "\n\n" + "\n".join(
                      f"- {texts.rubric.get(k, k)}" for k in question.rubric))
            lost.append("the rubric as self-assessment (kept as grader information)")
        else:
            ET.SubElement(node, "single").text = "true" if question.kind == "single_choice" \
                else "false"
            ET.SubElement(node, "shuffleanswers").text = "true"
            ET.SubElement(node, "answernumbering").text = "abc"
            correct = sum(c.correct for c in question.choices)
            wrong = len(question.choices) - correct
            for choice in question.choices:
                if choice.correct:
                    fraction = 100 / correct
                else:
                    fraction = 0 if question.kind == "single_choice" else -100 / max(wrong, 1)
                _answer(node, fraction, texts.choices.get(choice.key, choice.key),
                        texts.choice_feedback.get(choice.key, ""))
        notes.append(f"{question.id}: not carried: {', '.join(lost)}")
    ET.indent(quiz)
    return Exported(ET.tostring(quiz, encoding="unicode", xml_declaration=True), notes)


def _text(parent: ET.Element, value: str) -> None:
    ET.SubElement(parent, "text").text = value


def _answer(node: ET.Element, fraction: float, text: str, feedback: str,
            tolerance: float | None = None) -> None:
    answer = ET.SubElement(node, "answer", fraction=_g(fraction), format="markdown")
    _text(answer, text)
    if tolerance is not None:
        ET.SubElement(answer, "tolerance").text = _g(tolerance)
    _text(ET.SubElement(answer, "feedback", format="markdown"), feedback)


def _g(value: float) -> str:
    return f"{value:.10g}"


_GIFT_SPECIAL = re.compile(r"([~=#{}:\\])")


def gift_escape(text: str) -> str:
    return _GIFT_SPECIAL.sub(r"\\\1", text.replace("\n", " ").strip())


def to_gift(questions: list[QuestionFile], lang: str) -> Exported:
    blocks, notes = [], []
    for question in questions:
        texts = question.translations.get(lang) or question.translations["en"]
        head = f"::{gift_escape(question.id)}::[markdown]{gift_escape(texts.prompt)}"
        lost = [*_common_losses(question, lang), "tags and topic"]
        if question.kind == "numeric":
            value, tolerance, unit, _scale, mistakes = _numbers(question)
            answers = [f"={_g(value)}:{_g(tolerance)}"] + [
                f"=%0%{_g(w)}:{_g(tolerance)}#{gift_escape(texts.mistakes.get(m, ''))}"
                for m, w in mistakes]
            body = "{#\n" + "\n".join(answers) + "\n}"
            if unit:
                lost.append(f"units (the number is in {unit})")
            lost.append("the tolerance type (GIFT has an absolute one)")
        elif question.kind == "open":
            body = "{}"
            lost.append("the rubric and model answer")
        else:
            correct = sum(c.correct for c in question.choices)
            parts = []
            for choice in question.choices:
                text = gift_escape(texts.choices.get(choice.key, choice.key))
                feedback = gift_escape(texts.choice_feedback.get(choice.key, ""))
                if question.kind == "single_choice":
                    mark = "=" if choice.correct else "~"
                else:
                    share = 100 / correct if choice.correct else -100 / (
                        len(question.choices) - correct)
                    mark = f"~%{_g(share)}%"
                parts.append(f"{mark}{text}" + (f"#{feedback}" if feedback else ""))
            body = "{" + " ".join(parts) + "}"
        blocks.append(f"{head} {body}")
        notes.append(f"{question.id}: not carried: {', '.join(lost)}")
    return Exported("\n\n".join(blocks) + "\n", notes)
