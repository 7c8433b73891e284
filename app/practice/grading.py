"""Grading an answer: choices, numbers with units (naming the mistake), open answers.

The grader returns codes and numbers, not sentences: templates and the API turn them
into text in the candidate's language, using the bank's own mistake texts.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from app.bank.calls import (
    CallError,
    draw_variant,
    evaluate_call,
    output_unit,
    shown_params,
    within,
)
from app.bank.schema import NumericAnswer, QuestionFile
from app.calculator import get
from app.calculator.reading import Reading, ReadingError, read_quantity
from app.calculator.registry import Step
from app.calculator.units import DIMENSIONS, UnitError, parse

OPEN_PASS_SCORE = 0.75  # an open answer "passes" when it covers three quarters of the rubric

# Swapping decimal and binary prefixes in what the candidate wrote: MB <-> MiB...
_PREFIX_SWAP = {"kB": "KiB", "KB": "KiB", "MB": "MiB", "GB": "GiB", "TB": "TiB", "PB": "PiB",
                "KiB": "kB", "MiB": "MB", "GiB": "GB", "TiB": "TB", "PiB": "PB"}


@dataclass
class Grade:
    """The outcome of one answer. ``problem`` is set when the answer could not be read."""

    kind: str
    correct: bool = False
    score: float = 0.0
    problem: str | None = None  # a ReadingError code, unknown-choice, one-choice-only...
    problem_detail: str = ""
    problem_args: dict[str, Any] = field(default_factory=dict)
    mistake: str | None = None  # id of a named mistake the answer matches
    unit_issue: str | None = None  # decimal-binary | bits-bytes | missing-unit
    given: float | None = None
    expected: float | None = None
    unit: str | None = None  # the calculator output's base unit
    answer_unit: str | None = None  # the unit the question asks for
    reading: Reading | None = None  # how a numeric answer was read
    worked: list[Step] = field(default_factory=list)
    chosen: list[str] = field(default_factory=list)
    correct_choices: list[str] = field(default_factory=list)
    rubric_ticked: list[str] = field(default_factory=list)


def variant_params(question: QuestionFile, seed: int | None) -> dict[str, Any]:
    """The parameters a question is shown with: its own, or a redraw for ``seed``."""
    if not question.variants or not seed:
        return {}
    return draw_variant(question, random.Random(seed))  # noqa: S311 - not security


def grade(question: QuestionFile, answers: list[str], seed: int | None = None,
          lang: str = "en") -> Grade:
    """Grade raw form values: one text for numeric/open, the chosen keys for choices.

    ``lang`` is the page's language: numbers are read the way it writes them.
    """
    if question.kind == "numeric":
        return grade_numeric(question, answers[0] if answers else "", seed, lang)
    if question.kind == "open":
        return grade_open(question, answers)
    return grade_choice(question, answers)


def grade_choice(question: QuestionFile, chosen: list[str]) -> Grade:
    keys = [c.key for c in question.choices]
    correct = sorted(c.key for c in question.choices if c.correct)
    result = Grade(kind=question.kind, correct_choices=correct)
    picked = sorted(set(chosen))
    unknown = [k for k in picked if k not in keys]
    if unknown:
        result.problem, result.problem_detail = "unknown-choice", ", ".join(unknown)[:40]
        return result
    if not picked:
        result.problem = "empty"
        return result
    if question.kind == "single_choice" and len(picked) > 1:
        result.problem = "one-choice-only"
        return result
    result.chosen = picked
    right = len(set(picked) & set(correct))
    wrong = len(set(picked) - set(correct))
    result.correct = picked == correct
    result.score = 1.0 if result.correct else max(0.0, (right - wrong) / len(correct))
    return result


def grade_open(question: QuestionFile, ticked: list[str]) -> Grade:
    """Self-assessment: the candidate ticks the rubric's key points they covered."""
    unknown = [k for k in ticked if k not in question.rubric]
    result = Grade(kind="open")
    if unknown:
        result.problem, result.problem_detail = "unknown-key-point", ", ".join(unknown)[:40]
        return result
    result.rubric_ticked = [k for k in question.rubric if k in ticked]
    result.score = len(result.rubric_ticked) / len(question.rubric)
    result.correct = result.score >= OPEN_PASS_SCORE
    return result


def grade_numeric(question: QuestionFile, text: str, seed: int | None = None,
                  lang: str = "en") -> Grade:
    """Read ``text`` as ``lang`` writes numbers, in the question's unit when it has none."""
    assert isinstance(question.answer, NumericAnswer)
    answer = question.answer
    unit = output_unit(answer.calculator)
    dimension = DIMENSIONS.get(unit) if unit else None
    draw = variant_params(question, seed)
    result = Grade(kind="numeric", unit=unit, answer_unit=answer.unit)
    try:
        result.expected = evaluate_call(answer.calculator, draw)
        evaluation = get(answer.calculator.name).evaluate(shown_params(question, draw))
        result.worked = evaluation.worked
    except (CallError, ValueError):  # a bank bug; bank check prevents it
        result.problem = "unavailable"
        return result
    cleaned = text.strip()
    try:
        reading = read_quantity(cleaned, dimension, lang, answer.unit)
    except ReadingError as exc:
        result.problem, result.problem_args = exc.code, dict(exc.details)
        return result
    result.reading = reading
    result.given = reading.value
    tolerance = answer.tolerance
    if within(reading.value, result.expected, tolerance):
        result.correct, result.score = True, 1.0
        return result
    for mistake in answer.mistakes:
        try:
            if within(reading.value, evaluate_call(mistake.calculator, draw), tolerance):
                result.mistake = mistake.id
                return result
        except CallError:
            continue
    result.unit_issue = _unit_issue(reading, result.expected, unit, tolerance)
    return result


def _unit_issue(reading: Reading, expected: float, unit: str | None,
                tolerance: Any) -> str | None:
    """Why a wrong number may only be a unit slip: MB for MiB, bits for bytes, the unit
    a bare number is read in."""
    if unit not in ("B", "B/s"):
        return None
    dimension = DIMENSIONS[unit]
    read_unit = (reading.unit or "").split("/")[0]
    if read_unit in _PREFIX_SWAP:
        swapped = reading.unit.replace(read_unit, _PREFIX_SWAP[read_unit], 1)  # type: ignore[union-attr]
        try:
            if within(reading.number * parse(f"1 {swapped}", dimension), expected, tolerance):
                return "decimal-binary"
        except UnitError:
            pass
    given = reading.value
    if within(given / 8, expected, tolerance) or within(given * 8, expected, tolerance):
        return "bits-bytes"
    if reading.assumed_unit:
        for power in range(-5, 6):
            if power and (within(given * 1000.0**power, expected, tolerance)
                          or within(given * 1024.0**power, expected, tolerance)):
                return "missing-unit"
    return None
