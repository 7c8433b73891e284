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
from app.bank.schema import NumericAnswer, QuestionFile, Translation
from app.calculator.reading import canonical_unit, dimension_of_unit
from app.calculator.units import from_base
from app.questions.service import view

# Units offered to Moodle, per kind of answer: name -> size in the base unit.
BYTE_UNITS = {"B": 1.0, "kB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12, "KiB": 2.0**10,
              "MiB": 2.0**20, "GiB": 2.0**30, "TiB": 2.0**40}
TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "min": 60.0, "h": 3600.0, "day": 86400.0,
              "year": 365.25 * 86400.0}
UNITS_BY_BASE = {"B": BYTE_UNITS, "s": TIME_UNITS}
# XML 1.0 refuses these characters anywhere in a document.
_XML_INVALID = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_CODE = re.compile(r"`[^`]*`")
_DISPLAY_MATH = re.compile(r"\$\$(.+?)\$\$", re.S)
# Inline math may continue on the next line of a paragraph (bank texts are wrapped).
_INLINE_MATH = re.compile(r"(?<![\\$])\$((?:[^$\n]|\n(?![ \t]*\n))+?)\$")


@dataclass
class Exported:
    text: str
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Numbers:
    """A numeric answer as Moodle gets it: in the unit the question asks for."""

    value: float
    tolerance: float
    unit: str | None  # the unit the question asks for ("GB", "min"), None for a count
    units: dict[str, float]  # other units Moodle may accept, as multipliers to ``unit``
    mistakes: list[tuple[str, float]]


def _numbers(question: QuestionFile) -> Numbers:
    """Answer, absolute tolerance and mistakes in the unit the question asks for."""
    assert isinstance(question.answer, NumericAnswer)
    answer = question.answer
    base_unit = output_unit(answer.calculator)
    asked = answer.unit
    if asked == "%":
        scale = 0.01
    elif asked:
        scale = from_base(1.0, dimension_of_unit(asked), canonical_unit(asked)) ** -1
    else:
        scale = 1.0
    value = evaluate_call(answer.calculator) / scale
    t = answer.tolerance
    tolerance = {"absolute": t.value / scale, "relative": t.value * abs(value),
                 "geometric": t.value * abs(value)}[t.type]
    mistakes = []
    for mistake in answer.mistakes:
        try:
            mistakes.append((mistake.id, evaluate_call(mistake.calculator) / scale))
        except CallError:
            continue
    units: dict[str, float] = {}
    if asked and asked != "%":
        family = UNITS_BY_BASE.get(base_unit or "", {})
        canonical = canonical_unit(asked)
        units = {canonical: 1.0} | {name: scale / size for name, size in family.items()
                                    if name != canonical}
    return Numbers(value, tolerance, asked, units, mistakes)


def _texts(question: QuestionFile, lang: str) -> Translation:
    """The texts with the default draw's numbers (as the question page shows them)."""
    return view(question, lang).texts


def moodle_text(text: str) -> str:
    """Markdown for Moodle: math as ``\\(…\\)`` and ``\\[…\\]`` once Markdown has read it
    (its MathJax filter does not read ``$``), and no character XML refuses."""
    pieces, last = [], 0
    for code in _CODE.finditer(text):  # code stays as written
        pieces.append(_math(text[last:code.start()]))
        pieces.append(code.group(0))
        last = code.end()
    pieces.append(_math(text[last:]))
    return _XML_INVALID.sub("", "".join(pieces))


# Moodle renders these texts as Markdown, which reads a backslash before any of these
# characters as an escape (so \( would reach MathJax as a bare parenthesis): inside math
# such a backslash is doubled, and the delimiters are written \\( \\) \\[ \\].
_MARKDOWN_ESCAPABLE = re.compile(r"\\(?=[\\`*_{}\[\]()#+\-.!])")


def _markdown_math(tex: str) -> str:
    return _MARKDOWN_ESCAPABLE.sub(r"\\\\", tex)


def _math(text: str) -> str:
    text = _DISPLAY_MATH.sub(
        lambda m: f"\\\\[{_markdown_math(m.group(1).strip())}\\\\]", text)
    return _INLINE_MATH.sub(lambda m: f"\\\\({_markdown_math(m.group(1))}\\\\)", text)


def _common_losses(question: QuestionFile, lang: str) -> list[str]:
    lost = ["seniority", "difficulty", "interview guidance", "spoken follow-ups"]
    if question.variants:
        lost.append("variants (exported with the default numbers, filled in the texts)")
    if question.evidence:
        lost.append("evidence from recorded experiments")
    if len(question.translations) > 1:
        lost.append(f"languages other than {lang}")
    return lost


def to_moodle_xml(questions: list[QuestionFile], lang: str) -> Exported:
    quiz = ET.Element("quiz")
    notes = []
    for question in questions:
        texts = _texts(question, lang)
        kind = {"numeric": "numerical", "single_choice": "multichoice",
                "multi_choice": "multichoice", "open": "essay"}[question.kind]
        node = ET.SubElement(quiz, "question", type=kind)
        _text(ET.SubElement(node, "name"), question.id)
        _text(ET.SubElement(node, "questiontext", format="markdown"), moodle_text(texts.prompt))
        _text(ET.SubElement(node, "generalfeedback", format="markdown"),
              moodle_text(texts.explanation))
        ET.SubElement(node, "defaultgrade").text = "1"
        tags = ET.SubElement(node, "tags")
        for tag in dict.fromkeys([question.topic, *question.tags]):
            _text(ET.SubElement(tags, "tag"), tag)
        lost = _common_losses(question, lang)
        if _changed_by_xml(question, lang):
            lost.append("control characters XML cannot hold (removed)")
        if question.kind == "numeric":
            numbers = _numbers(question)
            _answer(node, 100, _g(numbers.value), moodle_text(texts.explanation),
                    numbers.tolerance)
            for mistake_id, wrong in numbers.mistakes:
                _answer(node, 0, _g(wrong), moodle_text(texts.mistakes.get(mistake_id, "")),
                        numbers.tolerance)
            if numbers.units:
                units = ET.SubElement(node, "units")
                # Moodle's first unit is the one the answer is in (multiplier 1).
                for name, multiplier in numbers.units.items():
                    item = ET.SubElement(units, "unit")
                    ET.SubElement(item, "multiplier").text = _g(multiplier)
                    ET.SubElement(item, "unit_name").text = name
                ET.SubElement(node, "unitgradingtype").text = "1"  # unit part of the grade
                ET.SubElement(node, "unitpenalty").text = "0.5"
                ET.SubElement(node, "showunits").text = "0"  # typed with the number
                ET.SubElement(node, "unitsleft").text = "0"
            elif numbers.unit == "%":
                lost.append("the percent sign (the answer is a number of percent)")
            if question.answer.tolerance.type != "absolute":  # type: ignore[union-attr]
                lost.append("a relative tolerance (turned into an absolute one)")
            lost.append("named mistakes as 0% answers: Moodle shows their feedback but "
                        "grades them like any wrong answer")
        elif question.kind == "open":
            _text(ET.SubElement(node, "graderinfo", format="markdown"),
                  moodle_text(texts.guidance.model_answer + "\n\n" + "\n".join(
                      f"- {texts.rubric.get(k, k)}" for k in question.rubric)))
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
                _answer(node, fraction, moodle_text(texts.choices.get(choice.key, choice.key)),
                        moodle_text(texts.choice_feedback.get(choice.key, "")))
            if question.kind == "multi_choice":
                lost.append("Ringside's multi-choice score (right − wrong over the number "
                            "right, at least 0): Moodle adds each choice's fraction, with "
                            f"{_g(-100 / max(wrong, 1))}% for each wrong one")
        notes.append(f"{question.id}: not carried: {', '.join(lost)}")
    ET.indent(quiz)
    return Exported(ET.tostring(quiz, encoding="unicode", xml_declaration=True), notes)


def _changed_by_xml(question: QuestionFile, lang: str) -> bool:
    texts = question.translations.get(lang) or question.translations["en"]
    return any(_XML_INVALID.search(value) for value in _strings(texts.model_dump()))


def _strings(data: object) -> list[str]:
    if isinstance(data, str):
        return [data]
    if isinstance(data, dict):
        return [s for value in data.values() for s in _strings(value)]
    if isinstance(data, list):
        return [s for value in data for s in _strings(value)]
    return []


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
    """GIFT's special characters escaped; line breaks kept as GIFT's ``\\n``."""
    escaped = _GIFT_SPECIAL.sub(r"\\\1", moodle_text(text).strip())
    return escaped.replace("\r\n", "\n").replace("\n", "\\n")


def to_gift(questions: list[QuestionFile], lang: str) -> Exported:
    blocks, notes = [], []
    for question in questions:
        texts = _texts(question, lang)
        head = f"::{gift_escape(question.id)}::[markdown]{gift_escape(texts.prompt)}"
        general = f"####{gift_escape(texts.explanation)}"  # general feedback: the explanation
        lost = [*_common_losses(question, lang), "tags and topic"]
        if question.kind == "numeric":
            numbers = _numbers(question)
            answers = [f"={_g(numbers.value)}:{_g(numbers.tolerance)}"] + [
                f"=%0%{_g(w)}:{_g(numbers.tolerance)}#{gift_escape(texts.mistakes.get(m, ''))}"
                for m, w in numbers.mistakes]
            body = "{#\n" + "\n".join([*answers, general]) + "\n}"
            if numbers.unit:
                lost.append(f"units (the number is in {numbers.unit})")
            lost.append("the tolerance type (GIFT has an absolute one)")
        elif question.kind == "open":
            body = "{" + general + "}"
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
            body = "{" + " ".join([*parts, general]) + "}"
        blocks.append(f"{head} {body}")
        notes.append(f"{question.id}: not carried: {', '.join(lost)}")
    return Exported("\n\n".join(blocks) + "\n", notes)
