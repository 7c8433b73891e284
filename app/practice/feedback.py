"""What a grade means, in the candidate's language (shared by the pages and the API)."""

from __future__ import annotations

from dataclasses import dataclass

from app.calculator.units import DIMENSIONS, format_quantity
from app.i18n import _
from app.practice.grading import Grade
from app.questions.service import QuestionView
from app.web.markdown import close_cjk_gaps
from app.web.numbers import localized_number, localized_unit


@dataclass(frozen=True)
class Message:
    """One line of feedback; ``markdown`` texts come from the bank."""

    text: str
    tone: str = "info"  # good | bad | info
    markdown: bool = False


def quantity(value: float | None, unit: str | None) -> str:
    return "" if value is None else format_quantity(value, unit, number=localized_number,
                                                    name=localized_unit)


def percent(fraction: float | None) -> str:
    """0.3827 as the page's language writes a percentage: 38,27 %, %38,27, 38.27%."""
    if fraction is None:
        return ""
    return _("%(number)s %%", number=localized_number(fraction * 100))


def messages(grade: Grade, question: QuestionView) -> list[Message]:
    if grade.problem:
        return [Message(problem_message(grade), "bad")]
    if grade.kind == "numeric":
        return _numeric(grade, question)
    if grade.kind == "open":
        return [Message(_("You covered %(done)s of %(total)s key points.",
                          done=len(grade.rubric_ticked), total=len(question.spec.rubric)),
                        "good" if grade.correct else "info")]
    return _choice(grade, question)


def problem_message(grade: Grade) -> str:
    """Why an answer could not be graded, in the page's language, naming what is wrong."""
    args = {key: str(value) for key, value in grade.problem_args.items()}
    text = args.get("text", "")
    messages = {
        "empty": lambda: _("Write or choose an answer first."),
        "too-long": lambda: _("That answer is too long to be a number (at most %(limit)s "
                              "characters).", limit=args.get("limit", "64")),
        "not-a-number": lambda: _("We could not read a number in “%(text)s”. Write a number, "
                                  "then a unit if you like: %(example)s.", text=text,
                                  example=example()),
        "not-finite": lambda: _("“%(text)s” is too large to be a number.", text=text),
        "ambiguous": lambda: _("“%(text)s” could be read two ways: %(decimal)s (a decimal "
                               "mark) or %(grouped)s (thousands). Write one of them.",
                               text=text, decimal=args.get("decimal", ""),
                               grouped=args.get("grouped", "")),
        "bad-grouping": lambda: _("“%(text)s”: digits grouped by a space or a mark come in "
                                  "threes after the first group (1 400 000). Check the "
                                  "digits.", text=text),
        "mixed-marks": lambda: _("“%(text)s” mixes the decimal mark and the thousands mark "
                                 "in a way this page does not read. Here: %(rule)s",
                                 text=text, rule=number_rule()),
        "unknown-unit": lambda: _("“%(unit)s” is not a unit we know. Units: %(units)s.",
                                  unit=args.get("unit", ""), units=unit_list()),
        "wrong-dimension": lambda: _("“%(unit)s” is not a unit of %(expected)s: this question "
                                     "asks for %(asked)s.", unit=args.get("unit", ""),
                                     expected=dimension_name(args.get("expected", "")),
                                     asked=asked_unit(grade)),
        "unit-not-expected": lambda: _("This answer is a plain number: write it without the "
                                       "unit “%(unit)s”.", unit=args.get("unit", "")),
        "unknown-choice": lambda: _("Unknown choice %(detail)s: reload the page and try "
                                    "again.", detail=grade.problem_detail),
        "one-choice-only": lambda: _("Pick exactly one answer."),
        "unknown-key-point": lambda: _("Unknown key point %(detail)s: reload the page and try "
                                       "again.", detail=grade.problem_detail),
        "unavailable": lambda: _("This question cannot be graded right now."),
    }
    message = messages.get(grade.problem or "")
    return message() if message else _("This answer could not be graded.")


def example() -> str:
    """An answer written the way the page's language writes numbers."""
    return _("1.4 GB, 1,400 MB or 1.4e9")


def number_rule() -> str:
    return _("the decimal mark is a point (1.5); thousands are grouped by a comma or a space "
             "(1,400 or 1 400).")


def answer_help() -> str:
    """The help under a numeric answer field: this page's number rule and the units."""
    return f"{number_rule()} " + _("Other units: %(units)s.", units=unit_list())


def unit_list() -> str:
    return _("B, kB, MB, GB, TB (powers of 1000), KiB, MiB, GiB (powers of 1024), bit, Gbit, "
             "s, ms, µs, min, h, days, years, FLOP, TFLOP")


def dimension_name(name: str) -> str:
    return {"bytes": _("bytes"), "seconds": _("time"), "bytes per second": _("bandwidth"),
            "FLOP": _("FLOP"), "FLOP per second": _("FLOP/s"),
            "seconds per byte": _("seconds per byte")}.get(name, name)


def asked_unit(grade: Grade) -> str:
    if grade.answer_unit:
        return grade.answer_unit
    dimension = DIMENSIONS.get(grade.unit or "")
    return dimension_name(dimension.name) if dimension else ""


def answer_label(unit: str | None) -> tuple[str, str]:
    """The answer field's label and placeholder for a question asking in ``unit``."""
    if unit == "%":
        return _("Your answer, in %"), _("e.g. 12.5 or 12.5 %")
    if unit:
        unit = localized_unit(unit)  # 天 in Chinese: no space around it
        return (close_cjk_gaps(_("Your answer, in %(unit)s", unit=unit)),
                close_cjk_gaps(_("a number in %(unit)s, or with another unit", unit=unit)))
    return _("Your answer, a number without unit"), _("e.g. 1,400 or 1.5")


def reading_text(grade: Grade) -> str:
    """How the answer was read: "3,25 GB", as the page's language writes it."""
    reading = grade.reading
    if reading is None:
        return ""
    if reading.unit == "%":
        return percent(reading.number / 100)
    number = localized_number(reading.number)
    return f"{number} {localized_unit(reading.unit)}" if reading.unit else number


def _numeric(grade: Grade, question: QuestionView) -> list[Message]:
    if grade.answer_unit == "%":  # the calculator's fraction, asked as a percentage
        expected, given = percent(grade.expected), percent(grade.given)
    else:
        expected = quantity(grade.expected, grade.unit)
        given = quantity(grade.given, grade.unit)
    read = reading_text(grade)
    if grade.reading is not None and grade.reading.assumed_unit and grade.answer_unit:
        echo = close_cjk_gaps(_("Read as %(reading)s (a number without unit is read in "
                                 "%(unit)s).", reading=read,
                                 unit=localized_unit(grade.answer_unit)))
    else:
        echo = _("Read as %(reading)s.", reading=read)
    if grade.correct:
        return [Message(_("Correct: %(given)s (expected %(expected)s).", given=given,
                          expected=expected), "good"), Message(echo)]
    lines = [Message(_("Not quite: you answered %(given)s, the answer is %(expected)s.",
                       given=given, expected=expected), "bad"), Message(echo)]
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
        lines.append(Message(_("A number without a unit is read in %(unit)s. Write the unit "
                               "if you meant another one, for example %(example)s.",
                               unit=grade.answer_unit or grade.unit or "", example=example()),
                             "info"))
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
