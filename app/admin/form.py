"""The structured authoring form: question data <-> form fields, as pure functions.

The form is another way to write the same YAML: :func:`form_to_text` turns the posted
fields into question data and dumps it, and the admin runs its usual pipeline on that
text (every bank check, drafts, publishing, locking, revisions). :func:`form_from_data`
goes the other way to pre-fill the form from a stored question; a round trip gives back
exactly the same question.

The form's *context* is the middle ground: every field as the text the browser shows and
posts, so a refused form is shown again exactly as it was typed. Field names:

- ``id``, ``kind``, ``topic``, ``seniority``, ``difficulty``, ``tags`` (comma-separated),
  ``follow_up`` (repeated, one id each), ``sources`` (one per line), ``extra`` (YAML of
  ``evidence`` and ``reviewed``, which the form does not break down);
- ``answer.calculator``, ``answer.output``, ``answer.factor``, ``answer.param.<name>``,
  ``answer.other_params`` (``key=value`` lines the calculator does not list),
  ``answer.value``, ``answer.unit``, ``answer.tolerance_type``, ``answer.tolerance_value``,
  ``variants`` (``param = v1, v2`` lines);
- rows ``mistake.<row>.{id,calculator,output,factor,params,text.<lang>}``,
  ``choice.<row>.{key,correct,value,calculator,output,factor,params,text.<lang>,
  feedback.<lang>}``, ``rubric.<row>.{id,text.<lang>}``, ``spoken.<row>.{ask,answer,
  points}.<lang>`` (a spoken follow-up; points one per line): a row holds its texts in
  every language, so adding or removing a row never leaves a text behind. ``params`` of a row
  are the parameters that differ from the answer's (same calculator), ``key=value`` per
  line, ``key=`` dropping one;
- ``t.<lang>.{title,prompt,explanation,why_asked,structure,model_answer}``
  (``structure`` one step per line).

A value typed in a parameter, a variant or a choice value is read like the CLI reads it
(JSON where it parses, else text: ``8`` is a number, ``800 MB`` a quantity, ``"8"`` the
text 8).
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Iterable, Mapping
from typing import Any

import yaml
from sqlalchemy.orm import Session

from app.admin.authoring import Checked, check_text
from app.bank.checks import Finding
from app.bank.schema import KINDS, LANGUAGES
from app.calculator.registry import REGISTRY, value_from_text

EDITOR_FIELD = "editor"
ROW_TYPES = ("mistake", "choice", "rubric", "spoken")
SPOKEN_FIELDS = ("ask", "answer", "points")
MAX_ROWS = 60
TOLERANCES = ("relative", "absolute", "geometric")
TEXT_FIELDS = ("title", "prompt", "explanation", "why_asked", "structure", "model_answer")
EXTRA_KEYS = ("evidence", "reviewed")
_ROW = re.compile(r"^(mistake|choice|rubric|spoken)\.([a-z0-9]{1,16})\.([a-z_]+(?:\.[a-z]{2})?)$")
CHOICE_KINDS = ("single_choice", "multi_choice")


class FormProblems(ValueError):
    """The form cannot be turned into question data; each problem names its field."""

    def __init__(self, problems: list[Finding]) -> None:
        self.problems = problems
        super().__init__("; ".join(f"{p.field}: {p.message}" for p in problems))


# ----------------------------------------------------------------------------- values


def render_scalar(value: Any) -> str:
    """A value as typed in the form; ``value_from_text`` reads it back unchanged."""
    if isinstance(value, str):
        plain = value_from_text(value)
        if isinstance(plain, str) and plain == value and "," not in value \
                and not value.startswith('"'):
            return value
    return json.dumps(value, ensure_ascii=False)


def split_items(text: str) -> list[str]:
    """Split on commas outside quotes and brackets: ``4, "a, b", [1, 2]`` is 3 items."""
    items, current, depth, quoted, escaped = [], [], 0, False, False
    for char in text:
        if quoted:
            current.append(char)
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                quoted = False
            continue
        if char == '"':
            quoted = True
        elif char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
        elif char == "," and depth <= 0:
            items.append("".join(current).strip())
            current = []
            continue
        current.append(char)
    items.append("".join(current).strip())
    return [item for item in items if item]


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _number_text(value: Any) -> str:
    return "" if value is None else json.dumps(value) if isinstance(value, (int, float)) \
        and not isinstance(value, bool) else str(value)


def _number(text: str) -> Any:
    """A typed number; text that is not one is kept, for the schema to name the field."""
    text = text.strip()
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def _text(value: Any) -> str:
    return value.replace("\r\n", "\n").replace("\r", "\n") if isinstance(value, str) else ""


def _lines(text: str) -> list[str]:
    return [line.strip() for line in _text(text).split("\n") if line.strip()]


def new_row_id() -> str:
    return secrets.token_hex(4)


# ----------------------------------------------------------------------------- data -> form


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _override_lines(params: dict[str, Any], base: dict[str, Any]) -> str:
    lines = [f"{k}={render_scalar(v)}" for k, v in params.items()
             if k not in base or not _same(base[k], v)]
    lines += [f"{k}=" for k in base if k not in params]
    return "\n".join(lines)


def _call_fields(call: Any, answer_call: dict[str, Any]) -> dict[str, str]:
    call = _dict(call)
    if not call:
        return {"calculator": "", "output": "", "factor": "", "params": ""}
    base = _dict(answer_call.get("params")) if call.get("name") == answer_call.get("name") \
        else {}
    factor = call.get("factor", 1.0)
    return {"calculator": str(call.get("name", "")), "output": str(call.get("output", "")),
            "factor": "" if _same(factor, 1.0) else _number_text(factor),
            "params": _override_lines(_dict(call.get("params")), base)}


def _texts(translations: dict[str, Any], group: str, key: str) -> dict[str, str]:
    return {lang: str(_dict(_dict(translations.get(lang)).get(group)).get(key, ""))
            for lang in LANGUAGES}


def form_from_data(data: Mapping[str, Any]) -> dict[str, Any]:
    """The form's context for question data (a stored question, or what was posted)."""
    translations = _dict(data.get("translations"))
    answer = _dict(data.get("answer"))
    call = _dict(answer.get("calculator"))
    known = REGISTRY.get(str(call.get("name", "")))
    names = {p.name for p in known.params} if known else set()
    params = _dict(call.get("params"))
    tolerance = _dict(answer.get("tolerance"))
    factor = call.get("factor", 1.0)
    extra = {k: data[k] for k in EXTRA_KEYS if data.get(k)}
    context: dict[str, Any] = {
        "id": str(data.get("id", "")), "kind": str(data.get("kind", "")),
        "topic": str(data.get("topic", "")), "seniority": str(data.get("seniority", "")),
        "difficulty": _number_text(data.get("difficulty")),
        "tags": ", ".join(str(t) for t in _list(data.get("tags"))),
        "follow_ups": [str(f) for f in _list(data.get("follow_ups"))],
        "sources": "\n".join(str(s) for s in _list(data.get("sources"))),
        "extra": yaml.safe_dump(extra, allow_unicode=True, sort_keys=False, width=100)
        if extra else "",
        "answer": {
            "calculator": str(call.get("name", "")), "output": str(call.get("output", "")),
            "factor": "" if _same(factor, 1.0) else _number_text(factor),
            "params": {k: render_scalar(v) for k, v in params.items() if k in names},
            "other_params": "\n".join(f"{k}={render_scalar(v)}" for k, v in params.items()
                                      if k not in names),
            "value": "" if "value" not in answer else render_scalar(answer["value"]),
            "unit": str(answer.get("unit") or ""),
            "tolerance_type": str(tolerance.get("type", "relative")),
            "tolerance_value": _number_text(tolerance.get("value")),
        },
        "variants": "\n".join(f"{k} = {', '.join(render_scalar(v) for v in _list(vs))}"
                              for k, vs in _dict(data.get("variants")).items()),
        "mistakes": [], "choices": [], "rubric": [], "spoken": [],
        "t": {},
    }
    for i, mistake in enumerate(_list(answer.get("mistakes"))):
        mistake = _dict(mistake)
        mid = str(mistake.get("id", ""))
        context["mistakes"].append({"row": f"m{i}", "id": mid,
                                    **_call_fields(mistake.get("calculator"), call),
                                    "text": _texts(translations, "mistakes", mid)})
    for i, choice in enumerate(_list(data.get("choices"))):
        choice = _dict(choice)
        key = str(choice.get("key", ""))
        context["choices"].append({
            "row": f"c{i}", "key": key, "correct": bool(choice.get("correct")),
            "value": "" if choice.get("value") is None else render_scalar(choice["value"]),
            **_call_fields(choice.get("calculator"), call),
            "text": _texts(translations, "choices", key),
            "feedback": _texts(translations, "choice_feedback", key)})
    for i, point in enumerate(_list(data.get("rubric"))):
        context["rubric"].append({"row": f"r{i}", "id": str(point),
                                  "text": _texts(translations, "rubric", str(point))})
    spoken = {lang: [_spoken(item) for item in _list(_dict(translations.get(lang)).get(
        "follow_ups"))] for lang in LANGUAGES}
    for i in range(max(len(items) for items in spoken.values())):
        context["spoken"].append({"row": f"s{i}", **{field: {
            lang: items[i][field] if i < len(items) else "" for lang, items in spoken.items()}
            for field in SPOKEN_FIELDS}})
    for lang in LANGUAGES:
        texts = _dict(translations.get(lang))
        guidance = _dict(texts.get("guidance"))
        context["t"][lang] = {
            "title": str(texts.get("title", "")), "prompt": str(texts.get("prompt", "")),
            "explanation": str(texts.get("explanation", "")),
            "why_asked": str(guidance.get("why_asked", "")),
            "structure": "\n".join(str(s) for s in _list(guidance.get("structure"))),
            "model_answer": str(guidance.get("model_answer", ""))}
    return context


def _spoken(item: Any) -> dict[str, str]:
    """A spoken follow-up as the form shows it (an old bare text is its question)."""
    item = {"ask": item} if isinstance(item, str) else _dict(item)
    return {"ask": str(item.get("ask") or ""), "answer": str(item.get("answer") or ""),
            "points": "\n".join(str(p) for p in _list(item.get("points")))}


def empty_row(kind: str) -> dict[str, Any]:
    """A new mistake, choice, rubric or spoken follow-up row (for the "Add" buttons)."""
    blank = {lang: "" for lang in LANGUAGES}
    if kind == "spoken":
        return {"row": new_row_id(), **{field: dict(blank) for field in SPOKEN_FIELDS}}
    row: dict[str, Any] = {"row": new_row_id(), "text": dict(blank)}
    if kind == "rubric":
        return {**row, "id": ""}
    call = {"calculator": "", "output": "", "factor": "", "params": ""}
    if kind == "mistake":
        return {**row, "id": "", **call}
    return {**row, "key": "", "correct": False, "value": "", **call, "feedback": dict(blank)}


# ----------------------------------------------------------------------------- form -> context


def _items(form: Any) -> list[tuple[str, str]]:
    pairs: Iterable[tuple[str, Any]] = form.multi_items() if hasattr(form, "multi_items") \
        else form.items() if isinstance(form, Mapping) else form
    return [(str(k), v) for k, v in pairs if isinstance(v, str)]


def context_from_form(form: Any) -> dict[str, Any]:
    """The posted fields as the form's context (everything kept as typed)."""
    items = _items(form)
    first: dict[str, str] = {}
    for name, value in items:
        first.setdefault(name, value)
    rows: dict[str, dict[str, dict[str, Any]]] = {kind: {} for kind in ROW_TYPES}
    for name, value in items:
        match = _ROW.match(name)
        if match is None:
            continue
        kind, row_id, field = match.groups()
        row = rows[kind].get(row_id)
        if row is None:
            if len(rows[kind]) >= MAX_ROWS:
                continue
            row = rows[kind][row_id] = {"row": row_id, "text": {}, "feedback": {},
                                        **{f: {} for f in SPOKEN_FIELDS}}
        if "." in field:
            group, lang = field.split(".")
            if lang in LANGUAGES:
                row[group].setdefault(lang, value)
        else:
            row.setdefault(field, value)
    prefix = "answer.param."
    context: dict[str, Any] = {
        name: first.get(name, "") for name in ("id", "kind", "topic", "seniority",
                                               "difficulty", "tags", "sources", "extra",
                                               "variants")}
    context["follow_ups"] = [v for k, v in items if k == "follow_up"][:MAX_ROWS]
    context["answer"] = {
        **{name: first.get(f"answer.{name}", "") for name in (
            "calculator", "output", "factor", "other_params", "value", "unit", "tolerance_type",
            "tolerance_value")},
        "params": {k.removeprefix(prefix): v for k, v in first.items() if k.startswith(prefix)},
    }
    blank = {lang: "" for lang in LANGUAGES}
    call = {"calculator": "", "output": "", "factor": "", "params": ""}
    context["mistakes"] = [{"id": "", **call, **row, "text": {**blank, **row["text"]}}
                           for row in rows["mistake"].values()]
    context["choices"] = [{"key": "", "value": "", **call, **row,
                           "correct": row.get("correct") == "yes",
                           "text": {**blank, **row["text"]},
                           "feedback": {**blank, **row["feedback"]}}
                          for row in rows["choice"].values()]
    context["rubric"] = [{"id": "", **row, "text": {**blank, **row["text"]}}
                         for row in rows["rubric"].values()]
    context["spoken"] = [{"row": row["row"], **{f: {**blank, **row[f]} for f in SPOKEN_FIELDS}}
                         for row in rows["spoken"].values()]
    context["t"] = {lang: {field: first.get(f"t.{lang}.{field}", "") for field in TEXT_FIELDS}
                    for lang in LANGUAGES}
    return context


def to_pairs(context: Mapping[str, Any]) -> list[tuple[str, str]]:
    """What a browser posts for this context (the template uses the same names)."""
    pairs = [(EDITOR_FIELD, "fields")]
    pairs += [(name, context[name]) for name in ("id", "kind", "topic", "seniority",
                                                 "difficulty", "tags", "sources", "extra")]
    pairs += [("follow_up", f) for f in context["follow_ups"]]
    answer = context["answer"]
    pairs += [(f"answer.{name}", answer[name]) for name in (
        "calculator", "output", "factor", "other_params", "value", "unit", "tolerance_type",
        "tolerance_value")]
    pairs += [(f"answer.param.{k}", v) for k, v in answer["params"].items()]
    pairs.append(("variants", context["variants"]))
    for kind, group, fields in (
            ("mistake", "mistakes", ("id", "calculator", "output", "factor", "params")),
            ("choice", "choices", ("key", "value", "calculator", "output", "factor", "params")),
            ("rubric", "rubric", ("id",))):
        for row in context[group]:
            name = f"{kind}.{row['row']}"
            pairs += [(f"{name}.{field}", row[field]) for field in fields]
            if row.get("correct"):
                pairs.append((f"{name}.correct", "yes"))
            pairs += [(f"{name}.text.{lang}", row["text"][lang]) for lang in LANGUAGES]
            if kind == "choice":
                pairs += [(f"{name}.feedback.{lang}", row["feedback"][lang])
                          for lang in LANGUAGES]
    for row in context["spoken"]:
        pairs += [(f"spoken.{row['row']}.{field}.{lang}", row[field][lang])
                  for field in SPOKEN_FIELDS for lang in LANGUAGES]
    for lang in LANGUAGES:
        pairs += [(f"t.{lang}.{field}", context["t"][lang][field]) for field in TEXT_FIELDS]
    return pairs


# ----------------------------------------------------------------------------- context -> data


class _Problems:
    def __init__(self, qid: str) -> None:
        self.qid = qid or "-"
        self.found: list[Finding] = []

    def add(self, field: str, message: str) -> None:
        self.found.append(Finding("(form)", self.qid, field, message))


def _key_values(text: str, where: str, problems: _Problems) -> list[tuple[str, str]]:
    found = []
    for number, line in enumerate(_text(text).split("\n"), 1):
        if not line.strip():
            continue
        key, sep, value = line.partition("=")
        if not sep or not key.strip():
            problems.add(where, f"line {number}: '{line.strip()[:60]}' is not key=value")
            continue
        found.append((key.strip(), value.strip()))
    return found


def _call(fields: Mapping[str, Any], base_call: dict[str, Any], where: str,
          problems: _Problems) -> dict[str, Any] | None:
    typed = {k: str(fields.get(k, "")).strip() for k in ("calculator", "output", "factor")}
    overrides = _key_values(fields.get("params", ""), f"{where}.params", problems)
    if not any(typed.values()) and not overrides:
        return None
    # Left empty, the calculator and the output are the answer's.
    name = typed["calculator"] or base_call.get("name", "")
    output = typed["output"] or base_call.get("output", "")
    params = dict(base_call.get("params", {})) if name == base_call.get("name") else {}
    for key, value in overrides:
        if value:
            params[key] = value_from_text(value)
        else:
            params.pop(key, None)
    call: dict[str, Any] = {"name": name, "output": output, "params": params}
    if typed["factor"]:
        call["factor"] = _number(typed["factor"])
    return call


def _translation(context: Mapping[str, Any], lang: str, kind: str) -> dict[str, Any] | None:
    texts = context["t"][lang]

    def text(value: Any) -> str | None:
        value = _text(value)
        return value if value.strip() else None

    out: dict[str, Any] = {k: text(texts[k]) for k in ("title", "prompt", "explanation")}
    groups: dict[str, dict[str, str]] = {"mistakes": {}, "choices": {}, "choice_feedback": {},
                                         "rubric": {}}
    if kind == "numeric":
        for row in context["mistakes"]:
            groups["mistakes"][row["id"].strip()] = text(row["text"][lang])
    if kind in CHOICE_KINDS:
        for row in context["choices"]:
            groups["choices"][row["key"].strip()] = text(row["text"][lang])
            groups["choice_feedback"][row["key"].strip()] = text(row["feedback"][lang])
    if kind == "open":
        for row in context["rubric"]:
            groups["rubric"][row["id"].strip()] = text(row["text"][lang])
    for group, values in groups.items():
        out[group] = {k: v for k, v in values.items() if k and v is not None}
    out["follow_ups"] = [{k: v for k, v in {
        "ask": text(row["ask"][lang]), "answer": text(row["answer"][lang]),
        "points": _lines(row["points"][lang])}.items() if v}
        for row in context["spoken"] if _text(row["ask"][lang]).strip()]
    out["guidance"] = {"why_asked": text(texts["why_asked"]),
                       "structure": _lines(texts["structure"]),
                       "model_answer": text(texts["model_answer"])}
    out["guidance"] = {k: v for k, v in out["guidance"].items() if v}
    cleaned = {k: v for k, v in out.items() if v}
    return cleaned or None


def data_from_context(context: Mapping[str, Any]) -> tuple[dict[str, Any], list[Finding]]:
    """Question data from the form's context, and what could not be read (per field)."""
    qid = context["id"].strip()
    problems = _Problems(qid)
    kind = context["kind"].strip()
    data: dict[str, Any] = {
        "id": qid, "topic": context["topic"].strip(),
        "tags": [t.strip() for t in context["tags"].split(",") if t.strip()],
        "seniority": context["seniority"].strip(),
        "difficulty": _number(context["difficulty"]) if context["difficulty"].strip()
        else None,
        "kind": kind}
    answer = context["answer"]
    call: dict[str, Any] = {}
    if answer["calculator"].strip() or answer["output"].strip():
        params = {k: value_from_text(v) for k, v in answer["params"].items() if v.strip()}
        for key, value in _key_values(answer["other_params"], "answer.calculator.params",
                                      problems):
            params[key] = value_from_text(value)
        call = {"name": answer["calculator"].strip(), "output": answer["output"].strip(),
                "params": params}
        if answer["factor"].strip():
            call["factor"] = _number(answer["factor"])
    tolerance: dict[str, Any] = {}
    if answer["tolerance_type"].strip() not in ("", "relative"):
        tolerance["type"] = answer["tolerance_type"].strip()
    if answer["tolerance_value"].strip():
        tolerance["value"] = _number(answer["tolerance_value"])
    if kind == "numeric":
        numeric: dict[str, Any] = {}
        if call:
            numeric["calculator"] = call
        if answer["value"].strip():
            numeric["value"] = value_from_text(answer["value"])
        if answer["unit"].strip():
            numeric["unit"] = answer["unit"].strip()
        if tolerance:
            numeric["tolerance"] = tolerance
        mistakes = []
        for i, row in enumerate(context["mistakes"]):
            where = f"answer.mistakes[{row['id'].strip() or i}]"
            mistake_call = _call(row, call, where, problems)
            if not row["id"].strip() and mistake_call is None:
                continue  # an empty row added and never filled
            mistakes.append({"id": row["id"].strip(), "calculator": mistake_call or {}})
        if mistakes:
            numeric["mistakes"] = mistakes
        if numeric:
            data["answer"] = numeric
    elif kind in CHOICE_KINDS:
        if call:
            data["answer"] = {"calculator": call, **({"tolerance": tolerance} if tolerance
                                                     else {})}
        choices = []
        for i, row in enumerate(context["choices"]):
            choice: dict[str, Any] = {"key": row["key"].strip()}
            if row["correct"]:
                choice["correct"] = True
            if row["value"].strip():
                choice["value"] = value_from_text(row["value"])
            choice_call = _call(row, call, f"choices[{choice['key'] or i}].calculator",
                                problems)
            if choice_call is not None:
                choice["calculator"] = choice_call
            if len(choice) == 1 and not choice["key"]:
                continue
            choices.append(choice)
        data["choices"] = choices
    elif kind == "open":
        data["rubric"] = [row["id"].strip() for row in context["rubric"] if row["id"].strip()]
    variants: dict[str, list[Any]] = {}
    for number, line in enumerate(_text(context["variants"]).split("\n"), 1):
        if not line.strip():
            continue
        key, sep, values = line.partition("=")
        if not sep or not key.strip():
            problems.add("variants", f"line {number}: '{line.strip()[:60]}' is not "
                         "param = value, value, ...")
            continue
        variants[key.strip()] = [value_from_text(v) for v in split_items(values)]
    if variants:
        data["variants"] = variants
    follow_ups = [f.strip() for f in context["follow_ups"] if f.strip()]
    if follow_ups:
        data["follow_ups"] = follow_ups
    data["sources"] = _lines(context["sources"])
    if context["extra"].strip():
        try:
            extra = yaml.safe_load(_text(context["extra"]))
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f"line {mark.line + 1}: " if mark else ""
            problems.add("extra", where + (getattr(exc, "problem", None)
                                           or "is not valid YAML"))
            extra = None
        if extra is not None and (not isinstance(extra, dict)
                                  or set(extra) - set(EXTRA_KEYS)):
            problems.add("extra", "holds only evidence: and reviewed:")
        elif extra:
            data.update(extra)
    translations = {}
    for lang in LANGUAGES:
        texts = _translation(context, lang, kind if kind in KINDS else "")
        if texts:
            translations[lang] = texts
    data["translations"] = translations
    return {k: v for k, v in data.items() if v is not None}, problems.found


def data_from_form(form: Any) -> dict[str, Any]:
    """Question data from the posted fields; :class:`FormProblems` when some cannot be read."""
    data, problems = data_from_context(context_from_form(form))
    if problems:
        raise FormProblems(problems)
    return data


def dump(data: Mapping[str, Any]) -> str:
    return yaml.safe_dump(dict(data), allow_unicode=True, sort_keys=False, width=100)


def form_to_text(form: Any) -> str:
    """The posted fields as the bank's YAML (raises :class:`FormProblems`)."""
    return dump(data_from_form(form))


def check_form(session: Session, form: Any) -> tuple[str, dict[str, Any], Checked]:
    """The YAML the form stands for, the context to show it again, and every check.

    Fields that cannot be read are problems like the bank's; they leave no question, so
    nothing is saved, not even a draft, until they are fixed.
    """
    context = context_from_form(form)
    data, problems = data_from_context(context)
    text = dump(data)
    checked = check_text(session, text)
    if problems:
        checked = Checked(None, problems + checked.problems)
    return text, context, checked


def page_context(fields: Mapping[str, Any], question_ids: Iterable[str]) -> dict[str, Any]:
    """What the template needs besides the fields: the lists the selects offer."""
    from app.bank.schema import SENIORITIES, TOPICS

    calculators = sorted(REGISTRY.values(), key=lambda c: c.name)
    return {"fields": fields, "calculators": calculators,
            "calc": REGISTRY.get(fields["answer"]["calculator"].strip()),
            "question_ids": sorted(question_ids), "languages": LANGUAGES, "topics": TOPICS,
            "seniorities": SENIORITIES, "kinds": KINDS, "tolerances": TOLERANCES}


def new_question() -> dict[str, Any]:
    """The form for a new question: numeric by default, nothing chosen or written yet."""
    data = {"id": "", "topic": "collectives", "seniority": "mid", "difficulty": 2,
            "kind": "numeric"}
    return form_from_data(data)
