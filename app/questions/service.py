"""A question as a candidate sees it: texts in their language (or English, saying so),
numbers drawn for a variant, Markdown rendered."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any
from urllib.parse import urlencode

from markupsafe import Markup
from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from app.bank.calls import shown_params
from app.bank.loader import question_from_row
from app.bank.schema import QuestionFile, SpokenFollowUp, Translation
from app.bank.texts import filled_translation
from app.i18n import DEFAULT_LANGUAGE
from app.lru import LRU
from app.practice.grading import variant_params
from app.questions import repository
from app.questions.models import Question
from app.web.markdown import render_markdown

_PARSED: LRU[QuestionFile] = LRU(2048)
_FILLED: LRU[tuple[QuestionFile, Translation]] = LRU(4096)


def parsed(row: Question) -> QuestionFile:
    """The validated file model of a row, cached by content hash (rows repeat a lot)."""
    return _PARSED.get_or_compute((row.slug, row.content_hash),
                                  lambda: question_from_row(row))


def preload(session: Session) -> int:
    """Parse every live question into the cache (a new worker does it before serving)."""
    rows = session.scalars(select(Question).where(Question.public()).options(
        selectinload(Question.translations), selectinload(Question.tags))).all()
    for row in rows:
        parsed(row)
    return len(rows)


@dataclass(frozen=True)
class QuestionView:
    spec: QuestionFile
    lang: str
    shown_lang: str
    source_texts: Translation  # as written in the bank, placeholders and all
    seed: int | None
    params: dict[str, Any]
    question_id: int | None = None  # its row, when found in the database
    draw: dict[str, Any] = field(default_factory=dict)

    @property
    def fallback(self) -> bool:
        return self.shown_lang != self.lang

    @cached_property
    def texts(self) -> Translation:
        """Every text with this draw's numbers, written as the shown language writes them
        (once per parsed question, language and draw: every page of it shares the result)."""
        key = (id(self.spec), self.shown_lang, json.dumps(self.draw, sort_keys=True,
                                                          default=str))
        found = _FILLED.get(key)
        if found is not None and found[0] is self.spec:  # the same object, not a reused id
            return found[1]
        texts = filled_translation(self.spec, self.source_texts, self.params, self.draw,
                                   self.shown_lang)
        _FILLED.put(key, (self.spec, texts))
        return texts

    @property
    def prompt_html(self) -> Markup:
        return render_markdown(self.texts.prompt)

    @property
    def explanation_html(self) -> Markup:
        return render_markdown(self.texts.explanation)

    def spoken(self, index: int | None) -> SpokenFollowUp:
        """A spoken follow-up (the last one if the bank now has fewer than the step saw)."""
        follow_ups = self.texts.follow_ups
        return follow_ups[min(index or 0, len(follow_ups) - 1)]

    def key_points(self, spoken_index: int | None = None) -> dict[str, str]:
        """What a self-check ticks: an open question's rubric, or a follow-up's points."""
        if spoken_index is not None:
            return {str(i): point for i, point in enumerate(self.spoken(spoken_index).points)}
        return {key: self.texts.rubric.get(key, key) for key in self.spec.rubric}

    def choice_text(self, key: str) -> str:
        return self.texts.choices.get(key, key)

    def calculator_link(self) -> str | None:
        """The calculator page opened on this question's numbers."""
        if self.spec.answer is None:
            return None
        call = self.spec.answer.calculator
        values = {k: v if isinstance(v, str) else json.dumps(v) for k, v in self.params.items()}
        return f"/calculators/{call.name}?{urlencode(values)}"


def view(spec: QuestionFile, lang: str, seed: int | None = None,
         question_id: int | None = None) -> QuestionView:
    shown_lang = lang if lang in spec.translations else DEFAULT_LANGUAGE
    draw = variant_params(spec, seed)
    return QuestionView(spec, lang, shown_lang, spec.translations[shown_lang], seed or None,
                        shown_params(spec, draw), question_id, draw)


def find(session: Session, slug: str, lang: str, seed: int | None) -> QuestionView | None:
    """The live question ``slug`` as shown in ``lang`` (None when there is none).

    No statement of its own when the bank has not changed (the index of live questions
    is kept for the bank's revision) and the question is already parsed (its content hash
    is the key); the full row with its translations only when it changed or is new.
    """
    found = repository.live_index(session).get(slug)
    if found is None:
        return None
    question_id, digest = found
    spec = _PARSED.get((slug, digest))
    if spec is None:
        row = repository.get_by_slug(session, slug)
        if row is None:
            return None
        spec = parsed(row)
    return view(spec, lang, seed, question_id)
