"""A question as a candidate sees it: texts in their language (or English, saying so),
numbers drawn for a variant, Markdown rendered."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup

from app.bank.calls import fill_placeholders
from app.bank.loader import question_from_row
from app.bank.schema import QuestionFile, Translation
from app.i18n import DEFAULT_LANGUAGE
from app.practice.grading import shown_params, variant_params
from app.questions.models import Question, QuestionTranslation
from app.web.markdown import render_markdown

_PARSED: OrderedDict[str, QuestionFile] = OrderedDict()
_PARSED_MAX = 2048


def parsed(row: Question) -> QuestionFile:
    """The validated file model of a row, cached by content hash (rows repeat a lot)."""
    key = f"{row.slug}:{row.content_hash}"
    if key in _PARSED:
        _PARSED.move_to_end(key)
        return _PARSED[key]
    question = question_from_row(row)
    _PARSED[key] = question
    if len(_PARSED) > _PARSED_MAX:
        _PARSED.popitem(last=False)
    return question


def translation_row(row: Question, lang: str) -> QuestionTranslation:
    """The row's translation in ``lang``, else English, else the first one."""
    by_lang = {t.lang: t for t in row.translations}
    return by_lang.get(lang) or by_lang.get(DEFAULT_LANGUAGE) or row.translations[0]


def title(row: Question, lang: str) -> str:
    return translation_row(row, lang).title


@dataclass(frozen=True)
class QuestionView:
    row: Question
    spec: QuestionFile
    lang: str
    shown_lang: str
    texts: Translation
    seed: int | None
    params: dict[str, Any]

    @property
    def fallback(self) -> bool:
        return self.shown_lang != self.lang

    @property
    def prompt_html(self) -> Markup:
        return render_markdown(fill_placeholders(self.texts.prompt, self.params))

    @property
    def explanation_html(self) -> Markup:
        return render_markdown(self.texts.explanation)

    def choice_text(self, key: str) -> str:
        return self.texts.choices.get(key, key)

    def calculator_link(self) -> str | None:
        """The calculator page opened on this question's numbers."""
        if self.spec.answer is None:
            return None
        from urllib.parse import urlencode

        call = self.spec.answer.calculator
        values = {k: (v if isinstance(v, str) else _json(v)) for k, v in self.params.items()}
        return f"/calculators/{call.name}?{urlencode(values)}"


def _json(value: Any) -> str:
    import json

    return json.dumps(value)


def view(row: Question, lang: str, seed: int | None = None) -> QuestionView:
    spec = parsed(row)
    shown_lang = lang if lang in spec.translations else DEFAULT_LANGUAGE
    draw = variant_params(spec, seed)
    return QuestionView(row, spec, lang, shown_lang, spec.translations[shown_lang], seed or None,
                        shown_params(spec, draw))
