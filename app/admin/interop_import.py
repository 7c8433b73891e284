"""Import Moodle XML and GIFT as drafts: the counterpart of :mod:`app.admin.interop`.

Multiple-choice, true/false and numerical questions become *drafts* in English only (these
formats carry one language), in the topic and seniority the editor chooses, difficulty 2.
What our format needs and theirs lacks (spoken follow-ups, interview guidance, the other
languages) is left to write, so the checks keep refusing to publish until it is.

- True/false becomes a single choice between "True" and "False".
- A numerical question has no calculator: its value (with its unit when the calculators
  know it) and absolute tolerance are kept, bound to the placeholder calculator
  ``bind-a-calculator``, which the checks reject until an editor binds a real one. Partial
  and wrong answers cannot be named mistakes (they need a calculator) and are listed in the
  explanation instead.
- Partial credit on choices is not kept: a choice is correct or wrong.
- HTML is turned into text (tags dropped, entities decoded, images reduced to their
  description); Markdown keeps its text without HTML tags; plain text stays as written.
  Texts are rendered later as Markdown with raw HTML off.
- The XML parser refuses any DTD or entity declaration (no XXE, no entity expansion).
- Essay, matching, short answer, cloze and every other type are refused with their line,
  like malformed entries: nothing is dropped silently. Moodle category entries and GIFT
  ``$CATEGORY:`` lines only organise a course and are skipped.
"""

from __future__ import annotations

import math
import re
import unicodedata
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any
from xml.parsers import expat

from pydantic import ValidationError
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.admin import authoring
from app.bank.checks import field_path, to_write
from app.bank.schema import QuestionFile
from app.calculator.units import UnitError, parse, unit_dimension
from app.questions.models import Question

MAX_BYTES = 5 * 1024 * 1024
MAX_QUESTIONS = 2000
FORMATS = {"moodle": "Moodle XML", "gift": "GIFT"}
# A calculator that does not exist: the checks say so until an editor binds a real one.
UNBOUND_CALCULATOR = {"name": "bind-a-calculator", "output": "value"}
DIFFICULTY = 2
KEYS = "abcdefghijklmnopqrstuvwxyz"
FULL_MARKS = 99.99  # Moodle writes 100, sometimes 99.99999


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


@dataclass
class Answer:
    text: str
    fraction: float  # percent, as Moodle writes it
    feedback: str = ""
    tolerance: str = ""  # numerical answers, as written


@dataclass
class Entry:
    """One question read from either format, before it becomes a draft."""

    line: int
    type: str  # multichoice, truefalse or numerical
    name: str
    prompt: str
    feedback: str = ""
    answers: list[Answer] = field(default_factory=list)
    single: bool = True
    unit: str = ""  # numerical: the unit the answer is written in
    tags: list[str] = field(default_factory=list)
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
        slug = unique_slug(entry.name or " ".join(entry.prompt.split()[:8]), taken)
        source = f"Imported from {FORMATS[fmt]}: {filename[:100] or 'upload'}, line {entry.line}"
        try:
            question, notes = to_question(entry, topic, seniority, slug, source)
        except Malformed as exc:
            result.refused.append(Refusal(entry.line, str(exc)))
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


def to_question(entry: Entry, topic: str, seniority: str, slug: str, source: str
                ) -> tuple[QuestionFile, list[str]]:
    """A draft in our format; what does not fit is noted, what is wrong is Malformed."""
    notes = list(dict.fromkeys(entry.notes))
    if not entry.prompt.strip():
        raise Malformed(f"{_label(entry)} question has no text")
    texts: dict[str, Any] = {"title": _shorten(entry.name or entry.prompt, 160),
                             "prompt": entry.prompt}
    extra: list[str] = []  # what fits nowhere else goes after the explanation
    if entry.type == "numerical":
        shape = _numeric(entry, texts, extra, notes)
    else:
        shape = _choices(entry, texts, extra, notes)
    explanation = "\n\n".join(p for p in [entry.feedback.strip(), *extra] if p)
    texts |= {
        "explanation": explanation or to_write("why the answer is right"),
        "follow_ups": [to_write("a spoken follow-up question"),
                       to_write("another spoken follow-up question")],
        "guidance": {"why_asked": to_write(),
                     "structure": [to_write("first step"), to_write("second step")],
                     "model_answer": texts.pop("model_answer")},
    }
    data = {"id": slug, "topic": topic, "tags": entry.tags, "seniority": seniority,
            "difficulty": DIFFICULTY, **shape, "sources": [source[:300]],
            "translations": {"en": texts}}
    try:
        return QuestionFile.model_validate(data), notes
    except ValidationError as exc:
        error = exc.errors()[0]
        raise Malformed(f"{field_path(error['loc'])}: "
                        f"{error['msg'].removeprefix('Value error, ')}") from None


def _label(entry: Entry) -> str:
    return {"truefalse": "true/false"}.get(entry.type, entry.type)


def _choices(entry: Entry, texts: dict[str, Any], extra: list[str], notes: list[str]
             ) -> dict[str, Any]:
    answers, label = entry.answers, _label(entry)
    if len(answers) < 2:
        raise Malformed(f"{label} question needs at least two answers, not {len(answers)}")
    if len(answers) > len(KEYS):
        raise Malformed(f"{label} question has {len(answers)} answers; at most {len(KEYS)} "
                        "can be imported")
    for number, answer in enumerate(answers, 1):
        if not answer.text.strip():
            raise Malformed(f"{label} answer {number} has no text")
    if entry.single:
        full = [a for a in answers if a.fraction >= FULL_MARKS]
        if not full:
            raise Malformed(f"{label} question has no correct answer")
        if len(full) > 1:
            raise Malformed(f"single-answer {label} question has {len(full)} answers at 100%; "
                            "a single choice has exactly one correct answer")
        correct = [a is full[0] for a in answers]
        if any(0 < a.fraction < FULL_MARKS for a in answers):
            notes.append("partial credit is not kept: those answers are wrong choices here")
        kind = "single_choice"
    else:
        correct = [a.fraction > 0 for a in answers]
        if not any(correct):
            raise Malformed(f"{label} question has no correct answer")
        if len({round(a.fraction, 2) for a in answers if a.fraction > 0}) > 1:
            notes.append("unequal weights are not kept: every answer with a positive "
                         "fraction is a correct choice")
        kind = "multi_choice"
    keys = KEYS[:len(answers)]
    texts["choices"] = {k: a.text for k, a in zip(keys, answers, strict=True)}
    texts["choice_feedback"] = {k: a.feedback for k, a, right in zip(
        keys, answers, correct, strict=True) if not right and a.feedback.strip()}
    extra += [f"Feedback on the correct answer \"{a.text}\": {a.feedback}" for a, right in
              zip(answers, correct, strict=True) if right and a.feedback.strip()]
    texts["model_answer"] = "; ".join(a.text for a, right in zip(answers, correct, strict=True)
                                      if right)
    return {"kind": kind, "choices": [{"key": k, "correct": right}
                                      for k, right in zip(keys, correct, strict=True)]}


def _numeric(entry: Entry, texts: dict[str, Any], extra: list[str], notes: list[str]
             ) -> dict[str, Any]:
    answers = [a for a in entry.answers if a.text.strip() != "*"]
    if len(answers) < len(entry.answers):
        notes.append("the catch-all answer '*' is not kept")
    if not answers:
        raise Malformed("numerical question has no answer")
    read = [(a, _number(a.text, "numerical answer"),
             abs(_number(a.tolerance, "tolerance")) if a.tolerance.strip() else 0.0)
            for a in answers]
    right = next((r for r in read if r[0].fraction >= FULL_MARKS), None)
    if right is None:
        raise Malformed("numerical question has no correct answer (none at 100%)")
    answer, value, tolerance = right
    unit = entry.unit.strip()
    stated: float | int | str = _plain(value)
    scale = 1.0  # our absolute tolerance is in the calculator's base unit (bytes, seconds)
    if unit:
        try:
            scale = parse(f"1 {unit}", unit_dimension(unit))
            stated = f"{_g(value)} {unit}"
        except UnitError:
            notes.append(f"the unit '{unit[:20]}' is not one the calculators know: the value is "
                         "stored as a plain number")
    shown = f"{_g(value)} ± {_g(tolerance)}{' ' + unit if unit else ''}"
    extra.append(f"Imported without a calculator: the answer is {shown} (absolute "
                 "tolerance). Bind it to a calculator before publishing.")
    if answer.feedback.strip():
        extra.append(f"Feedback on the correct answer: {answer.feedback}")
    others = [r for r in read if r is not right]
    if others:
        extra.append("Other answers in the imported file:\n" + "\n".join(
            f"- {_g(v)} ± {_g(t)}{' ' + unit if unit else ''} ({_g(a.fraction)}%)"
            + (f": {' '.join(a.feedback.split())}" if a.feedback.strip() else "")
            for a, v, t in others))
        notes.append(f"{len(others)} other answer(s) are listed in the explanation: a named "
                     "mistake needs a calculator")
    texts["model_answer"] = shown
    return {"kind": "numeric", "answer": {
        "calculator": UNBOUND_CALCULATOR, "value": stated,
        "tolerance": {"type": "absolute", "value": float(_g(tolerance * scale))}}}


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


def _shorten(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit - 1].rstrip() + "…"


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


# ---------------------------------------------------------------------------- HTML to text

_SKIP = {"script", "style", "head", "title", "template", "noscript", "object", "iframe",
         "svg", "math", "video", "audio", "select", "textarea", "button"}
_BLOCK = {"p", "div", "ul", "ol", "table", "tr", "h1", "h2", "h3", "h4", "h5", "h6",
          "blockquote", "pre", "hr", "section", "article", "header", "footer", "figure",
          "figcaption", "dl", "dt", "dd", "form", "center", "address"}
_INLINE = {"html", "body", "br", "li", "span", "b", "i", "u", "em", "strong", "a", "img",
           "sub", "sup", "code", "font", "small", "big", "td", "th", "tbody", "thead",
           "tfoot", "caption", "s", "strike", "del", "ins", "mark", "abbr", "cite", "q",
           "kbd", "samp", "var", "label", "meta", "link", "embed", "source", "input",
           "option", "tt", "nobr", "wbr", "col", "colgroup", "picture", "base"}
_HTML = _SKIP | _BLOCK | _INLINE
_FORMATS = {"html", "markdown", "moodle_auto_format", "plain_text"}


class _TextOf(HTMLParser):
    """Text of an HTML fragment: tags dropped, entities decoded, blocks on their own lines.

    ``markdown``: whitespace is kept as written and what only looks like a tag
    (``x<y and z>w``) stays text.
    """

    def __init__(self, markdown: bool) -> None:
        super().__init__(convert_charrefs=True)
        self.markdown, self.out, self.skip, self.pre, self.images = markdown, [], 0, 0, 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in _HTML:
            if self.markdown and not self.skip:
                self.out.append(self.get_starttag_text() or "")
        elif tag in _SKIP:
            self.skip += 1
        elif self.skip:
            return
        elif tag == "br":
            self.out.append("\n")
        elif tag == "li":
            self.out.append("\n- ")
        elif tag == "img":
            self.images += 1
            alt = " ".join((dict(attrs).get("alt") or "").split())
            self.out.append(f"[image: {alt}]" if alt else "[image]")
        elif tag in _BLOCK:
            self.out.append("\n\n")
            if tag == "pre":
                self.pre += 1

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in _SKIP:  # <script/> opens nothing
            self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if tag not in _HTML:
            if self.markdown and not self.skip:
                self.out.append(f"</{tag}>")
        elif tag in _SKIP:
            self.skip = max(0, self.skip - 1)
        elif tag in _BLOCK and not self.skip:
            self.out.append("\n\n")
            if tag == "pre":
                self.pre = max(0, self.pre - 1)

    def handle_data(self, data: str) -> None:
        if self.skip:
            return
        if not self.markdown and not self.pre:
            data = re.sub(r"\s+", " ", data)
            if not self.out or self.out[-1].endswith("\n"):
                data = data.lstrip()
        self.out.append(data)

    def text(self) -> str:
        lines = [line.rstrip() for line in "".join(self.out).replace("\xa0", " ").split("\n")]
        return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def to_text(text: str, fmt: str) -> tuple[str, int]:
    """A Moodle text in ``fmt`` as our (Markdown) text, and how many images it had."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if fmt == "plain_text":
        return text.strip(), 0
    if fmt == "moodle_auto_format":  # Moodle: HTML allowed, and a newline is a line break
        text = text.replace("\n", "<br>")
    parser = _TextOf(markdown=fmt == "markdown")
    parser.feed(text)
    parser.close()
    return parser.text(), parser.images


def _converted(raw: str, fmt: str, notes: list[str]) -> str:
    text, images = to_text(raw, fmt if fmt in _FORMATS else "html")
    if images:
        notes.append("images are not imported (only their description is kept)")
    return text


# ---------------------------------------------------------------------------- Moodle XML

_DECLARATION = re.compile(rb"<!\s*(DOCTYPE|ENTITY)", re.IGNORECASE)
_DTD_REFUSED = ("a DOCTYPE or ENTITY declaration is not accepted (it could read files on "
                "the server or expand without end); export the questions again without it")
SUPPORTED = ("multichoice", "truefalse", "numerical")


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
    for node in root.findall("question"):
        line, kind = lines[node], node.get("type", "")
        if kind == "category":
            continue
        if kind not in SUPPORTED:
            refused.append(Refusal(line, f"unsupported question type '{kind[:40]}'"))
            continue
        try:
            entries.append(_moodle_entry(node, line, kind))
        except Malformed as exc:
            refused.append(Refusal(line, str(exc)))
    if not entries and not refused:
        raise FileProblem("the file has no questions")
    return entries, refused


def _moodle_text(node: ET.Element | None, notes: list[str],
                 default: str = "moodle_auto_format") -> str:
    if node is None:
        return ""
    if node.find("file") is not None:
        notes.append("embedded files are not imported")
    return _converted(node.findtext("text") or "", node.get("format", default), notes)


def _moodle_entry(node: ET.Element, line: int, kind: str) -> Entry:
    notes: list[str] = []
    entry = Entry(line, kind, " ".join((node.findtext("name/text") or "").split()),
                  _moodle_text(node.find("questiontext"), notes),
                  _moodle_text(node.find("generalfeedback"), notes), notes=notes,
                  tags=_tags([t.findtext("text") or "" for t in node.findall("tags/tag")]))
    for answer in node.findall("answer"):
        fraction = _number(answer.get("fraction", "0"), "answer fraction")
        text = answer.findtext("text") or ""
        if kind == "numerical":
            text = text.strip()
        elif kind == "truefalse":
            text = text.strip().capitalize()
        else:
            text = _converted(text, answer.get("format", "moodle_auto_format"), notes)
        entry.answers.append(Answer(text, fraction, _moodle_text(answer.find("feedback"),
                                                                 notes),
                                    answer.findtext("tolerance") or ""))
    if kind == "multichoice":
        entry.single = (node.findtext("single") or "true").strip().lower() not in ("false",
                                                                                   "0")
    for unit in node.findall("units/unit"):
        if _number(unit.findtext("multiplier") or "1", "unit multiplier") == 1:
            entry.unit = (unit.findtext("unit_name") or "").strip()
            break
    return entry


# ---------------------------------------------------------------------------- GIFT

_GIFT_FORMATS = {"html": "html", "moodle": "moodle_auto_format", "plain": "plain_text",
                 "markdown": "markdown"}
_GIFT_FORMAT = re.compile(r"\s*\[(html|moodle|plain|markdown)\]")
_TRUE_FALSE = re.compile(r"(?i)(T|F|TRUE|FALSE)\s*(#.*)?", re.DOTALL)
_WEIGHT = re.compile(r"\s*%([^%]*)%")


def read_gift(payload: bytes) -> tuple[list[Entry], list[Refusal]]:
    try:
        text = payload.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise FileProblem("the file is not UTF-8 text") from None
    entries: list[Entry] = []
    refused: list[Refusal] = []
    for line, block in gift_blocks(text):
        try:
            entries.append(_gift_entry(block, line))
        except Malformed as exc:
            refused.append(Refusal(line, str(exc)))
    if not entries and not refused:
        raise FileProblem("the file has no questions")
    return entries, refused


def gift_blocks(text: str) -> list[tuple[int, str]]:
    """Questions separated by blank lines, each with its first line; ``//`` comment lines
    and ``$CATEGORY:`` lines are left out."""
    blocks: list[tuple[int, str]] = []
    current: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), 1):
        stripped = raw.strip()
        if stripped.startswith("//"):
            continue
        if not stripped or stripped.startswith("$CATEGORY:"):
            if current:
                blocks.append((start, "\n".join(current)))
            current = []
            continue
        if not current:
            start = number
        current.append(raw)
    if current:
        blocks.append((start, "\n".join(current)))
    return blocks


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


def _gift_text(raw: str, notes: list[str], fmt: str = "moodle_auto_format") -> str:
    """A GIFT text: its own [format] if it has one, escapes undone; a newline in the file
    is a space (``\\n`` is a line break)."""
    found = _GIFT_FORMAT.match(raw)
    if found:
        fmt, raw = _GIFT_FORMATS[found.group(1)], raw[found.end():]
    return _converted(_unescape(" ".join(raw.split("\n")).strip()), fmt, notes)


def _feedback(chunk: str) -> tuple[str, str]:
    """``text#feedback`` -> (text, feedback), on the first unescaped ``#``."""
    cut = _find(chunk, "#")
    return (chunk, "") if cut < 0 else (chunk[:cut], chunk[cut + 1:])


def _weight(chunk: str, mark: str) -> tuple[float, str]:
    found = _WEIGHT.match(chunk)
    if not found:
        return (100.0 if mark == "=" else 0.0), chunk
    return _number(found.group(1), "answer weight"), chunk[found.end():]


def _gift_entry(block: str, line: int) -> Entry:
    text, name = block.strip(), ""
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
    notes: list[str] = []
    fmt = "moodle_auto_format"
    found = _GIFT_FORMAT.match(before)
    if found:  # the question's format applies to its answers and feedback too
        fmt = _GIFT_FORMATS[found.group(1)]
    prompt_raw = before.rstrip() + (" _____ " + after.strip() if after.strip() else "")
    general = _find(body, "####")
    general_feedback = ""
    if general >= 0:
        general_feedback = _gift_text(body[general + 4:], notes, fmt)
        body = body[:general]
    entry = Entry(line, "", name, _gift_text(prompt_raw, notes), general_feedback, notes=notes)
    body = body.strip()
    if not body:
        raise Malformed("unsupported question type 'essay'")
    if body.startswith("#"):
        entry.type = "numerical"
        entry.answers = _gift_numerical(body[1:].strip(), notes, fmt)
    elif _TRUE_FALSE.fullmatch(body):
        entry.type = "truefalse"
        truth, *feedback = [_gift_text(part, notes, fmt) for part in _hash_split(body)]
        wrong, right = [*feedback, "", ""][:2]
        is_true = truth.upper() in ("T", "TRUE")
        entry.answers = [Answer("True", 100.0 if is_true else 0.0, right if is_true else wrong),
                         Answer("False", 0.0 if is_true else 100.0, wrong if is_true else right)]
    elif _find(body, "->") >= 0:
        raise Malformed("unsupported question type 'matching'")
    elif _find(body, "~") >= 0:
        entry.type = "multichoice"
        chunks = _split(body, "=~")
        for mark, chunk in chunks:
            fraction, chunk = _weight(chunk, mark)
            answer, feedback = _feedback(chunk)
            entry.answers.append(Answer(_gift_text(answer, notes, fmt), fraction,
                                        _gift_text(feedback, notes, fmt)))
        # Moodle: one answer marked "=" makes a single-answer question; "~%50%" weights
        # without any "=" a multiple-answer one.
        entry.single = any(mark == "=" for mark, _ in chunks)
    elif body.startswith("="):
        raise Malformed("unsupported question type 'shortanswer'")
    else:
        raise Malformed(f"cannot tell the question type from the answer block "
                        f"'{{{' '.join(body.split())[:30]}}}'")
    return entry


def _hash_split(body: str) -> list[str]:
    parts, start = [], 0
    for i in _positions(body, "#"):
        parts.append(body[start:i])
        start = i + 1
    return [*parts, body[start:]]


def _gift_numerical(body: str, notes: list[str], fmt: str) -> list[Answer]:
    """``3.5:0.1``, ``3..4`` or ``=3.5:0.1#feedback =%50%3:0.5 ~2#wrong``."""
    if not body:
        raise Malformed("numerical question has no answer")
    chunks = _split(body, "=~") if body[0] in "=~" else [("=", body)]
    answers = []
    for mark, chunk in chunks:
        fraction, chunk = _weight(chunk, mark)
        number, feedback = _feedback(chunk)
        number = _unescape(number).strip()
        tolerance = ""
        if ".." in number:
            low, high = (_number(part, "numerical answer") for part in number.split("..", 1))
            number, tolerance = _g((low + high) / 2), _g(abs(high - low) / 2)
        elif ":" in number:
            number, tolerance = (part.strip() for part in number.split(":", 1))
        answers.append(Answer(number, fraction, _gift_text(feedback, notes, fmt), tolerance))
    return answers
