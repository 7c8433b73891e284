"""Numbers in a question's texts that follow the drawn variant, in the reader's language.

Two kinds of placeholder, in every text of a question (prompt, explanation, model
answer, feedback...):

* ``{param}``: a parameter of the answer's calculator as the prompt shows it: ``800 MB``
  as written, a number for people (``1 024`` in French, ``13 billion``, ``130 亿``);
* ``{=expression}`` or ``{=expression:unit}``: a number worked out from the draw.
  Names are the calculator's parameters in base units (bytes, seconds, FLOP), its
  outputs, and ``answer`` (the expected value). Arithmetic (+ - * / // ** and
  parentheses), ``min``, ``max``, ``abs``, ``round``, ``ceil``, ``floor``, ``log2``,
  ``sqrt`` and list indexing. The unit converts a base-unit number for display:
  ``{=message_bytes/world_size:MB}`` → "100 MB"; ``{=answer:Go}`` → "1,4 Go";
  ``{=bubble:%}`` → "12,5 %" ("%12,5" in Turkish).

Inside ``$…$`` math a filled number is written for LaTeX (``1{,}4``, thin-space groups).
"""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from app.bank.calls import CallError, evaluate_call
from app.bank.schema import PLACEHOLDER, QuestionFile, Translation
from app.calculator import get
from app.calculator.reading import canonical_unit, dimension_of_unit
from app.calculator.units import UnitError, from_base
from app.i18n.numbers import format_count, format_number

EXPRESSION = re.compile(r"\{=\s*([^{}:]+?)\s*(?::\s*([^{}\s]+)\s*)?\}")
_MATH = re.compile(r"\$\$.+?\$\$|\$[^$\n]+?\$", re.S)
MAX_EXPRESSION_CHARS = 200

_OPERATORS: dict[type, Callable[..., Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Pow: operator.pow,
    ast.Mod: operator.mod, ast.USub: operator.neg, ast.UAdd: operator.pos,
}
_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "min": min, "max": max, "abs": abs, "round": round, "ceil": math.ceil,
    "floor": math.floor, "log2": math.log2, "sqrt": math.sqrt,
}


class TextError(ValueError):
    """A placeholder that cannot be filled (an unknown name, a bad unit, not a number)."""


@dataclass(frozen=True)
class TextValues:
    """What a question's placeholders can name, for one draw."""

    shown: Mapping[str, Any]  # the answer calculator's parameters as written
    numbers: Mapping[str, Any]  # parameters in base units, outputs, and ``answer``


def text_values(question: QuestionFile, shown: Mapping[str, Any],
                draw: Mapping[str, Any]) -> TextValues:
    """The values for ``shown`` (the parameters with the draw applied)."""
    if question.answer is None:
        return TextValues(shown, {})
    call = question.answer.calculator
    try:
        evaluation = get(call.name).evaluate(dict(shown))
        answer = evaluate_call(call, draw)
    except (CallError, ValueError, KeyError):
        return TextValues(shown, {})  # bank check reports the call itself
    numbers = {**evaluation.params, **evaluation.outputs, "answer": answer}
    return TextValues(shown, numbers)


def fill(text: str, values: TextValues, lang: str) -> str:
    """``text`` with every placeholder filled; one that cannot be is left as written
    (``bank check`` refuses such a text, so a candidate never sees one)."""
    if "{" not in text:
        return text
    pieces, last = [], 0
    for match in _MATH.finditer(text):
        pieces.append(_fill_prose(text[last:match.start()], values, lang, math_mode=False))
        pieces.append(_fill_prose(match.group(0), values, lang, math_mode=True))
        last = match.end()
    pieces.append(_fill_prose(text[last:], values, lang, math_mode=False))
    return "".join(pieces)


def problems(text: str, values: TextValues, lang: str) -> list[str]:
    """Why placeholders of ``text`` cannot be filled (empty when all can)."""
    found = []
    for match in EXPRESSION.finditer(text):
        try:
            _expression(match.group(1), match.group(2), values, lang, math_mode=False)
        except TextError as exc:
            found.append(f"{match.group(0)}: {exc}")
    return found


def _fill_prose(text: str, values: TextValues, lang: str, math_mode: bool) -> str:
    def expression(match: re.Match[str]) -> str:
        try:
            return _expression(match.group(1), match.group(2), values, lang, math_mode)
        except TextError:
            return match.group(0)

    def parameter(match: re.Match[str]) -> str:
        key = match.group(1)
        if key not in values.shown:
            return match.group(0)
        return _shown(values.shown[key], lang, math_mode)

    return PLACEHOLDER.sub(parameter, EXPRESSION.sub(expression, text))


_PLAIN_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


_QUANTITY = re.compile(r"([+-]?(?:\d+\.?\d*|\.\d+))\s*([^\d\s][^\s]*)")


def _shown(value: Any, lang: str, math_mode: bool) -> str:
    """A parameter as the prompt shows it; numbers (YAML reads ``13e9`` as text) for people,
    the number of a quantity too (``1.6 GB`` is ``1,6 GB`` on a French page)."""
    if isinstance(value, str) and _PLAIN_NUMBER.fullmatch(value.strip()):
        value = float(value)
    if isinstance(value, str) and (quantity := _QUANTITY.fullmatch(value.strip())):
        number, unit = quantity.groups()
        return f"{_for_math(format_count(float(number), lang), math_mode)} {unit}"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    return _for_math(format_count(float(value), lang), math_mode)


def _expression(source: str, unit: str | None, values: TextValues, lang: str,
                math_mode: bool) -> str:
    value = evaluate(source, values.numbers)
    if unit is None:
        return _for_math(format_count(value, lang), math_mode)
    if unit == "%":
        number = _for_math(format_number(value * 100, lang), math_mode)
        if math_mode:  # French puts a thin space before %, Turkish writes it first
            return {"fr": f"{number}\\,\\%", "tr": f"\\%{number}"}.get(lang, f"{number}\\%")
        return f"%{number}" if lang == "tr" else f"{number}\u00a0%" if lang == "fr" \
            else f"{number}%"
    try:
        dimension = dimension_of_unit(unit)
        converted = from_base(value, dimension, canonical_unit(unit))
    except UnitError:
        raise TextError(f"'{unit}' is not a unit") from None
    number = _for_math(format_count(converted, lang) if float(converted).is_integer()
                       else format_number(converted, lang), math_mode)
    return f"{number}\\ \\text{{{unit}}}" if math_mode else f"{number} {unit}"


_PLAIN_DIGITS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")


def _for_math(number: str, math_mode: bool) -> str:
    """A formatted number as LaTeX reads it: ``1{,}4``, groups with thin spaces,
    ``5{,}88 \\times 10^{23}``."""
    if not math_mode:
        return number
    number = re.sub(r"\s*×\s*10([⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)", lambda m: r" \times 10^{"
                    + m.group(1).translate(_PLAIN_DIGITS) + "}", number)
    number = number.replace(",", "{,}")
    # Words (13 billion, 130 亿) in \text, not the commands just written.
    number = re.sub(r"(?<![\\A-Za-z])([^\W\d_]+)", r"\\text{\1}", number)
    return re.sub(r"[\u00a0\u202f ]", r"\\,", number)


def evaluate(source: str, names: Mapping[str, Any]) -> float:
    """A number from a small arithmetic expression over ``names`` (no other Python)."""
    if len(source) > MAX_EXPRESSION_CHARS:
        raise TextError("is too long")
    try:
        tree = ast.parse(source.strip(), mode="eval")
    except SyntaxError:
        raise TextError("is not an expression") from None
    try:
        value = _node(tree.body, names)
    except (ArithmeticError, TypeError, ValueError, IndexError) as exc:
        raise TextError(f"cannot be computed ({exc})") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not math.isfinite(value):
        raise TextError("is not a finite number")
    return float(value)


def _node(node: ast.AST, names: Mapping[str, Any]) -> Any:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in names:
            raise TextError(f"'{node.id}' is not a parameter or output "
                            f"({', '.join(sorted(names)) or 'none'})")
        return names[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        left, right = _node(node.left, names), _node(node.right, names)
        if isinstance(node.op, ast.Pow) and abs(right) > 64:
            raise TextError("has too large a power")
        return _OPERATORS[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](_node(node.operand, names))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id in _FUNCTIONS and not node.keywords:
        return _FUNCTIONS[node.func.id](*(_node(a, names) for a in node.args))
    if isinstance(node, ast.Subscript):
        return _node(node.value, names)[int(_node(node.slice, names))]
    raise TextError(f"uses '{ast.unparse(node)}', which is not arithmetic on names")


def filled_translation(question: QuestionFile, texts: Translation, shown: Mapping[str, Any],
                       draw: Mapping[str, Any], lang: str) -> Translation:
    """``texts`` with every placeholder of every field filled for this draw."""
    if "{" not in texts.model_dump_json():  # most texts have none: no calculator run
        return texts
    values = text_values(question, shown, draw)

    def walk(data: Any) -> Any:
        if isinstance(data, str):
            return fill(data, values, lang)
        if isinstance(data, dict):
            return {key: walk(value) for key, value in data.items()}
        if isinstance(data, list):
            return [walk(value) for value in data]
        return data

    return Translation.model_validate(walk(texts.model_dump()))
