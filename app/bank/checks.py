"""``ringside bank check``: everything that makes a question wrong, as precise findings.

Each finding reads ``file: question id: field path: message``. A bank with findings is
never loaded.
"""

from __future__ import annotations

import json
import math
import random
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import yaml
from pydantic import ValidationError

from app.bank.calls import (
    CallError,
    evaluate_call,
    output_unit,
    parse_value,
    shown_params,
    variant_combinations,
    within,
)
from app.bank.schema import (
    LANGUAGES,
    PLACEHOLDER,
    CalculatorCall,
    ChoiceAnswer,
    NumericAnswer,
    QuestionFile,
    Translation,
)
from app.bank.texts import EXPRESSION, fill, problems, text_values
from app.calculator import get as get_calculator
from app.calculator.reading import (
    ReadingError,
    dimension_of_unit,
    read_quantity,
    unit_spellings,
)
from app.calculator.units import DIMENSIONS, UnitError, format_quantity
from app.i18n.terms import variant_uses

MAX_FILE_BYTES = 512 * 1024
# libyaml's safe loader when PyYAML was built with it: the same documents, 5 times faster.
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class Finding:
    file: str
    question: str
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}: {self.question}: {self.field}: {self.message}"


@dataclass(frozen=True)
class BankFile:
    path: Path
    question: QuestionFile


@dataclass
class CheckResult:
    files: list[BankFile]
    findings: list[Finding]

    @property
    def ok(self) -> bool:
        return not self.findings


def question_paths(root: Path) -> list[Path]:
    return sorted((root / "questions").rglob("*.yaml"))


def read_question(path: Path, root: Path) -> tuple[QuestionFile | None, list[Finding]]:
    """Parse one file; schema problems become findings, never exceptions."""
    name = _display(path, root)
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return None, [Finding(name, path.stem, "(file)",
                                  f"is larger than {MAX_FILE_BYTES} bytes")]
        raw = path.read_bytes()
    except OSError as exc:
        return None, [Finding(name, path.stem, "(file)", f"cannot be read: {exc.strerror}")]
    return read_question_text(raw, path, name)


def read_question_text(raw: bytes, path: Path | PurePosixPath, name: str
                       ) -> tuple[QuestionFile | None, list[Finding]]:
    """Parse the bytes of a question file named ``name`` (from disk or an archive); its
    id and folder must match the file name and topic."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None, [Finding(name, path.stem, "(file)", "is not UTF-8 text")]
    question, findings = parse_question(text, name, path.stem)
    if question is None:
        return None, findings
    qid = question.id
    if path.stem != question.id:
        findings.append(Finding(name, qid, "id", f"does not match the file name '{path.stem}'"))
    if path.parent.name != question.topic:
        findings.append(Finding(name, qid, "topic", f"is '{question.topic}' but the file is in "
                                f"'{path.parent.name}/'"))
    return question, findings


def parse_question(text: str, name: str, guess: str = "-"
                   ) -> tuple[QuestionFile | None, list[Finding]]:
    """YAML text to a question model; syntax and schema problems become findings."""
    try:
        data = yaml.load(text, Loader=SAFE_LOADER)  # noqa: S506 - a safe loader
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        return None, [Finding(name, guess, "(yaml)", f"{where}{problem}")]
    if not isinstance(data, dict):
        return None, [Finding(name, guess, "(file)", "must be a mapping of question fields")]
    qid = str(data.get("id", guess))[:80]
    try:
        question = QuestionFile.model_validate(data)
    except ValidationError as exc:
        return None, [Finding(name, qid, field_path(error["loc"]), error["msg"].removeprefix(
            "Value error, ")) for error in exc.errors()]
    return question, []


def check_bank(root: Path) -> CheckResult:
    """Read and check every question under ``root/questions``."""
    files: list[BankFile] = []
    findings: list[Finding] = []
    paths = question_paths(root)
    if not paths:
        findings.append(Finding(str(root), "-", "(bank)", "has no questions/<topic>/*.yaml files"))
    for path in paths:
        question, problems = read_question(path, root)
        findings += problems
        if question is not None:
            files.append(BankFile(path, question))
    counts = Counter(f.question.id for f in files)
    for bank_file in files:
        if counts[bank_file.question.id] > 1:
            findings.append(Finding(_display(bank_file.path, root), bank_file.question.id, "id",
                                    "is used by more than one file"))
    ids = set(counts)
    experiments: dict[str, Any] = {}
    for bank_file in files:
        findings += check_question(bank_file.question, _display(bank_file.path, root), ids,
                                   root, experiments)
    findings += check_experiment_texts(root)
    return CheckResult(files, findings)


def check_experiment_texts(root: Path) -> list[Finding]:
    """Every recorded experiment is described in every language in experiments.yaml."""
    recorded = sorted(p.stem for p in (root / "experiments").glob("*.json"))
    if not recorded:
        return []
    path = root / "experiments" / "experiments.yaml"
    name = _display(path, root)
    try:
        catalog = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except FileNotFoundError:
        return [Finding(name, "-", "(file)", "is missing: every recorded experiment needs a "
                        "title, what it asks and what it found, in every language")]
    except yaml.YAMLError as exc:
        return [Finding(name, "-", "(yaml)", str(exc).splitlines()[0])]
    if not isinstance(catalog, dict):
        return [Finding(name, "-", "(file)", "must map experiment names to their texts")]
    findings = [Finding(name, extra, "(entry)", "describes no recorded experiment")
                for extra in sorted(set(catalog) - set(recorded))]
    for experiment in recorded:
        entry = catalog.get(experiment)
        for field in ("title", "asks", "finding"):
            texts = entry.get(field) if isinstance(entry, dict) else None
            for lang in LANGUAGES:
                value = texts.get(lang) if isinstance(texts, dict) else None
                if not isinstance(value, str) or not value.strip():
                    findings.append(Finding(name, experiment, f"{field}.{lang}",
                                            "text is missing"))
    return findings


def check_question(question: QuestionFile, file: str, ids: set[str], root: Path,
                   experiments: dict[str, Any] | None = None) -> list[Finding]:
    """Every check that needs more than the schema: texts, references, calculator, evidence."""
    report: list[Finding] = []

    def add(field: str, message: str) -> None:
        report.append(Finding(file, question.id, field, message))

    _check_translations(question, add)
    for i, follow_up in enumerate(question.follow_ups):
        if follow_up not in ids:
            add(f"follow_ups[{i}]", f"'{follow_up}' is not a question in the bank")
    _check_calculator(question, add)
    _check_texts_follow_draws(question, add)
    _check_evidence(question, root, experiments if experiments is not None else {}, add)
    return report


def _check_translations(question: QuestionFile, add: Any) -> None:
    expected = {
        "mistakes": {m.id for m in question.answer.mistakes}
        if isinstance(question.answer, NumericAnswer) else set(),
        "choices": {c.key for c in question.choices},
        "choice_feedback": {c.key for c in question.choices if not c.correct},
        "rubric": set(question.rubric),
    }
    call_params = set(question.answer.calculator.params) if question.answer else set()
    for lang in LANGUAGES:
        if lang not in question.translations:
            add(f"translations.{lang}", "is missing (en, fr, tr and zh are required)")
    for lang, translation in question.translations.items():
        if lang not in LANGUAGES:
            add(f"translations.{lang}", f"is not a supported language ({', '.join(LANGUAGES)})")
            continue
        for field, keys in expected.items():
            given = set(getattr(translation, field))
            for key in sorted(keys - given):
                add(f"translations.{lang}.{field}.{key}", "text is missing")
            for key in sorted(given - keys):
                add(f"translations.{lang}.{field}.{key}", "has no matching "
                    + {"mistakes": "mistake", "choices": "choice", "choice_feedback":
                       "wrong choice", "rubric": "rubric key point"}[field])
        _check_spoken_follow_ups(question, lang, translation, add)
        used = set(PLACEHOLDER.findall(translation.prompt))
        for key in sorted(set(question.variants) - used):
            add(f"translations.{lang}.prompt", f"does not show the variant parameter "
                f"{{{key}}}, so new numbers would not reach the candidate")
        for key in sorted(used & set(question.variants) - call_params):
            add(f"translations.{lang}.prompt", f"placeholder {{{key}}} is not a parameter of "
                "the answer's calculator")
        for field, text in _texts(translation.model_dump()):
            if _is_unwritten(text):
                add(f"translations.{lang}.{field}", f"is still a placeholder ({text.strip()!r})")
            for use in variant_uses(text, lang):
                add(f"translations.{lang}.{field}", f"{use} in the glossary "
                    f"(app/i18n/glossary/{lang}.yaml)")


def _check_spoken_follow_ups(question: QuestionFile, lang: str, translation: Translation,
                             add: Any) -> None:
    """Each spoken follow-up has a model answer and 2 to 4 key points, the same shape in
    every language as in English (the report and the interviewer show them side by side)."""
    english = question.translations.get("en")
    if english is not None and lang != "en" \
            and len(translation.follow_ups) != len(english.follow_ups):
        add(f"translations.{lang}.follow_ups", f"has {len(translation.follow_ups)} "
            f"follow-ups; English has {len(english.follow_ups)}")
    for i, follow_up in enumerate(translation.follow_ups):
        field = f"translations.{lang}.follow_ups[{i}]"
        if follow_up.answer is None:
            add(field, "has no model answer (answer:)")
        if not 2 <= len(follow_up.points) <= 4:
            add(field, f"has {len(follow_up.points)} key points; a follow-up needs 2 to 4 "
                "(points:)")
        elif english is not None and lang != "en" and i < len(english.follow_ups) \
                and len(english.follow_ups[i].points) != len(follow_up.points):
            add(f"{field}.points", f"has {len(follow_up.points)} key points; English has "
                f"{len(english.follow_ups[i].points)}")


def _texts(data: Any, path: str = "") -> list[tuple[str, str]]:
    """Every text of a translation with its field path (``guidance.structure[1]``)."""
    if isinstance(data, str):
        return [(path, data)]
    if isinstance(data, dict):
        return [item for key, value in data.items()
                for item in _texts(value, f"{path}.{key}" if path else key)]
    if isinstance(data, list):
        return [item for i, value in enumerate(data) for item in _texts(value, f"{path}[{i}]")]
    return []


# How an import marks a text it could not fill (see app/admin/interop_import.py).
TO_WRITE = "(to write"


def to_write(what: str = "") -> str:
    return f"{TO_WRITE}: {what})" if what else f"{TO_WRITE})"


def _is_unwritten(text: str) -> bool:
    """The new-question template's ``...`` and an import's ``(to write: ...)`` notes."""
    stripped = text.strip()
    return stripped in ("...", "…") or stripped.startswith(TO_WRITE)


def _check_calculator(question: QuestionFile, add: Any) -> None:
    for field, call in question.calls():
        try:
            evaluate_call(call)
        except CallError as exc:
            add(field, str(exc))
            return
    answer = question.answer
    if answer is None:
        return
    for key in question.variants:
        if key not in answer.calculator.params:
            add(f"variants.{key}", f"is not a parameter of the answer's calculator "
                f"({answer.calculator.name})")
            return
    if isinstance(answer, NumericAnswer):
        _check_numeric(question, answer, add)
    else:
        _check_choices(question, answer, add)


def _check_numeric(question: QuestionFile, answer: NumericAnswer, add: Any) -> None:
    unit = output_unit(answer.calculator)
    _check_answer_unit(question, answer, unit, add)
    try:
        stated = parse_value(answer.value, unit)
    except ValueError as exc:
        add("answer.value", f"{exc} (the calculator output is in {unit or 'plain numbers'})")
        return
    computed = evaluate_call(answer.calculator)
    if not within(stated, computed, answer.tolerance):
        add("answer.value", f"states {answer.value} but the calculator gives "
            f"{_show(computed, unit)} ({answer.tolerance.type} tolerance "
            f"{answer.tolerance.value})")
    for label, draw, expected in _answers_per_variant(question, answer.calculator, add):
        for mistake in answer.mistakes:
            field = f"answer.mistakes[{mistake.id}]"
            try:
                wrong = evaluate_call(mistake.calculator, draw)
            except CallError as exc:
                add(field, f"{label}{exc}")
                continue
            if output_unit(mistake.calculator) != unit:
                add(field, f"gives {output_unit(mistake.calculator) or 'a plain number'}, the "
                    f"answer is in {unit or 'plain numbers'}")
            elif within(wrong, expected, answer.tolerance):
                add(field, f"{label}the calculator says this mistake is right: it gives "
                    f"{_show(wrong, unit)}, the answer is {_show(expected, unit)}")


# Texts whose numbers must follow the draw; how many draws are compared with the default.
FOLLOWING_FIELDS = ("explanation", "guidance.model_answer", "mistakes", "choice_feedback")
DRAWS_COMPARED = 6
# "8 ranks", "8 块 GPU": a count of things that a world-size-like parameter sets.
_COUNTED = (r"\s*(?:块|个|台|路)?\s*(?:GPUs?|ranks?|rangs?|nodes?|nœuds?|düğüm\w*|stages?|"
            r"étages?|aşama\w*|layers?|couches?|katman\w*|micro-?batch\w*|microlots?|"
            r"workers?|replicas?|réplicas?|replika\w*|节点|层|阶段|副本)")


def _check_texts_follow_draws(question: QuestionFile, add: Any) -> None:
    """Placeholders can be filled; with variants, the texts follow the drawn numbers."""
    default = text_values(question, shown_params(question, {}), {})
    for lang, translation in question.translations.items():
        for field, text in _texts(translation.model_dump()):
            for problem in problems(text, default, lang):
                add(f"translations.{lang}.{field}", problem)
            prose = _CODE_OR_MATH.sub(" ", fill(text, default, lang) if "{" in text else text)
            for machine in _MACHINE_NUMBER.findall(prose):
                add(f"translations.{lang}.{field}", f"writes {machine} for a reader: write "
                    f"it for people (13 billion, 13 milliards, 130亿, 13 × 10⁹)")
    if not question.variants or question.answer is None:
        return
    draws = list(variant_combinations(question))[:DRAWS_COMPARED * 4]
    try:  # a call that cannot run is _check_calculator's finding, not this one's
        for draw in [{}, *draws]:
            evaluate_call(question.answer.calculator, draw)
    except (CallError, KeyError):
        return
    draws = random.Random(question.id).sample(draws, min(DRAWS_COMPARED, len(draws)))  # noqa: S311
    _check_hard_coded(question, default, draws, add)
    drawn = [(draw, text_values(question, shown_params(question, draw), draw)) for draw in draws]
    for lang, translation in question.translations.items():
        seen = {fill(translation.explanation, default, lang):
                default.numbers.get("answer", math.nan)}
        for draw, values in drawn:
            answer = values.numbers.get("answer")
            text = fill(translation.explanation, values, lang)
            if text in seen and answer is not None and not math.isclose(
                    seen[text], answer, rel_tol=1e-9):
                add(f"translations.{lang}.explanation", f"{_variant_label(draw)}is the same "
                    f"as for another draw whose answer differs: write the numbers that "
                    f"depend on the draw as {{param}} or {{=expression}} placeholders")
                break
            seen[text] = answer if answer is not None else math.nan


_CODE_OR_MATH = re.compile(r"`[^`]*`|\$\$.*?\$\$|\$[^$]*\$", re.S)
_MACHINE_NUMBER = re.compile(r"(?<![\w.,])\d+(?:[.,]\d+)?e[+-]?\d+(?!\w)")


def _check_hard_coded(question: QuestionFile, default: Any, draws: list[dict[str, Any]],
                      add: Any) -> None:
    """A number that a draw changes, written out instead of being a placeholder."""
    answer = question.answer
    assert answer is not None
    unit = output_unit(answer.calculator)
    dimension = DIMENSIONS.get(unit) if unit else None
    changed = {key for draw in draws for key, value in draw.items()
               if value != answer.calculator.params.get(key)}
    quantities: list[tuple[str, float, Any]] = []  # (what, value, dimension)
    expected = default.numbers.get("answer")
    if isinstance(expected, float) and dimension is not None and any(
            not math.isclose(evaluate_call(answer.calculator, d), expected, rel_tol=1e-6)
            for d in draws):
        quantities.append(("the default answer", expected, dimension))
    counts: list[tuple[str, int]] = []
    calculator = get_calculator(answer.calculator.name)
    for key in sorted(changed):
        raw = answer.calculator.params.get(key)
        param_unit = calculator.param(key).unit if key in {p.name for p in
                                                            calculator.params} else None
        param_dimension = DIMENSIONS.get(param_unit) if param_unit else None
        if isinstance(raw, str) and param_dimension is not None:
            quantities.append((f"{{{key}}}", parse_value(raw, param_unit), param_dimension))
        elif isinstance(raw, int) and not isinstance(raw, bool) and raw > 2:
            counts.append((key, raw))
    for lang, translation in question.translations.items():
        for field, text in _texts(translation.model_dump()):
            if not field.startswith(FOLLOWING_FIELDS):
                continue
            prose = EXPRESSION.sub(" ", PLACEHOLDER.sub(" ", text))
            for token in _QUANTITY.finditer(prose):
                for what, value, quantity_dimension in quantities:
                    try:
                        read = read_quantity(token.group(0), quantity_dimension, lang)
                    except ReadingError:
                        continue
                    if math.isclose(read.value, value, rel_tol=0.02):
                        add(f"translations.{lang}.{field}", f"writes '{token.group(0)}' "
                            f"({what}), which the draws change: use a placeholder")
            for key, count in counts:
                # Not a count inside a name: "fp16 副本" is not 16 replicas.
                if re.search(rf"(?<![\w.,]){count}{_COUNTED}(?!\w)", prose, re.IGNORECASE):
                    add(f"translations.{lang}.{field}", f"writes {count} ({{{key}}} of the "
                        f"default draw), which the draws change: use {{{key}}}")


_QUANTITY = re.compile(r"(?<![\w.,])\d[\d.,\u00a0\u202f ]*\d?\s?(?:[kMGTP]i?[Bo]|[kMGTP]?bit|"
                       r"[kMGTP]?B|octets|bytes|ms|µs|us|s|min|h)(?![\w/])")


def _check_answer_unit(question: QuestionFile, answer: NumericAnswer, unit: str | None,
                       add: Any) -> None:
    """``answer.unit`` fits the output, and every prompt says it (a bare number is read in it)."""
    dimension = DIMENSIONS.get(unit) if unit else None
    if answer.unit is None:
        if dimension is not None:
            add("answer.unit", f"is missing: the answer is in {dimension.name}, so say which "
                f"unit the prompt asks for (for example {dimension.examples.split(',')[0]})")
        return
    if answer.unit == "%":
        if dimension is not None:
            add("answer.unit", f"is %, but the answer is in {dimension.name}")
        return
    try:
        asked = dimension_of_unit(answer.unit)
    except UnitError:
        add("answer.unit", f"'{answer.unit}' is not a unit")
        return
    if dimension is None or asked != dimension:
        add("answer.unit", f"'{answer.unit}' is in {asked.name}, but the answer is "
            f"{dimension.name if dimension else 'a plain number'}")
        return
    for lang, translation in question.translations.items():
        if not mentions_unit(translation.prompt, answer.unit, lang):
            add(f"translations.{lang}.prompt", f"does not say the answer's unit "
                f"({' or '.join(sorted(unit_spellings(answer.unit)))}); a bare number is "
                f"read in {answer.unit}")


def mentions_unit(text: str, unit: str, lang: str) -> bool:
    """Whether ``text`` names ``unit`` in one of its spellings (not as part of a rate).

    Words are matched whatever their case ("Dakika"); a one-character Chinese unit only
    in the phrases that ask for it (以年为单位, 秒（s）).
    """
    prose = re.sub(r"\{[a-z_][a-z0-9_]*\}", " ", text)
    for spelling in unit_spellings(unit):
        if not spelling.isascii():
            if len(spelling) > 1 and spelling in prose:
                return True
            if len(spelling) == 1 and re.search(
                    rf"以{spelling}|{spelling}为单位|{spelling}（", prose):
                return True
            continue
        flags = re.IGNORECASE if len(spelling) > 3 else 0
        if re.search(rf"(?<![\w/]){re.escape(spelling)}(?![\w/])", prose, flags):
            return True
    return False


def _answers_per_variant(question: QuestionFile, call: CalculatorCall, add: Any
                         ) -> Iterator[tuple[str, dict[str, Any], float]]:
    """The answer with the stated numbers, then with every variant's; failures are findings."""
    for draw in [{}, *variant_combinations(question)]:
        label = _variant_label(draw)
        try:
            yield label, draw, evaluate_call(call, draw)
        except CallError as exc:
            add("variants", f"{label}the answer cannot be computed: {exc}")


def _check_choices(question: QuestionFile, answer: ChoiceAnswer, add: Any) -> None:
    unit = output_unit(answer.calculator)
    for label, draw, expected in _answers_per_variant(question, answer.calculator, add):
        for choice in question.choices:
            field = f"choices[{choice.key}]"
            if choice.calculator is not None:
                value = evaluate_call(choice.calculator, draw)
            elif choice.value is not None and not draw:
                try:
                    value = parse_value(choice.value, unit)
                except ValueError as exc:
                    add(f"{field}.value", str(exc))
                    continue
            else:
                continue
            right = within(value, expected, answer.tolerance)
            if choice.correct and not right:
                add(field, f"{label}is marked correct but the calculator gives "
                    f"{_show(expected, unit)}, not {_show(value, unit)}")
            elif not choice.correct and right:
                add(field, f"{label}is marked wrong but the calculator says it is right "
                    f"({_show(value, unit)})")
        if not draw:
            _check_stated_choice_values(question, answer, unit, add)


def _check_stated_choice_values(question: QuestionFile, answer: ChoiceAnswer,
                                unit: str | None, add: Any) -> None:
    """A choice with both a value and a calculator: the value must be what it computes."""
    for choice in question.choices:
        if choice.value is None or choice.calculator is None:
            continue
        try:
            stated = parse_value(choice.value, unit)
        except ValueError as exc:
            add(f"choices[{choice.key}].value", str(exc))
            continue
        computed = evaluate_call(choice.calculator)
        if not within(stated, computed, answer.tolerance):
            add(f"choices[{choice.key}].value", f"states {choice.value} but its calculator "
                f"gives {_show(computed, unit)}")


def _check_evidence(question: QuestionFile, root: Path, cache: dict[str, Any],
                    add: Any) -> None:
    for i, evidence in enumerate(question.evidence):
        field = f"evidence[{i}]"
        if evidence.experiment not in cache:
            path = root / "experiments" / f"{evidence.experiment}.json"
            try:
                cache[evidence.experiment] = json.loads(path.read_text(encoding="utf-8"))
            except FileNotFoundError:
                cache[evidence.experiment] = None
            except ValueError:
                cache[evidence.experiment] = ValueError
        recorded = cache[evidence.experiment]
        if recorded is None:
            add(f"{field}.experiment", f"no recorded experiment "
                f"experiments/{evidence.experiment}.json")
            continue
        if recorded is ValueError:
            add(f"{field}.experiment", f"experiments/{evidence.experiment}.json is not JSON")
            continue
        try:
            value = resolve_path(recorded, evidence.path)
        except KeyError as exc:
            add(f"{field}.path", f"not in the recording: {exc.args[0]}")
            continue
        if not same_value(value, evidence.value):
            add(f"{field}.value", f"states {json.dumps(evidence.value)} but the experiment "
                f"recorded {json.dumps(value)}")


def resolve_path(data: Any, path: str) -> Any:
    """``outputs.rank0.grad[1]`` style paths into recorded JSON."""
    current = data
    for part in path.replace("[", ".[").split("."):
        if not part:
            continue
        if part.startswith("["):
            index = part.strip("[]")
            if not isinstance(current, list) or not index.lstrip("-").isdigit() \
                    or not -len(current) <= int(index) < len(current):
                raise KeyError(f"no item {part} at '{path}'")
            current = current[int(index)]
        elif isinstance(current, dict) and part in current:
            current = current[part]
        else:
            raise KeyError(f"no key '{part}' at '{path}'")
    return current


def same_value(recorded: Any, stated: Any) -> bool:
    """Equal, with floats compared to 1e-9 relative (JSON round trips are not exact)."""
    if isinstance(recorded, bool) or isinstance(stated, bool):
        return recorded is stated
    if isinstance(recorded, (int, float)) and isinstance(stated, (int, float)):
        return math.isclose(recorded, stated, rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(recorded, list) and isinstance(stated, list):
        return len(recorded) == len(stated) and all(
            same_value(a, b) for a, b in zip(recorded, stated, strict=True))
    if isinstance(recorded, dict) and isinstance(stated, dict):
        return recorded.keys() == stated.keys() and all(
            same_value(recorded[k], stated[k]) for k in recorded)
    return recorded == stated


def _variant_label(draw: dict[str, Any]) -> str:
    if not draw:
        return ""
    return "with " + ", ".join(f"{k}={v}" for k, v in draw.items()) + ": "


def _show(value: float, unit: str | None) -> str:
    return format_quantity(value, unit)


def field_path(loc: tuple[Any, ...]) -> str:
    """A pydantic error location as a field path: answer.value, choices[2].key."""
    parts: list[str] = []
    for item in loc:
        if isinstance(item, int):
            parts.append(f"[{item}]")
        elif item in ("NumericAnswer", "ChoiceAnswer") or str(item).startswith(("function-",
                                                                                 "literal[")):
            continue
        else:
            parts.append(("." if parts else "") + str(item))
    return "".join(parts) or "(question)"


def _display(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root.parent))
    except ValueError:
        return str(path)
