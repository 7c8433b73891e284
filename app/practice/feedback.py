"""What a grade means, in the candidate's language (shared by the pages and the API)."""

from __future__ import annotations

from dataclasses import dataclass

from app.calculator.units import format_quantity
from app.i18n import _
from app.practice.grading import Grade
from app.questions.service import QuestionView
from app.web.numbers import localized_number


@dataclass(frozen=True)
class Message:
    """One line of feedback; ``markdown`` texts come from the bank."""

    text: str
    tone: str = "info"  # good | bad | info
    markdown: bool = False


def quantity(value: float | None, unit: str | None) -> str:
    return "" if value is None else format_quantity(value, unit, number=localized_number)


def messages(grade: Grade, question: QuestionView) -> list[Message]:
    if grade.problem:
        return [Message(_problem(grade), "bad")]
    if grade.kind == "numeric":
        return _numeric(grade, question)
    if grade.kind == "open":
        return [Message(_("You covered %(done)s of %(total)s key points.",
                          done=len(grade.rubric_ticked), total=len(question.spec.rubric)),
                        "good" if grade.correct else "info")]
    return _choice(grade, question)


def _problem(grade: Grade) -> str:
    detail = grade.problem_detail
    return {
        "empty": _("Write or choose an answer first."),
        "too-long": _("That answer is too long to be a number."),
        "not-a-number": _("We could not read a number here: %(detail)s", detail=detail),
        "wrong-dimension": _("This is not the right kind of quantity: %(detail)s",
                             detail=detail),
        "unknown-choice": _("Unknown choice %(detail)s: reload the page and try again.",
                            detail=detail),
        "one-choice-only": _("Pick exactly one answer."),
        "unknown-key-point": _("Unknown key point %(detail)s: reload the page and try again.",
                               detail=detail),
        "unavailable": _("This question cannot be graded right now."),
    }.get(grade.problem or "", _("This answer could not be graded."))


def _numeric(grade: Grade, question: QuestionView) -> list[Message]:
    expected = quantity(grade.expected, grade.unit)
    given = quantity(grade.given, grade.unit)
    if grade.correct:
        return [Message(_("Correct: %(given)s (expected %(expected)s).", given=given,
                          expected=expected), "good")]
    lines = [Message(_("Not quite: you answered %(given)s, the answer is %(expected)s.",
                       given=given, expected=expected), "bad")]
    if grade.mistake:
        lines.append(Message(_("This is a known mistake:"), "info"))
        lines.append(Message(question.texts.mistakes.get(grade.mistake, grade.mistake),
                             "info", markdown=True))
    elif grade.unit_issue == "decimal-binary":
        lines.append(Message(_("Your number is right in the other unit family: MB and GB "
                               "are powers of 1000, MiB and GiB powers of 1024."), "info"))
    elif grade.unit_issue == "bits-bytes":
        lines.append(Message(_("Your answer is off by a factor of 8: check bits against "
                               "bytes."), "info"))
    elif grade.unit_issue == "missing-unit":
        lines.append(Message(_("A number without a unit is read in bytes. Write the unit, "
                               "for example 1.4 GB."), "info"))
    return lines


def _choice(grade: Grade, question: QuestionView) -> list[Message]:
    if grade.correct:
        return [Message(_("Correct."), "good")]
    lines = [Message(_("Not quite."), "bad")]
    for key in grade.chosen:
        if key not in grade.correct_choices:
            text = question.texts.choice_feedback.get(key)
            if text:
                lines.append(Message(f"**{key.upper()}** — {text}", "info", markdown=True))
    missed = [k.upper() for k in grade.correct_choices if k not in grade.chosen]
    if missed:
        lines.append(Message(_("The right answer: %(keys)s.", keys=", ".join(
            k.upper() for k in grade.correct_choices)), "info"))
    return lines
