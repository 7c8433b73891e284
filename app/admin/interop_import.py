"""Import Moodle XML and GIFT as drafts: the counterpart of :mod:`app.admin.interop`.

Multiple-choice, true/false and numerical questions become *drafts* in the topic and
seniority the editor chooses, difficulty 2. What our format needs and theirs lacks (spoken
follow-ups, interview guidance) is left to write, so the checks keep refusing to publish
until it is. Nothing is lost without a line in the preview: what does not fit is kept in
the explanation or listed in the draft's notes, and what Moodle itself would refuse is
refused with its line and Moodle's reason.

- Grades follow Moodle's importer: a grade outside Moodle's fixed list (100, 90, 83.33333,
  … 5 %, 0 and their negatives, within 1e-5) is refused, so is a single-answer question
  without a 100 % choice and a multiple-answer one whose positive grades do not add up to
  100 %. Partial credit and negative marks do not fit Ringside's scoring (a choice is right
  or wrong; a multiple choice scores (right − wrong) / correct): the notes say how each
  one differs.
- True/false becomes a single choice between "True" and "False".
- A numerical question has no calculator: its value (with its unit when the calculators
  know it) and absolute tolerance are kept, bound to the placeholder calculator
  ``bind-a-calculator``, which the checks reject until an editor binds a real one. Partial
  and wrong answers, and the catch-all ``*`` answer's feedback, are listed in the
  explanation (a named mistake needs a calculator). GIFT's ``{#3:2~#wrong}`` is read as
  Moodle reads it: everything after the first ``~`` is the catch-all answer.
- Texts become Markdown as the pages render it (``app.web.markdown``: CommonMark without
  raw HTML, ``$…$`` math): HTML is converted (paragraphs, lists, emphasis, code, links,
  tables), ``2<sup>10</sup>`` becomes ``$2^{10}$``, MathJax's ``\\(…\\)`` and ``\\[…\\]``
  become ``$…$`` and ``$$…$$``, and what Markdown would misread (``__init__``, "$5",
  ``#`` at a line start) is escaped. Web links are kept; images, embedded files and
  links to them cannot be, and are listed.
- Moodle's multilang texts (``<span lang="fr" class="multilang">`` and the multilang2
  filter's ``{mlang fr}…{mlang}``) become the draft's translations (en, fr, tr, zh);
  other languages are listed as lost.
- Tags, GIFT ``[tag:…]`` comments and the Moodle category (offered as tags) are kept;
  hints, ID numbers, combined feedback that is Moodle's default, second units and unit
  grading settings are listed.
- The XML parser refuses any DTD or entity declaration (no XXE, no entity expansion).
- Essay, matching, short answer, cloze and every other type are refused with their line,
  like malformed entries: nothing is dropped silently.
"""

from __future__ import annotations

import html as html_entities
import logging
import math
import re
import unicodedata
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any
from urllib.parse import quote, unquote, urlsplit
from xml.parsers import expat

from pydantic import ValidationError
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.admin import authoring
from app.bank.checks import field_path, to_write
from app.bank.schema import LANGUAGES, QuestionFile
from app.calculator.units import UnitError, parse, unit_dimension
from app.questions.models import Question

log = logging.getLogger(__name__)

MAX_BYTES = 5 * 1024 * 1024
MAX_QUESTIONS = 2000
MAX_TEXT = 100_000  # characters of one Moodle text; our texts hold 20,000
FORMATS = {"moodle": "Moodle XML", "gift": "GIFT"}
# A calculator that does not exist: the checks say so until an editor binds a real one.
UNBOUND_CALCULATOR = {"name": "bind-a-calculator", "output": "value"}
DIFFICULTY = 2
KEYS = "abcdefghijklmnopqrstuvwxyz"
FULL_MARKS = 99.99  # Moodle writes 100, sometimes 99.99999
# question_bank::fraction_options_full(): the only grades Moodle's importer accepts (as
# fractions of the mark, and their negatives), matched within 1e-5 by match_grade_options.
MOODLE_GRADES = (1.0, 0.9, 0.8333333, 0.8, 0.75, 0.7, 0.6666667, 0.6, 0.5, 0.4, 0.3333333,
                 0.3, 0.25, 0.2, 0.1666667, 0.1428571, 0.125, 0.1111111, 0.1, 0.05, 0.0)
GRADE_LIST = ", ".join(f"{100 * g:.7g}%" for g in MOODLE_GRADES)
# Moodle's default combined feedback (qtype strings *feedbackdefault): nothing to keep.
DEFAULT_COMBINED = {"Your answer is correct.", "Your answer is partially correct.",
                    "Your answer is incorrect."}
COMBINED = {"correctfeedback": "For any correct response",
            "partiallycorrectfeedback": "For any partially correct response",
            "incorrectfeedback": "For any incorrect response"}
TRUE_FALSE = {"en": ("True", "False"), "fr": ("Vrai", "Faux"), "tr": ("Doğru", "Yanlış"),
              "zh": ("对", "错")}


class FileProblem(ValueError):
    """The whole file cannot be read: empty, not well-formed, a DTD, no questions."""


class Malformed(ValueError):
    """One entry cannot be imported; the message says why (its line is added)."""


@dataclass(frozen=True)
class Refusal:
    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


@dataclass(frozen=True)
class Rich:
    """A text as the file holds it: raw, in Moodle's format (html, moodle_auto_format,
    markdown, plain_text); it becomes Markdown per language when the draft is made."""

    raw: str = ""
    fmt: str = "html"

    def __bool__(self) -> bool:
        return bool(self.raw.strip())


@dataclass
class Answer:
    text: Rich
    fraction: float  # percent, as Moodle writes it
    feedback: Rich = field(default_factory=Rich)
    tolerance: str = ""  # numerical answers, as written


@dataclass
class Entry:
    """One question read from either format, before it becomes a draft."""

    line: int
    type: str  # multichoice, truefalse or numerical
    name: str
    prompt: Rich
    feedback: Rich = field(default_factory=Rich)  # Moodle's general feedback
    answers: list[Answer] = field(default_factory=list)
    single: bool = True
    units: list[tuple[str, float]] = field(default_factory=list)  # <units>, as written
    unit_settings: dict[str, str] = field(default_factory=dict)
    combined: dict[str, Rich] = field(default_factory=dict)  # correctfeedback, ...
    hints: list[Rich] = field(default_factory=list)
    files: list[str] = field(default_factory=list)  # embedded <file> names
    tags: list[str] = field(default_factory=list)
    category: str = ""
    notes: list[str] = field(default_factory=list)


@dataclass
class Draft:
    line: int
    question: QuestionFile
    notes: list[str] = field(default_factory=list)

    @property
    def needs_calculator(self) -> bool:
        return self.question.kind == "numeric"


@dataclass
class ImportPreview:
    format: str
    drafts: list[Draft] = field(default_factory=list)
    refused: list[Refusal] = field(default_factory=list)
    error: str = ""

    @property
    def label(self) -> str:
        return FORMATS[self.format]


def detect_format(filename: str, payload: bytes) -> str:
    """``zip`` (our bank), ``moodle`` or ``gift``: by extension, else by the content."""
    name = filename.lower()
    if name.endswith(".zip"):
        return "zip"
    if name.endswith(".xml"):
        return "moodle"
    if name.endswith((".gift", ".txt")):
        return "gift"
    if payload.startswith(b"PK\x03\x04"):
        return "zip"
    return "moodle" if payload.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"<") else "gift"


# ---------------------------------------------------------------------------- preview, apply


def preview_import(session: Session, payload: bytes, fmt: str, topic: str, seniority: str,
                   filename: str = "") -> ImportPreview:
    """The drafts this file would add and the entries refused (nothing is written)."""
    result = ImportPreview(fmt)
    try:
        if len(payload) > MAX_BYTES:
            raise FileProblem("the file is larger than 5 MB")
        if not payload.strip():
            raise FileProblem("the file is empty")
        entries, refused = (read_moodle if fmt == "moodle" else read_gift)(payload)
        if len(entries) + len(refused) > MAX_QUESTIONS:
            raise FileProblem(f"the file has more than {MAX_QUESTIONS} questions")
    except FileProblem as exc:
        result.error = str(exc)
        return result
    result.refused = refused
    taken = set(session.scalars(select(Question.slug)))
    for entry in entries:
        slug = unique_slug(title_of(entry) or " ".join(plain_text(entry.prompt).split()[:8]),
                           taken)
        source = f"Imported from {FORMATS[fmt]}: {filename[:100] or 'upload'}, line {entry.line}"
        try:
            question, notes = to_question(entry, topic, seniority, slug, source)
        except Malformed as exc:
            result.refused.append(Refusal(entry.line, str(exc)))
            continue
        except Exception:  # one entry the importer cannot handle must not stop the others
            log.exception("importing line %s of %s", entry.line, filename)
            result.refused.append(Refusal(entry.line, "this entry could not be converted "
                                          "(an error in the importer; please report it)"))
            continue
        taken.add(slug)
        result.drafts.append(Draft(entry.line, question, notes))
    result.refused.sort(key=lambda r: r.line)
    return result


def apply_import(session: Session, payload: bytes, fmt: str, topic: str, seniority: str,
                 author: str, filename: str = "") -> ImportPreview:
    """Read the file again (the preview is not trusted) and save every draft, in the
    caller's transaction: all of them or none."""
    result = preview_import(session, payload, fmt, topic, seniority, filename)
    for draft in result.drafts:
        authoring.save(session, None, draft.question, "draft", author, None,
                       note=f"imported from {FORMATS[fmt]}, line {draft.line}")
    return result


# ---------------------------------------------------------------------------- to our format


@dataclass
class _Plan:
    """The language-independent shape of a draft, and what its texts are made from."""

    shape: dict[str, Any]
    correct: list[bool] = field(default_factory=list)  # choices
    numbers: _Numbers | None = None  # numerical


@dataclass
class _Numbers:
    shown: str  # "1.4 ± 0.028 GB"
    unit: str
    answer: Answer
    others: list[tuple[Answer, float, float]]
    catch_all: Answer | None


def to_question(entry: Entry, topic: str, seniority: str, slug: str, source: str
                ) -> tuple[QuestionFile, list[str]]:
    """A draft in our format; what does not fit is noted, what is wrong is Malformed."""
    notes = list(entry.notes)
    losses = Losses()
    if _too_long(entry):
        raise Malformed(f"the question's texts are longer than {MAX_TEXT:,} characters")
    if not markdown(entry.prompt, "en", losses).strip():
        raise Malformed(f"{_label(entry)} question has no text")
    if entry.type != "truefalse":
        _check_moodle_grades(entry)
    plan = _numeric(entry, notes) if entry.type == "numerical" else _choices(entry, notes, losses)
    languages = _languages(entry, notes)
    translations = {lang: _translation(entry, plan, _Writer(lang, losses)) for lang in languages}
    notes += _entry_notes(entry, losses)
    data = {"id": slug, "topic": topic, "tags": _tags(entry.tags + _category_parts(entry)),
            "seniority": seniority, "difficulty": DIFFICULTY, **plan.shape,
            "sources": [source[:300]], "translations": translations}
    try:
        return QuestionFile.model_validate(data), list(dict.fromkeys(notes))
    except ValidationError as exc:
        error = exc.errors()[0]
        raise Malformed(f"{field_path(error['loc'])}: "
                        f"{error['msg'].removeprefix('Value error, ')}") from None


def _too_long(entry: Entry) -> bool:
    texts = [entry.prompt, entry.feedback, *entry.combined.values(), *entry.hints]
    texts += [t for a in entry.answers for t in (a.text, a.feedback)]
    return any(len(t.raw) > MAX_TEXT for t in texts)


def _label(entry: Entry) -> str:
    return {"truefalse": "true/false"}.get(entry.type, entry.type)


class _Writer:
    """Markdown of the entry's texts in one language (English when a text has none)."""

    def __init__(self, lang: str, losses: Losses) -> None:
        self.lang, self.losses = lang, losses

    def __call__(self, text: Rich) -> str:
        written = markdown(text, self.lang, self.losses)
        if not written.strip() and self.lang != "en":
            return markdown(text, "en", self.losses)
        return written


def _translation(entry: Entry, plan: _Plan, write: _Writer) -> dict[str, Any]:
    prompt = write(entry.prompt)
    title = title_of(entry, write.lang) or plain_text(entry.prompt, write.lang) or prompt
    texts: dict[str, Any] = {"title": _shorten(title, 160), "prompt": prompt}
    general = write(entry.feedback)
    if plan.numbers is not None:
        extra, model = _numeric_texts(plan.numbers, general, write)
    else:
        extra, model = _choice_texts(entry, plan.correct, general, texts, write)
    extra += _combined_texts(entry, write)
    explanation = "\n\n".join(p for p in [general.strip(), *extra] if p)
    return texts | {
        "explanation": explanation or to_write("why the answer is right"),
        "follow_ups": [to_write("a spoken follow-up question"),
                       to_write("another spoken follow-up question")],
        "guidance": {"why_asked": to_write(),
                     "structure": [to_write("first step"), to_write("second step")],
                     "model_answer": model or to_write("the model answer")},
    }


# ---------------------------------------------------------------------------- grades


def _check_moodle_grades(entry: Entry) -> None:
    """Moodle's importprocess refuses a question with a grade outside its fixed list."""
    invalid = [a.fraction / 100 for a in entry.answers if not _is_moodle_grade(a.fraction)]
    if invalid:
        grades = ", ".join(_g(f) for f in invalid)
        raise Malformed(f"grades ({grades}) do not match Moodle's grade options, so Moodle "
                        f"refuses this question too (the grades are {GRADE_LIST} and their "
                        "negatives)")


def _is_moodle_grade(percent: float) -> bool:
    return any(abs(abs(percent / 100) - grade) < 1e-5 for grade in MOODLE_GRADES)


def _check_moodle_fractions(entry: Entry) -> None:
    """save_question_options of Moodle's multichoice: a single answer needs a choice at
    100 % (errfractionsnomax); several need positive grades adding up to 100 %, rounded
    to 0.01 (errfractionsaddwrong)."""
    fractions = [a.fraction / 100 for a in entry.answers]
    if entry.single:
        best = max(fractions)
        if best < FULL_MARKS / 100:
            raise Malformed(f"multichoice question has no correct answer: no choice is at 100% "
                            f"(the best is {_g(best * 100)}%), and Moodle refuses it too (one "
                            "of the choices should be 100%, so that it is possible to get a "
                            "full grade)")
        return
    total = round(sum(f for f in fractions if f > 0), 2)
    if total != 1:
        subject = ("multiple-answer multichoice question has no correct answer: its positive "
                   "grades" if total == 0 else "multiple-answer multichoice question's "
                   "positive grades")
        raise Malformed(f"{subject} add up to {_g(total * 100)}%, not 100%, and Moodle refuses "
                        "it too (the positive grades you have chosen do not add up to 100%)")


# ---------------------------------------------------------------------------- choices


def _choices(entry: Entry, notes: list[str], losses: Losses) -> _Plan:
    answers, label = entry.answers, _label(entry)
    if len(answers) < 2:
        raise Malformed(f"{label} question needs at least two answers, not {len(answers)}")
    if len(answers) > len(KEYS):
        raise Malformed(f"{label} question has {len(answers)} answers; at most {len(KEYS)} "
                        "can be imported")
    for number, answer in enumerate(answers, 1):
        if not markdown(answer.text, "en", losses).strip():
            raise Malformed(f"{label} answer {number} has no text")
    if entry.type == "multichoice":
        _check_moodle_fractions(entry)
    if entry.single:
        correct, kind = _single(entry, notes, losses), "single_choice"
    else:
        correct, kind = _multiple(entry, notes, losses), "multi_choice"
    keys = KEYS[:len(answers)]
    return _Plan({"kind": kind, "choices": [{"key": k, "correct": right} for k, right in
                                             zip(keys, correct, strict=True)]}, correct)


def _single(entry: Entry, notes: list[str], losses: Losses) -> list[bool]:
    full = [a for a in entry.answers if a.fraction >= FULL_MARKS]
    label = _label(entry)
    if not full:
        raise Malformed(f"{label} question has no correct answer")
    if len(full) > 1:
        raise Malformed(f"single-answer {label} question has {len(full)} answers at 100%; "
                        "a single choice has exactly one correct answer")
    for answer in entry.answers:
        name = _short(answer.text, losses)
        if 0 < answer.fraction < FULL_MARKS:
            notes.append(f"{_percent(answer.fraction)} on '{name}': partial credit is not "
                         "kept, here it is a wrong choice")
        elif answer.fraction < 0:
            notes.append(f"{_percent(answer.fraction)} on '{name}': here a wrong choice "
                         "scores 0, not less")
    return [a is full[0] for a in entry.answers]


def _multiple(entry: Entry, notes: list[str], losses: Losses) -> list[bool]:
    correct = [a.fraction > 0 for a in entry.answers]
    if not any(correct):
        raise Malformed(f"{_label(entry)} question has no correct answer")
    share = f"{_g(100 / sum(correct))} %"
    if len({round(a.fraction, 2) for a in entry.answers if a.fraction > 0}) > 1:
        notes.append("unequal weights are not kept: every answer with a positive fraction is "
                     f"a correct choice worth {share}")
    for answer in entry.answers:
        if answer.fraction < 0:
            notes.append(f"{_percent(answer.fraction)} on '{_short(answer.text, losses)}': "
                         f"here a wrong choice ticked costs one correct choice's share "
                         f"({share})")
    free = [_short(a.text, losses) for a in entry.answers if a.fraction == 0]
    if free:
        notes.append(f"0 % on {', '.join(repr(f) for f in free)}: Moodle takes nothing for "
                     f"ticking them; here a wrong choice ticked costs one correct choice's "
                     f"share ({share})")
    return correct


def _choice_texts(entry: Entry, correct: list[bool], general: str, texts: dict[str, Any],
                  write: _Writer) -> tuple[list[str], str]:
    keys = KEYS[:len(entry.answers)]
    if entry.type == "truefalse":
        labels = TRUE_FALSE.get(write.lang, TRUE_FALSE["en"])
        shown = [labels[0] if a.text.raw == "True" else labels[1] if a.text.raw == "False"
                 else write(a.text) for a in entry.answers]
    else:
        shown = [write(a.text) for a in entry.answers]
    feedback = [write(a.feedback) for a in entry.answers]
    texts["choices"] = dict(zip(keys, shown, strict=True))
    texts["choice_feedback"] = {k: f for k, f, right in zip(keys, feedback, correct, strict=True)
                                if not right and f.strip()}
    extra = [f"Feedback on the correct answer \"{s}\": {f}" for s, f, right in
             zip(shown, feedback, correct, strict=True)
             if right and f.strip() and f.strip() != general.strip()]
    return extra, "; ".join(s for s, right in zip(shown, correct, strict=True) if right)


def _combined_texts(entry: Entry, write: _Writer) -> list[str]:
    """Moodle's combined feedback, unless it is Moodle's default sentence."""
    kept = []
    for tag, label in COMBINED.items():
        text = write(entry.combined.get(tag, Rich())).strip()
        if text and text not in DEFAULT_COMBINED:
            kept.append(f"{label}: {text}")
    return kept


# ---------------------------------------------------------------------------- numerical


def _numeric(entry: Entry, notes: list[str]) -> _Plan:
    catch_alls = [a for a in entry.answers if a.text.raw.strip() == "*"]
    answers = [a for a in entry.answers if a.text.raw.strip() != "*"]
    catch_all = _catch_all(catch_alls, notes)
    if not answers:
        raise Malformed("numerical question has no answer")
    read = [(a, _number(a.text.raw, "numerical answer"),
             abs(_number(a.tolerance, "tolerance")) if a.tolerance.strip() else 0.0)
            for a in answers]
    right = next((r for r in read if r[0].fraction >= FULL_MARKS), None)
    if right is None:
        raise Malformed("numerical question has no correct answer (none at 100%)")
    answer, value, tolerance = right
    unit, scale, stated, known = _unit(entry, value, notes)
    shown = f"{_g(value)} ± {_g(tolerance)}{' ' + unit if unit else ''}"
    others = [r for r in read if r is not right]
    if others:
        notes.append(f"{len(others)} other answer(s) are listed in the explanation: a named "
                     "mistake needs a calculator")
    numeric = {"calculator": UNBOUND_CALCULATOR, "value": stated,
               "tolerance": {"type": "absolute", "value": float(_g(tolerance * scale))}}
    if known:
        numeric["unit"] = unit  # the unit the prompt asks for
    return _Plan({"kind": "numeric", "answer": numeric},
                 numbers=_Numbers(shown, unit, answer, others, catch_all))


def _catch_all(answers: list[Answer], notes: list[str]) -> Answer | None:
    """Moodle's ``*`` answer matches any other response; here any other answer is wrong."""
    if not answers:
        return None
    answer = answers[0]
    if answer.fraction > 0:
        notes.append(f"the catch-all answer '*' gives {_percent(answer.fraction)} to any other "
                     "answer in Moodle: not kept, any other answer is wrong here")
    if answer.feedback:
        notes.append("the catch-all answer '*' (any other answer) is kept as its feedback in "
                     "the explanation: 'Any other answer: …'")
        return answer
    notes.append("the catch-all answer '*' has no feedback: nothing to keep, any other "
                 "answer is wrong here too")
    return None


def _unit(entry: Entry, value: float, notes: list[str]
          ) -> tuple[str, float, float | int | str, bool]:
    """The unit the answer is written in (Moodle's unit with multiplier 1), the size of
    one of it in the calculators' base unit, the value as our ``answer.value``, and
    whether the calculators know the unit."""
    base = [name for name, multiplier in entry.units if multiplier == 1]
    unit = base[0].strip() if base else ""
    others = [f"{name} (multiplier {_g(m)})" for name, m in entry.units if name != unit]
    if others:
        notes.append(f"other units Moodle accepts are not kept: {', '.join(others)}; Ringside "
                     "reads any unit of the answer's kind once a calculator is bound")
    if entry.unit_settings:
        notes.append("Moodle's unit settings are not kept: " + ", ".join(
            f"{k} {v}" for k, v in entry.unit_settings.items()))
    if not unit:
        return "", 1.0, _plain(value), False
    try:
        scale = parse(f"1 {unit}", unit_dimension(unit))
    except UnitError:
        notes.append(f"the unit '{unit[:20]}' is not one the calculators know: the value is "
                     "stored as a plain number")
        return unit, 1.0, _plain(value), False
    return unit, scale, f"{_g(value)} {unit}", True


def _numeric_texts(numbers: _Numbers, general: str, write: _Writer) -> tuple[list[str], str]:
    extra = [f"Imported without a calculator: the answer is {numbers.shown} (absolute "
             "tolerance). Bind it to a calculator before publishing."]
    feedback = write(numbers.answer.feedback).strip()
    if feedback and feedback != general.strip():
        extra.append(f"Feedback on the correct answer: {feedback}")
    unit = f" {numbers.unit}" if numbers.unit else ""
    if numbers.others:
        extra.append("Other answers in the imported file:\n" + "\n".join(
            _list_item(f"{_g(v)} ± {_g(t)}{unit} ({_g(a.fraction)}%)",
                       write(a.feedback)) for a, v, t in numbers.others))
    if numbers.catch_all is not None:
        extra.append(f"Any other answer: {write(numbers.catch_all.feedback)}")
    return extra, numbers.shown


def _list_item(head: str, text: str) -> str:
    """``- head: text``, the text's further lines indented into the item."""
    if not text.strip():
        return f"- {head}"
    lines = text.strip().split("\n")
    rest = "".join(f"\n  {line}" if line.strip() else "\n" for line in lines[1:])
    return f"- {head}: {lines[0]}{rest}"


_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def _number(text: str, what: str) -> float:
    cleaned = text.strip()
    if not _NUMBER.fullmatch(cleaned) or not math.isfinite(float(cleaned)):
        raise Malformed(f"{what} '{cleaned[:40]}' is not a number")
    return float(cleaned)


def _plain(value: float) -> float | int:
    return int(value) if value.is_integer() and abs(value) < 1e15 else value


def _g(value: float) -> str:
    return f"{value:.10g}"


def _percent(value: float) -> str:
    return f"{_g(value).replace('-', '−')} %"


def _shorten(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit - 1].rstrip() + "…"


def _short(text: Rich, losses: Losses) -> str:
    return _shorten(markdown(text, "en", losses), 40)


def slugify(text: str, limit: int = 72) -> str:
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", plain.lower()).strip("-")[:limit].rstrip("-")


def unique_slug(text: str, taken: set[str]) -> str:
    """A slug of ``text`` that no question has: ``name``, ``name-2``, ``name-3``..."""
    base = slugify(text) or "imported-question"
    slug, n = base, 2
    while slug in taken:
        slug, n = f"{base}-{n}", n + 1
    return slug


def _tags(names: list[str]) -> list[str]:
    return list(dict.fromkeys(s for s in (slugify(n, 80) for n in names) if s))[:20]


# ---------------------------------------------------------------------------- notes


_CONTEXTS = {"$course$", "$system$", "$module$", "$cat$", "$coursecategory$", "top"}


def _category_parts(entry: Entry) -> list[str]:
    """``$course$/top/A/B`` -> [A, B] (Moodle writes a ``/`` in a name as ``//``)."""
    parts = [p.replace("\0", "/").strip()
             for p in entry.category.replace("//", "\0").split("/")]
    return [p for p in parts if p and p.lower() not in _CONTEXTS]


def _entry_notes(entry: Entry, losses: Losses) -> list[str]:
    notes = losses.notes()
    files = [f for f in dict.fromkeys(entry.files) if f not in losses.named_files]
    if files:
        notes.append(f"embedded files are not imported: {', '.join(files)}")
    if entry.hints:
        shown = "; ".join(f"{n}. {_short(h, losses)!r}" for n, h in enumerate(entry.hints, 1))
        notes.append(f"{len(entry.hints)} hint(s) are not imported (Ringside shows no "
                     f"hints): {shown}")
    defaults = [COMBINED[tag] for tag, text in entry.combined.items()
                if markdown(text, "en", Losses()).strip() in DEFAULT_COMBINED]
    if defaults:
        notes.append("Moodle's default combined feedback is not kept: "
                     + ", ".join(d.lower() for d in defaults))
    if entry.category:
        tags = _tags(_category_parts(entry))
        offered = f" (offered as tags: {', '.join(tags)})" if tags else ""
        notes.append(f"from Moodle category '{entry.category}'{offered}")
    return notes


def _languages(entry: Entry, notes: list[str]) -> list[str]:
    """Our languages the entry's multilang texts carry (English always), in our order;
    the others are noted as lost."""
    found: dict[str, None] = {}
    for text in _texts_of(entry):
        for code in languages_in(text):
            found[code] = None
    ours = [lang for lang in LANGUAGES if lang == "en" or lang in {_ours(c) for c in found}]
    lost = sorted({c for c in found if _ours(c) not in LANGUAGES})
    if lost:
        notes.append(f"texts in {', '.join(lost)} are not kept: Ringside's languages are "
                     f"{', '.join(LANGUAGES)}")
    if len(ours) > 1:
        notes.append(f"translations from Moodle's multilang texts: {', '.join(ours)}")
    if found and "en" not in {_ours(c) for c in found}:
        notes.append("no English text in the multilang texts: the English draft holds the "
                     "language Moodle shows by default (the first one); translate it")
    return ours


def _texts_of(entry: Entry) -> Iterator[Rich]:
    yield Rich(entry.name)
    yield from (entry.prompt, entry.feedback, *entry.combined.values())
    for answer in entry.answers:
        yield from (answer.text, answer.feedback)


def title_of(entry: Entry, lang: str = "en") -> str:
    """The question's name as plain text in ``lang`` (Moodle strips tags from names)."""
    return plain_text(Rich(entry.name, "html"), lang) if entry.name.strip() else ""


# ---------------------------------------------------------------------------- Markdown

# Private-use characters mark, while a text is converted, what is already final Markdown
# (math, code) and where line and paragraph breaks go; the file's own ones are removed.
_STASH_OPEN, _STASH_CLOSE, _BREAK, _PARAGRAPH = "\ue000", "\ue001", "\ue002", "\ue003"
_PRIVATE = re.compile("[\ue000-\ue003]")
_STASHED = re.compile(f"{_STASH_OPEN}(\\d+){_STASH_CLOSE}")


class Losses:
    """What converting a question's texts could not keep, noted once per kind."""

    def __init__(self) -> None:
        self.images: dict[str, None] = {}
        self.named_files: dict[str, None] = {}  # embedded files already in a note
        self.missing: dict[str, None] = {}  # languages some texts lack
        self.other: dict[str, None] = {}

    def note(self, text: str) -> None:
        self.other[text] = None

    def image(self, name: str) -> None:
        self.images[name] = None
        self.named_files[name] = None

    def notes(self) -> list[str]:
        notes = list(self.other)
        if self.images:
            notes.insert(0, "images are not imported (only their description is kept): "
                         + ", ".join(self.images))
        if self.missing:
            notes.append(f"some multilang texts have no {', '.join(self.missing)} version: "
                         "Moodle's fallback text is used there")
        return notes


def to_text(text: str, fmt: str) -> tuple[str, int]:
    """A Moodle text in ``fmt`` as our Markdown, and how many images it had."""
    losses = Losses()
    converted = markdown(Rich(text, fmt), "en", losses)
    return converted, len(losses.images)


def markdown(text: Rich, lang: str = "en", losses: Losses | None = None) -> str:
    """``text`` as Ringside's Markdown in ``lang``: its multilang part for ``lang``, HTML
    converted, what Markdown would misread escaped; losses go to ``losses``."""
    losses = losses if losses is not None else Losses()
    raw, missing = pick_language(text, lang)
    if missing:
        losses.missing[lang] = None
    return _convert(raw, text.fmt, losses)


def plain_text(text: Rich, lang: str = "en") -> str:
    """The words of ``text`` without markup (titles, slugs)."""
    raw, _ = pick_language(text, lang)
    if text.fmt == "plain_text":
        return " ".join(raw.split())
    builder = _TreeBuilder(raw_text=False)
    builder.feed(_PRIVATE.sub("", raw))
    builder.close()
    return " ".join(_words(builder.root).split())


def _words(node: _Node) -> str:
    if node.tag in _SKIP:
        return ""
    return "".join(c if isinstance(c, str) else f" {_words(c)} " if c.tag in _SEPARATE
                   else _words(c) for c in node.children)


def _convert(raw: str, fmt: str, losses: Losses) -> str:
    raw = _PRIVATE.sub("", raw.replace("\r\n", "\n").replace("\r", "\n"))
    stash: list[str] = []
    if fmt == "markdown":
        text = _stash_math(_stash_code(raw, stash), stash, html=False, markdown_text=True)
        text = _escape_dollars(text, losses)
        text = _HtmlToMarkdown(losses, markdown_text=True).convert(text)
    elif fmt == "plain_text":
        text = _plain_to_markdown(_stash_math(raw, stash, html=False))
    else:  # html and moodle_auto_format; Moodle reads an unknown format as HTML
        if fmt == "moodle_auto_format":  # HTML allowed, and a newline is a line break
            raw = raw.replace("\n", "<br>")
        text = _HtmlToMarkdown(losses, markdown_text=False).convert(
            _stash_math(raw, stash, html=True))
    return _STASHED.sub(lambda m: stash[int(m.group(1))], text).strip()


def _escape_dollars(text: str, losses: Losses) -> str:
    """Moodle shows a single $ as it is; here it would start math."""
    escaped = _LONE_DOLLAR.sub(r"\\$", text)
    if escaped != text:
        losses.note("a $ that is not math in Moodle (only \\(…\\), \\[…\\] and $$…$$ are) is "
                    "kept as a $ sign, written \\$")
    return escaped


def _stash(stash: list[str], text: str) -> str:
    stash.append(text)
    return f"{_STASH_OPEN}{len(stash) - 1}{_STASH_CLOSE}"


# MathJax's delimiters (Moodle's default math filter), $$…$$ and [tex]…[/tex] (its TeX
# filter). A single $ is not math in Moodle, so it is escaped.
_MATH = re.compile(r"\\\((.+?)\\\)|\\\[(.+?)\\\]|\$\$(.+?)\$\$|\[tex\](.+?)\[/tex\]",
                   re.DOTALL | re.IGNORECASE)
# In a Markdown text Moodle's MathJax sees \( only where the author wrote \\( (Markdown
# reads \( as an escaped parenthesis); both are taken as math, the escaped TeX unescaped.
_MARKDOWN_MATH = re.compile(r"\\?\\\((.+?)\\?\\\)|\\?\\\[(.+?)\\?\\\]|\$\$(.+?)\$\$"
                            r"|\[tex\](.+?)\[/tex\]", re.DOTALL | re.IGNORECASE)
_MARKDOWN_ESCAPED = re.compile(r"\\\\(?=[\\\\`*_{}\[\]()#+\-.!])")
_LONE_DOLLAR = re.compile(r"(?<!\\)\$")
_TAG = re.compile(r"<[^<>]*>")


def _stash_math(text: str, stash: list[str], html: bool, markdown_text: bool = False) -> str:
    def keep(found: re.Match[str]) -> str:
        inline = found.group(1) if found.group(1) is not None else found.group(4)
        body = inline if inline is not None else (found.group(2) or found.group(3) or "")
        if html:  # HTML's whitespace is one space, in math too (no paragraph break in it)
            body = re.sub(r"\s+", " ", html_entities.unescape(_TAG.sub(" ", body)))
        if markdown_text:
            body = _MARKDOWN_ESCAPED.sub(r"\\", body)
        if not body.strip():
            return ""
        return _stash(stash, f"${body}$" if inline is not None else f"$${body.strip()}$$")

    return (_MARKDOWN_MATH if markdown_text else _MATH).sub(keep, text)


_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})[^\n]*\n.*?(?:^[ \t]{0,3}\1[`~]*[ \t]*$|\Z)",
                    re.DOTALL | re.MULTILINE)
_CODE_SPAN = re.compile(r"(?<![`\\])(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.DOTALL)


def _stash_code(text: str, stash: list[str]) -> str:
    """Markdown code is kept exactly as written (no math, no escapes, no tags)."""
    text = _FENCE.sub(lambda m: _stash(stash, m.group(0)), text)
    return _CODE_SPAN.sub(lambda m: _stash(stash, m.group(0)), text)


def _plain_to_markdown(text: str) -> str:
    """Plain text as Moodle shows it: every line kept, blank lines between paragraphs."""
    paragraphs = []
    for block in re.split(r"\n[ \t]*\n", text.strip()):
        lines = [escape_markdown(line.strip()) for line in block.split("\n") if line.strip()]
        paragraphs.append(escape_line_starts("\\\n".join(lines)))
    return "\n\n".join(p for p in paragraphs if p)


_SPECIAL = re.compile(r"[\\`*\[|$]|&(?=#?\w+;)|(?<![^\W_])_|_(?![^\W_])")


def escape_markdown(text: str) -> str:
    """``text`` shown as written once rendered: Markdown's and math's characters escaped
    (an ``_`` inside a word, as in snake_case, cannot start emphasis and stays)."""
    return _SPECIAL.sub(lambda m: "\\" + m.group(0), text)


_ORDERED_MARK = re.compile(r"(\d{1,9})([.)])(?=\s|$)")
_RULE = re.compile(r"(-[ \t]*){2,}|=+[ \t]*|-")


def escape_line_starts(text: str) -> str:
    """What starts a heading, quote, list, rule or fence at a line start, escaped."""
    return "\n".join(_escape_line_start(line) for line in text.split("\n"))


def _escape_line_start(line: str) -> str:
    ordered = _ORDERED_MARK.match(line)
    if ordered:
        return f"{ordered.group(1)}\\{line[ordered.end(1):]}"
    if line[:1] in ("#", ">") or line.startswith("~~~") or _RULE.fullmatch(line):
        return "\\" + line
    if line[:1] in ("-", "+") and line[1:2] in ("", " ", "\t"):
        return "\\" + line
    return line


# ---------------------------------------------------------------------------- HTML tree

_VOID = {"br", "img", "hr", "input", "meta", "link", "wbr", "source", "col", "embed", "area",
         "base", "param", "track"}
_SKIP = {"script", "style", "head", "title", "template", "noscript", "svg", "select",
         "textarea", "button", "math"}
_MEDIA = {"audio", "video", "iframe", "object", "embed"}
_BLOCK = {"p", "div", "ul", "ol", "li", "table", "h1", "h2", "h3", "h4", "h5", "h6",
          "blockquote", "pre", "hr", "section", "article", "header", "footer", "figure",
          "figcaption", "dl", "dt", "dd", "form", "center", "address", "nav", "aside", "main",
          "details", "summary", "fieldset", "legend"}
_INLINE = {"html", "body", "br", "span", "b", "i", "u", "em", "strong", "a", "img", "sup",
           "sub", "code", "font", "small", "big", "td", "th", "tr", "tbody", "thead", "tfoot",
           "caption", "s", "strike", "del", "ins", "mark", "abbr", "cite", "q", "kbd", "samp",
           "var", "label", "meta", "link", "embed", "source", "input", "option", "tt", "nobr",
           "wbr", "col", "colgroup", "picture", "base", "lang", "audio", "video", "iframe",
           "object", "track", "param", "area", "map", "time", "data", "bdi", "bdo", "dfn"}
_HTML = _SKIP | _BLOCK | _INLINE
_SEPARATE = _BLOCK | {"br"}  # tags between which words are apart
_MAX_DEPTH = 100  # deeper nesting is read flat (no recursion limit for hostile input)


@dataclass
class _Node:
    tag: str
    attrs: dict[str, str] = field(default_factory=dict)
    children: list[_Node | str] = field(default_factory=list)
    source: str = ""  # the start tag as written


class _TreeBuilder(HTMLParser):
    """An HTML fragment as a tree, closing what browsers close (a ``<p>`` before a block,
    a ``<li>`` before the next). In Markdown, what is not an HTML tag stays text."""

    def __init__(self, raw_text: bool) -> None:
        super().__init__(convert_charrefs=not raw_text)
        self.raw_text = raw_text
        self.root = _Node("root")
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._open(tag, attrs, closed=tag in _VOID)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._open(tag, attrs, closed=True)

    def _open(self, tag: str, attrs: list[tuple[str, str | None]], closed: bool) -> None:
        source = self.get_starttag_text() or ""
        if self.raw_text and tag not in _HTML:
            self.handle_data(source)
            return
        self._close_implied(tag)
        node = _Node(tag, {k: v or "" for k, v in attrs}, [], source)
        self.stack[-1].children.append(node)
        if not closed and len(self.stack) < _MAX_DEPTH:
            self.stack.append(node)

    def _close_implied(self, tag: str) -> None:
        if tag in _BLOCK and self.stack[-1].tag == "p":
            self.stack.pop()
        if tag in ("li", "tr", "td", "th", "dt", "dd"):
            closes = {"li": ("li",), "tr": ("tr", "td", "th"), "td": ("td", "th"),
                      "th": ("td", "th"), "dt": ("dt", "dd"), "dd": ("dt", "dd")}[tag]
            if self.stack[-1].tag in closes:
                self.stack.pop()

    def handle_endtag(self, tag: str) -> None:
        for depth in range(len(self.stack) - 1, 0, -1):
            if self.stack[depth].tag == tag:
                del self.stack[depth:]
                return
        if self.raw_text and tag not in _HTML:
            self.handle_data(f"</{tag}>")

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)

    def handle_entityref(self, name: str) -> None:  # Markdown keeps its entities
        self.handle_data(f"&{name};")

    def handle_charref(self, name: str) -> None:
        self.handle_data(f"&#{name};")


def _web_address(url: str) -> bool:
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return False
    return parts.scheme.lower() in ("http", "https") and bool(parts.netloc)


def _target(url: str) -> str:
    """A link destination Markdown reads whole (spaces and parentheses encoded)."""
    return quote(url.strip(), safe=":/?#[]@!$&'*+,;=%~")


def _file_name(url: str) -> str:
    return unquote(url.strip().rstrip("/").rsplit("/", 1)[-1])[:80] or url[:80]


class _HtmlToMarkdown:
    """An HTML fragment (or Moodle Markdown with HTML in it) as CommonMark.

    With ``markdown_text`` the text between tags is already Markdown and stays as written;
    otherwise it is HTML text: whitespace collapses and Markdown's characters are escaped.
    """

    def __init__(self, losses: Losses, markdown_text: bool) -> None:
        self.losses, self.raw = losses, markdown_text
        self.strong = self.emphasis = 0

    def convert(self, text: str) -> str:
        builder = _TreeBuilder(self.raw)
        builder.feed(text)
        builder.close()
        joined = "\n\n".join(self.blocks(builder.root.children))
        return re.sub(r"\n[ \t]*\n(?:[ \t]*\n)+", "\n\n", joined)

    # ------------------------------------------------------------------ blocks

    def blocks(self, children: list[_Node | str]) -> list[str]:
        out: list[str] = []
        run: list[_Node | str] = []
        for child in children:
            if isinstance(child, _Node) and child.tag in _BLOCK:
                out += self.paragraphs(run)
                run = []
                out += self.block(child)
            else:
                run.append(child)
        out += self.paragraphs(run)
        return [b for b in out if b.strip()]

    def block(self, node: _Node) -> list[str]:
        tag = node.tag
        if tag in ("ul", "ol"):
            return [self.listing(node)]
        if tag == "li":
            return [self.item("-", node)]
        if tag == "pre":
            return [self.fenced(node)]
        if tag == "hr":
            return ["---"]
        if tag == "table":
            return [self.table(node)]
        if tag == "blockquote":
            inner = "\n\n".join(self.blocks(node.children))
            return ["\n".join(f"> {line}".rstrip() for line in inner.split("\n"))]
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            title = " ".join(self.line(node.children).split())
            return [f"{'###' if tag <= 'h3' else '####'} {title}"] if title else []
        return self.blocks(node.children)

    def paragraphs(self, run: list[_Node | str]) -> list[str]:
        text = self.inline(run)
        if self.raw:
            text = re.sub(f"^[\n{_BREAK}]+|[\\s{_BREAK}]+$", "", text)
            text = re.sub(f"{_BREAK}[ \t]*\n?", "\\\\\n", text).replace(_PARAGRAPH, "\n\n")
            return [text] if text.strip() else []
        text = re.sub(f"\\s*{_BREAK}\\s*", _BREAK, re.sub(r"[ \t\n]+", " ", text))
        text = re.sub(f"{_BREAK}{{2,}}", _PARAGRAPH, text)
        pieces = (p.strip(f" {_BREAK}") for p in text.split(_PARAGRAPH))
        return [escape_line_starts(p.replace(_BREAK, "\\\n")) for p in pieces if p]

    def line(self, children: list[_Node | str]) -> str:
        """Inline Markdown on one line (headings, table cells)."""
        text = self.inline(children)
        return re.sub(f"[\\s{_BREAK}{_PARAGRAPH}]+", " ", text).strip()

    def listing(self, node: _Node) -> str:
        number = int(node.attrs.get("start", "1")) if node.attrs.get("start", "").isdigit() else 1
        items: list[str] = []
        for child in node.children:
            if isinstance(child, str):
                if child.strip():
                    items.append(self.item("-", _Node("li", children=[child])))
                continue
            if child.tag in ("ul", "ol") and items:  # a list inside a list, not in an item
                items[-1] += "\n" + _indent(self.listing(child), 2)
                continue
            marker = f"{number}." if node.tag == "ol" else "-"
            items.append(self.item(marker, child if child.tag == "li" else
                                   _Node("li", children=[child])))
            number += 1
        return "\n".join(i for i in items if i.strip())

    def item(self, marker: str, node: _Node) -> str:
        parts = self.blocks(node.children)
        body = ""
        for part in parts:  # a nested list follows its line; paragraphs get a blank line
            joint = "\n" if re.match(r"(?:[-*+]|\d+[.)]) ", part) else "\n\n"
            body = f"{body}{joint}{part}" if body else part
        return f"{marker} " + _indent(body, len(marker) + 1).lstrip()

    def fenced(self, node: _Node) -> str:
        code = self.plain(node, keep_space=True).removeprefix("\n").rstrip()
        runs = [len(r) for r in re.findall(r"`{3,}", code)]
        fence = "`" * max([3, *(r + 1 for r in runs)])
        language = ""
        inner = next((c for c in node.children if isinstance(c, _Node) and c.tag == "code"),
                     None)
        if inner is not None:
            found = re.search(r"(?:lang|language)-([\w+-]+)", inner.attrs.get("class", ""))
            language = found.group(1) if found else ""
        return f"{fence}{language}\n{code}\n{fence}"

    def table(self, node: _Node) -> str:
        rows = [[self.cell(c) for c in row.children
                 if isinstance(c, _Node) and c.tag in ("td", "th")]
                for row in _descendants(node, "tr")]
        rows = [r for r in rows if r]
        if not rows:
            return "\n\n".join(self.blocks(node.children))
        width = max(len(r) for r in rows)
        lines = ["| " + " | ".join(r + [""] * (width - len(r))) + " |" for r in rows]
        lines.insert(1, "|" + " --- |" * width)
        caption = next((self.line(c.children) for c in node.children
                        if isinstance(c, _Node) and c.tag == "caption"), "")
        return (f"{caption}\n\n" if caption else "") + "\n".join(lines)

    def cell(self, node: _Node) -> str:
        text = self.line(node.children)
        return re.sub(r"(?<!\\)\|", r"\\|", text) if self.raw else text

    # ------------------------------------------------------------------ inline

    def inline(self, nodes: list[_Node | str]) -> str:
        parts: list[str] = []
        for node in nodes:
            self.add(parts, node)
        return "".join(parts)

    def add(self, parts: list[str], node: _Node | str) -> None:
        if isinstance(node, str):
            parts.append(node if self.raw else escape_markdown(re.sub(r"\s+", " ", node)))
            return
        tag = node.tag
        if tag in _SKIP:
            self.skipped(node)
        elif tag == "br":
            parts.append(_BREAK)
        elif tag in _BLOCK:  # a block inside inline markup: its own paragraph
            parts += [_PARAGRAPH, self.inline(node.children), _PARAGRAPH]
        elif tag in ("b", "strong") or _BOLD_STYLE.search(node.attrs.get("style", "")):
            parts.append(self.emphasised(node, "**"))
        elif tag in ("i", "em") or _ITALIC_STYLE.search(node.attrs.get("style", "")):
            parts.append(self.emphasised(node, "*"))
        elif tag in ("code", "tt", "kbd", "samp"):
            parts.append(_code_span(" ".join(self.plain(node).split())))
        elif tag == "a":
            parts.append(self.link(node))
        elif tag == "img":
            parts.append(self.image(node))
        elif tag in ("sup", "sub"):
            self.script(parts, node)
        elif tag in _MEDIA:
            parts.append(self.media(node))
        elif self.raw and tag not in _HTML:
            parts += [node.source, self.inline(node.children)]
        else:
            parts.append(self.inline(node.children))

    def emphasised(self, node: _Node, mark: str) -> str:
        depth = "strong" if mark == "**" else "emphasis"
        if getattr(self, depth):  # already inside: ** in ** would end it
            return self.inline(node.children)
        setattr(self, depth, getattr(self, depth) + 1)
        try:
            inner = self.inline(node.children)
        finally:
            setattr(self, depth, getattr(self, depth) - 1)
        core = inner.strip(f" \t\n{_BREAK}")
        if not core or _PARAGRAPH in core:
            return inner
        start = inner.index(core)
        return f"{inner[:start]}{mark}{core}{mark}{inner[start + len(core):]}"

    def plain(self, node: _Node, keep_space: bool = False) -> str:
        """The text under ``node`` as written (code)."""
        out = []
        for child in node.children:
            if isinstance(child, str):
                out.append(child)
            elif child.tag == "br":
                out.append("\n")
            elif child.tag not in _SKIP:
                out.append(self.plain(child, keep_space))
        text = "".join(out)
        return text if keep_space else text.replace("\n", " ")

    def link(self, node: _Node) -> str:
        href = node.attrs.get("href", "").strip()
        label = self.line(node.children)
        if _web_address(href):
            return f"[{label or escape_markdown(href)}]({_target(href)})"
        if href.startswith("@@PLUGINFILE@@"):
            name = _file_name(href)
            self.losses.named_files[name] = None
            self.losses.note(f"the link to the embedded file '{name}' is lost (embedded files "
                             "are not imported): check that the question can be answered "
                             "without it")
        elif href and not href.startswith("#"):
            self.losses.note(f"the link to '{href[:80]}' is not kept: it is not a web "
                             "address")
        return label

    def image(self, node: _Node) -> str:
        alt = " ".join(node.attrs.get("alt", "").split())
        label = f"image: {alt if self.raw else escape_markdown(alt)}" if alt else "image"
        src = node.attrs.get("src", "").strip()
        self.losses.image(_file_name(src) if src else alt or "(no name)")
        if _web_address(src):
            return f"[{label}]({_target(src)})"
        return f"[{label}]"

    def media(self, node: _Node) -> str:
        """Audio, video and embedded pages: a link when they have a web address."""
        kind = {"audio": "audio", "video": "video"}.get(node.tag, "embedded content")
        sources = [node.attrs.get("src", "") or node.attrs.get("data", "")]
        sources += [s.attrs.get("src", "") for s in _descendants(node, "source")]
        links = []
        for src in (s.strip() for s in sources if s.strip()):
            name = _file_name(src)
            if _web_address(src):
                links.append(f"[{kind}: {escape_markdown(name)}]({_target(src)})")
                self.losses.note(f"the {kind} '{name}' is kept as a link to {src[:100]}")
            else:
                self.losses.named_files[name] = None
                self.losses.note(f"the {kind} '{name}' is an embedded file that is not "
                                 "imported: check that the question can be answered "
                                 "without it")
        return " ".join(links)

    def script(self, parts: list[str], node: _Node) -> None:
        """``2<sup>10</sup>`` is $2^{10}$, not "210"; ``x<sub>i</sub>`` is $x_{i}$."""
        content = " ".join(self.plain(node).split())
        if not content:
            return
        sup = node.tag == "sup"
        before = "".join(parts)
        base = _SCRIPT_BASE.search(before)
        if sup and base and base.group(1)[0].isdigit() and content.lower() in _ORDINALS:
            parts.append(content)  # 1<sup>st</sup>
            return
        if base and _SCRIPT_CONTENT.fullmatch(content):
            mark = "^" if sup else "_"
            parts[:] = [before[:base.start(1)],
                        f"${base.group(1)}{mark}{{{content.replace('−', '-')}}}$"]
            return
        mark = "^" if sup else "_"
        shown = content if self.raw else escape_markdown(content)
        parts.append(f"{escape_markdown(mark)}({shown})")
        self.losses.note(f"{'superscript' if sup else 'subscript'} '{content[:40]}' is written "
                         f"as {mark}(…)")

    def skipped(self, node: _Node) -> None:
        if node.tag == "math":
            self.losses.note("a MathML formula is not kept: write it as $…$ (LaTeX)")
        elif node.tag in ("select", "textarea", "button"):
            self.losses.note("form controls in the text are not kept")


# Editors write emphasis as a styled <span> too (Moodle's own truefalse.xml fixture does).
_BOLD_STYLE = re.compile(r"font-weight\s*:\s*(?:bold|[6-9]00)", re.IGNORECASE)
_ITALIC_STYLE = re.compile(r"font-style\s*:\s*italic", re.IGNORECASE)
_SCRIPT_BASE = re.compile(r"(?<![A-Za-z0-9.\\])([0-9]+(?:\.[0-9]+)?|[A-Za-z]{1,3})$")
_SCRIPT_CONTENT = re.compile(r"[-−+]?[A-Za-z0-9]+(?:\.[0-9]+)?")
_ORDINALS = {"st", "nd", "rd", "th", "e", "er", "re", "ème", "o", "a"}


def _descendants(node: _Node, tag: str) -> Iterator[_Node]:
    for child in node.children:
        if isinstance(child, _Node):
            if child.tag == tag:
                yield child
            elif child.tag != "table":  # a nested table's rows are its own
                yield from _descendants(child, tag)


def _code_span(code: str) -> str:
    if not code:
        return ""
    ticks = "`" * (max((len(r) for r in re.findall(r"`+", code)), default=0) + 1)
    pad = " " if code.startswith("`") or code.endswith("`") else ""
    return f"{ticks}{pad}{code}{pad}{ticks}"


def _indent(text: str, width: int) -> str:
    return "\n".join(" " * width + line if line.strip() else "" for line in text.split("\n"))


# ---------------------------------------------------------------------------- languages

# <span lang="fr" class="multilang">…</span> (and the older <lang lang="fr">): two or more
# in a row make a block, of which Moodle's multilang filter shows one language. Like the
# filter, a span ends at the first closing tag.
_LANG_SPAN = re.compile(r"<(lang|span)\b(?=[^>]*\blang\s*=)([^>]*)>(.*?)</(?:lang|span)>",
                        re.IGNORECASE | re.DOTALL)
_LANG_ATTR = re.compile(r"\blang\s*=\s*[\"']?([a-zA-Z0-9_-]+)", re.IGNORECASE)
# The multilang2 filter: {mlang en}…{mlang}, {mlang fr,fr_ca}…{mlang}, {mlang other}…
_MLANG = re.compile(r"\{mlang\s+([^}]*)\}(.*?)\{mlang\}", re.IGNORECASE | re.DOTALL)


def _code(lang: str) -> str:
    return lang.strip().lower().replace("-", "_")


def _ours(code: str) -> str:
    """Moodle's ``fr_ca`` is our ``fr``."""
    return code.split("_", 1)[0]


def _span_blocks(raw: str) -> list[tuple[int, int, dict[str, str]]]:
    """(start, end, {language: text}) of each multilang block, in order."""
    blocks: list[tuple[int, int, dict[str, str]]] = []
    start = end = -1
    texts: dict[str, str] = {}
    for found in _LANG_SPAN.finditer(raw):
        attrs = found.group(2)
        lang = _LANG_ATTR.search(attrs)
        if lang is None or (found.group(1).lower() == "span" and "multilang" not in attrs):
            continue
        if texts and not raw[end:found.start()].strip():
            texts[_code(lang.group(1))] = found.group(3)
        else:
            if len(texts) > 1:
                blocks.append((start, end, texts))
            start, texts = found.start(), {_code(lang.group(1)): found.group(3)}
        end = found.end()
    if len(texts) > 1:
        blocks.append((start, end, texts))
    return blocks


def languages_in(text: Rich) -> list[str]:
    """The language codes of ``text``'s multilang blocks (``fr``, ``zh_cn``), in order."""
    if "lang" not in text.raw:
        return []
    codes: dict[str, None] = {}
    if text.fmt != "plain_text":
        for _, _, texts in _span_blocks(text.raw):
            codes.update(dict.fromkeys(texts))
    for found in _MLANG.finditer(text.raw):
        codes.update(dict.fromkeys(c for c in map(_code, found.group(1).split(",")) if c
                                   and c != "other"))
    return list(codes)


def pick_language(text: Rich, lang: str) -> tuple[str, bool]:
    """``text`` as Moodle shows it in ``lang``, and whether some block lacked ``lang``."""
    raw, missing = text.raw, False
    if "lang" not in raw:
        return raw, False
    if text.fmt != "plain_text":
        pieces, last = [], 0
        for start, end, texts in _span_blocks(raw):
            chosen, lacking = _choose(texts, lang)
            pieces += [raw[last:start], chosen]
            missing, last = missing or lacking, end
        raw = "".join(pieces) + raw[last:]
    raw, lacking = _pick_mlang(raw, lang)
    return raw, missing or lacking


def _choose(texts: dict[str, str], lang: str) -> tuple[str, bool]:
    """Moodle's choice: the language (``fr`` or a ``fr_ca``), else English (every
    language's last parent), else the first; and whether ``lang`` was missing."""
    for code, text in texts.items():
        if _ours(code) == lang:
            return text, False
    english = [text for code, text in texts.items() if _ours(code) == "en"]
    return (english or list(texts.values()))[0], True


def _pick_mlang(raw: str, lang: str) -> tuple[str, bool]:
    """multilang2: the blocks in ``lang``; when there is none, the ``other`` blocks."""
    blocks = [(m, [_code(c) for c in m.group(1).split(",")]) for m in _MLANG.finditer(raw)]
    if not blocks:
        return raw, False
    matches = any(_ours(c) == lang for _, codes in blocks for c in codes)
    has_other = any("other" in codes for _, codes in blocks)

    def shown(found: re.Match[str]) -> str:
        codes = [_code(c) for c in found.group(1).split(",")]
        if matches:
            return found.group(2) if any(_ours(c) == lang for c in codes) else ""
        return found.group(2) if "other" in codes else ""

    return _MLANG.sub(shown, raw), not matches and not has_other


# ---------------------------------------------------------------------------- Moodle XML

_DECLARATION = re.compile(rb"<!\s*(DOCTYPE|ENTITY)", re.IGNORECASE)
_DTD_REFUSED = ("a DOCTYPE or ENTITY declaration is not accepted (it could read files on "
                "the server or expand without end); export the questions again without it")
SUPPORTED = ("multichoice", "truefalse", "numerical")
_UNIT_SETTINGS = ("unitgradingtype", "unitpenalty", "showunits", "unitsleft")


class _Forbidden(Exception):
    def __init__(self, line: int) -> None:
        self.line = line


def parse_xml(payload: bytes) -> tuple[ET.Element, dict[ET.Element, int]]:
    """The element tree and the line of every element; no DTD, no entity declaration."""
    found = _DECLARATION.search(payload)
    if found:
        line = payload.count(b"\n", 0, found.start()) + 1
        raise FileProblem(f"line {line}: {_DTD_REFUSED}")
    parser = expat.ParserCreate()
    builder = ET.TreeBuilder()
    lines: dict[ET.Element, int] = {}

    def start(tag: str, attrs: dict[str, str]) -> None:
        lines[builder.start(tag, attrs)] = parser.CurrentLineNumber

    def forbid(*_args: object) -> None:
        raise _Forbidden(parser.CurrentLineNumber)

    parser.StartElementHandler = start
    parser.EndElementHandler = builder.end
    parser.CharacterDataHandler = builder.data
    # The same refusal again inside expat, for encodings the byte search above cannot see.
    parser.StartDoctypeDeclHandler = forbid
    parser.EntityDeclHandler = forbid
    parser.ExternalEntityRefHandler = forbid
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    try:
        parser.Parse(payload, True)
    except _Forbidden as exc:
        raise FileProblem(f"line {exc.line}: {_DTD_REFUSED}") from None
    except expat.ExpatError as exc:
        raise FileProblem(f"line {exc.lineno}: the XML is not well-formed "
                          f"({expat.ErrorString(exc.code)})") from None
    return builder.close(), lines


def read_moodle(payload: bytes) -> tuple[list[Entry], list[Refusal]]:
    root, lines = parse_xml(payload)
    if root.tag != "quiz":
        raise FileProblem(f"line {lines[root]}: the document is <{root.tag[:40]}>, not <quiz>: "
                          "this is not a Moodle XML question file")
    entries: list[Entry] = []
    refused: list[Refusal] = []
    category = ""
    for node in root.findall("question"):
        line, kind = lines[node], node.get("type", "")
        if kind == "category":  # the questions after it are in this category
            category = " ".join((node.findtext("category/text") or "").split())
            continue
        if kind not in SUPPORTED:
            refused.append(Refusal(line, f"unsupported question type '{kind[:40]}'"))
            continue
        try:
            entries.append(_moodle_entry(node, line, kind, category))
        except Malformed as exc:
            refused.append(Refusal(line, str(exc)))
    if not entries and not refused:
        raise FileProblem("the file has no questions")
    return entries, refused


def _moodle_rich(node: ET.Element | None, default: str) -> Rich:
    """A text and its format; Moodle reads a missing format as the question text's."""
    if node is None:
        return Rich("", default)
    return Rich((node.findtext("text") or "").strip(), node.get("format", default).strip())


def _moodle_entry(node: ET.Element, line: int, kind: str, category: str) -> Entry:
    question = node.find("questiontext")
    fmt = question.get("format", "html").strip() if question is not None else "html"
    entry = Entry(line, kind, " ".join((node.findtext("name/text") or "").split()),
                  _moodle_rich(question, "html"), _moodle_rich(node.find("generalfeedback"), fmt),
                  tags=[t.findtext("text") or "" for t in node.findall("tags/tag")],
                  category=category, files=[f.get("name", "") for f in node.iter("file")])
    for answer in node.findall("answer"):
        entry.answers.append(_moodle_answer(answer, kind, fmt))
    if kind == "multichoice":
        entry.single = (node.findtext("single") or "true").strip().lower() not in ("false",
                                                                                   "0")
        entry.combined = {tag: _moodle_rich(node.find(tag), fmt) for tag in COMBINED
                          if node.find(tag) is not None}
    for unit in node.findall("units/unit"):
        entry.units.append(((unit.findtext("unit_name") or "").strip(), _number(
            unit.findtext("multiplier") or "1", "unit multiplier")))
    entry.unit_settings = {tag: " ".join(node.findtext(tag, "").split())[:20]
                           for tag in _UNIT_SETTINGS if node.find(tag) is not None}
    entry.hints = [h for h in (_moodle_rich(n, fmt) for n in node.findall("hint")) if h]
    entry.notes += _moodle_notes(node)
    return entry


def _moodle_answer(answer: ET.Element, kind: str, fmt: str) -> Answer:
    fraction = _number(answer.get("fraction", "0"), "answer fraction")
    text = (answer.findtext("text") or "").strip()
    feedback = _moodle_rich(answer.find("feedback"), fmt)
    if kind == "numerical":
        return Answer(Rich(text, "plain_text"), fraction, feedback,
                      answer.findtext("tolerance") or "")
    if kind == "truefalse":
        return Answer(Rich(text.capitalize(), "plain_text"), fraction, feedback)
    return Answer(Rich(text, answer.get("format", fmt).strip()), fraction, feedback)


def _moodle_notes(node: ET.Element) -> list[str]:
    notes = []
    image = (node.findtext("image") or "").strip()
    if image:
        notes.append(f"the old <image> field '{image[:80]}' is not imported")
    idnumber = (node.findtext("idnumber") or "").strip()
    if idnumber:
        notes.append(f"Moodle ID number '{idnumber[:100]}' is not kept")
    return notes


# ---------------------------------------------------------------------------- GIFT

_GIFT_FORMATS = {"html": "html", "moodle": "moodle_auto_format", "plain": "plain_text",
                 "markdown": "markdown"}
_GIFT_FORMAT = re.compile(r"\s*\[(html|moodle|plain|markdown)\]")
_TRUE_FALSE = re.compile(r"(?i)(T|F|TRUE|FALSE)\s*(#.*)?", re.DOTALL)
_WEIGHT = re.compile(r"\s*%([^%]*)%")
# Moodle's extract_idnumber_and_tags_from_comment: [id:…] and [tag:…] in the comment
# lines above a question, "\]" for a "]", no line break inside.
_GIFT_ID = re.compile(r"\[id:((?:\\\]|[^\]\x00-\x1f\x7f])+)\]")
_GIFT_TAG = re.compile(r"\[tag:((?:\\\]|[^\]<>`\x00-\x1f\x7f])+)\]")


@dataclass
class GiftBlock:
    """One question's lines; its ``//`` comment lines; the ``$CATEGORY:`` it is in."""

    line: int
    text: str
    comments: str = ""
    category: str = ""


def read_gift(payload: bytes) -> tuple[list[Entry], list[Refusal]]:
    try:
        text = payload.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise FileProblem("the file is not UTF-8 text") from None
    entries: list[Entry] = []
    refused: list[Refusal] = []
    for block in gift_blocks(text):
        try:
            entries.append(_gift_entry(block))
        except Malformed as exc:
            refused.append(Refusal(block.line, str(exc)))
    if not entries and not refused:
        raise FileProblem("the file has no questions")
    return entries, refused


def gift_blocks(text: str) -> list[GiftBlock]:
    """Questions separated by blank lines, each with its first line; ``//`` comment lines
    belong to the question they are in, ``$CATEGORY:`` lines set the category."""
    blocks: list[GiftBlock] = []
    current: list[str] = []
    comments: list[str] = []
    start, category = 0, ""

    def close() -> None:
        if current:
            blocks.append(GiftBlock(start, "\n".join(current), "\n".join(comments), category))
        current.clear()
        comments.clear()

    for number, raw in enumerate(text.splitlines(), 1):
        stripped = raw.strip()
        if stripped.startswith("//"):
            comments.append(stripped)
        elif not stripped:
            close()
        elif stripped.startswith("$CATEGORY:"):
            close()
            category = " ".join(stripped.removeprefix("$CATEGORY:").split())
        else:
            if not current:
                start = number
            current.append(raw)
    close()
    return blocks


def gift_comment_tags(comment: str) -> tuple[str, list[str]]:
    """The ``[id:…]`` and ``[tag:…]`` of a question's comment lines, as Moodle reads them."""
    found = _GIFT_ID.search(comment)
    idnumber = found.group(1).strip().replace("\\]", "]") if found else ""
    tags = [t.group(1).strip().replace("\\]", "]") for t in _GIFT_TAG.finditer(comment)]
    return idnumber, [t for t in tags if t]


def _find(text: str, token: str, start: int = 0) -> int:
    """Index of the first ``token`` not escaped with a backslash, or -1."""
    i = start
    while i < len(text):
        if text[i] == "\\":
            i += 2
        elif text.startswith(token, i):
            return i
        else:
            i += 1
    return -1


def _split(text: str, tokens: str) -> list[tuple[str, str]]:
    """``=a ~b`` -> [("=", "a "), ("~", "b")]: the text after each unescaped mark."""
    marks = sorted(i for token in tokens for i in _positions(text, token))
    if not marks:
        return []
    leading = text[:marks[0]].strip()
    if leading:
        raise Malformed(f"text '{leading[:30]}' comes before the first answer mark "
                        f"({' or '.join(tokens)})")
    ends = [*marks[1:], len(text)]
    return [(text[i], text[i + 1:end]) for i, end in zip(marks, ends, strict=True)]


def _positions(text: str, token: str) -> list[int]:
    found, i = [], _find(text, token)
    while i >= 0:
        found.append(i)
        i = _find(text, token, i + 1)
    return found


def _unescape(text: str) -> str:
    return re.sub(r"\\([\\:=~#{}n])", lambda m: "\n" if m.group(1) == "n" else m.group(1),
                  text)


def _gift_rich(raw: str, fmt: str = "moodle_auto_format") -> Rich:
    """A GIFT text: its own [format] if it has one, escapes undone (``\\n`` is a line
    break), trimmed as Moodle trims it."""
    raw = raw.strip()
    found = _GIFT_FORMAT.match(raw)
    if found:
        fmt, raw = _GIFT_FORMATS[found.group(1)], raw[found.end():]
    return Rich(_unescape(raw).strip(), fmt)


def _feedback(chunk: str) -> tuple[str, str]:
    """``text#feedback`` -> (text, feedback), on the first unescaped ``#``."""
    cut = _find(chunk, "#")
    return (chunk, "") if cut < 0 else (chunk[:cut], chunk[cut + 1:])


def _weight(chunk: str, mark: str) -> tuple[float, str]:
    found = _WEIGHT.match(chunk)
    if not found:
        return (100.0 if mark == "=" else 0.0), chunk
    return _number(found.group(1), "answer weight"), chunk[found.end():]


def _gift_entry(block: GiftBlock) -> Entry:
    text, name = block.text.strip(), ""
    if text.startswith("::"):
        end = _find(text, "::", 2)
        if end < 0:
            raise Malformed("the title is not closed with '::'")
        name = " ".join(_unescape(text[2:end]).split())
        text = text[end + 2:].lstrip()
    opening = _find(text, "{")
    if opening < 0:
        raise Malformed("no answer block {…}: this is a description, not a question")
    closing = _find(text, "}", opening + 1)
    if closing < 0:
        raise Malformed("the answer block '{' is not closed with '}'")
    before, body, after = text[:opening], text[opening + 1:closing], text[closing + 1:]
    found = _GIFT_FORMAT.match(before)
    # The question's format applies to its answers and feedback too.
    fmt = _GIFT_FORMATS[found.group(1)] if found else "moodle_auto_format"
    # Moodle: "_____" where the answer block was, unless the block ends the question.
    prompt = before.rstrip() + (" _____ " + after.strip() if after.strip() else "")
    general = _positions(body, "####")
    entry = Entry(block.line, "", name, _gift_rich(prompt), category=block.category)
    if general:  # the last #### (Moodle's strrpos)
        entry.feedback = _gift_rich(body[general[-1] + 4:], fmt)
        body = body[:general[-1]]
    idnumber, entry.tags = gift_comment_tags(block.comments)
    if idnumber:
        entry.notes.append(f"Moodle ID number '{idnumber[:100]}' is not kept")
    _gift_answers(entry, body.strip(), fmt)
    return entry


def _gift_answers(entry: Entry, body: str, fmt: str) -> None:
    if not body:
        raise Malformed("unsupported question type 'essay'")
    if body.startswith("#"):
        entry.type = "numerical"
        entry.answers = _gift_numerical(body[1:].strip(), fmt, entry.notes)
    elif _TRUE_FALSE.fullmatch(body):
        entry.type = "truefalse"
        truth, *feedback = _hash_split(body)
        wrong, right = [*(_gift_rich(f, fmt) for f in feedback), Rich(), Rich()][:2]
        is_true = truth.strip().upper() in ("T", "TRUE")
        entry.answers = [Answer(Rich("True", "plain_text"), 100.0 if is_true else 0.0,
                                right if is_true else wrong),
                         Answer(Rich("False", "plain_text"), 0.0 if is_true else 100.0,
                                wrong if is_true else right)]
    elif _find(body, "->") >= 0 and _find(body, "~") < 0:
        # As Moodle's qformat_gift: a tilde makes it multiple choice (an answer may say
        # "Pinned -> Device"); only = with -> and no tilde is matching.
        raise Malformed("unsupported question type 'matching'")
    elif _find(body, "~") >= 0:
        entry.type = "multichoice"
        chunks = _split(body, "=~")
        for mark, chunk in chunks:
            fraction, chunk = _weight(chunk, mark)
            answer, feedback = _feedback(chunk)
            entry.answers.append(Answer(_gift_rich(answer, fmt), fraction,
                                        _gift_rich(feedback, fmt)))
        # Moodle: one answer marked "=" makes a single-answer question; "~%50%" weights
        # without any "=" a multiple-answer one.
        entry.single = any(mark == "=" for mark, _ in chunks)
    elif body.startswith("="):
        raise Malformed("unsupported question type 'shortanswer'")
    else:
        raise Malformed(f"cannot tell the question type from the answer block "
                        f"'{{{' '.join(body.split())[:30]}}}'")


def _hash_split(body: str) -> list[str]:
    parts, start = [], 0
    for i in _positions(body, "#"):
        parts.append(body[start:i])
        start = i + 1
    return [*parts, body[start:]]


def _gift_numerical(body: str, fmt: str, notes: list[str]) -> list[Answer]:
    """``3.5:0.1``, ``3..4``, ``=3.5:0.1#right =%50%3:0.5#close ~#wrong``, as Moodle
    reads them: answers split on "=", and everything from the first "~" on is the
    catch-all answer '*' (0 %) with the feedback after its "#"."""
    cut = _find(body, "~")
    body, rest = (body, "") if cut < 0 else (body[:cut], body[cut + 1:])
    chunks = [(mark, chunk) for mark, chunk in _split("=" + body.strip().removeprefix("="),
                                                      "=") if chunk.strip()]
    if not chunks and cut < 0:
        raise Malformed("numerical question has no answer")
    answers = [_gift_number(chunk, fmt) for _, chunk in chunks]
    if cut >= 0:
        ignored, feedback = _feedback(rest)
        if ignored.strip():
            notes.append(f"'{ignored.strip()[:30]}' after '~' is ignored, as Moodle does: "
                         "'~' starts the catch-all answer")
        answers.append(Answer(Rich("*", "plain_text"), 0.0, _gift_rich(feedback, fmt)))
    return answers


def _gift_number(chunk: str, fmt: str) -> Answer:
    fraction, chunk = _weight(chunk, "=")
    number, feedback = _feedback(chunk)
    number = _unescape(number).strip()
    tolerance = ""
    if ".." in number:
        low, high = (_number(part, "numerical answer") for part in number.split("..", 1))
        number, tolerance = _g((low + high) / 2), _g(abs(high - low) / 2)
    elif ":" in number:
        number, tolerance = (part.strip() for part in number.split(":", 1))
    return Answer(Rich(number, "plain_text"), fraction, _gift_rich(feedback, fmt), tolerance)
