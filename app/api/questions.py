"""JSON API for questions: list with the browse filters, read one, grade an answer."""

from __future__ import annotations

import json
from typing import Any, Literal

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from app.bank.schema import NumericAnswer
from app.deps import SessionDep
from app.i18n import LANGUAGES, current_language
from app.practice.feedback import messages, reading_text
from app.practice.grading import grade
from app.questions import repository
from app.questions.service import QuestionView, find

router = APIRouter(prefix="/api/v1/questions", tags=["questions"])


class QuestionSummary(BaseModel):
    id: str
    topic: str
    seniority: str
    difficulty: int
    kind: str
    tags: list[str]
    title: str


class QuestionPage(BaseModel):
    total: int
    page: int
    pages: int
    items: list[QuestionSummary]


class Choice(BaseModel):
    key: str
    text: str


class QuestionOut(QuestionSummary):
    lang: str = Field(description="the language of the texts (English when not translated)")
    prompt: str
    choices: list[Choice]
    has_variants: bool
    seed: int | None
    params: dict[str, Any]
    answer_unit: str | None = Field(description="numeric questions: the unit the answer is "
                                    "asked in (a bare number is read in it); null for "
                                    "counts, choice and open questions")


class AnswerIn(BaseModel):
    answer: str | list[str] = Field(description="text for numeric and open questions (for "
                                    "open ones, the list of rubric key points covered); "
                                    "the chosen key(s) for choice questions")
    seed: int | None = Field(default=None, ge=1, lt=2**31,
                             description="the variant the question was shown with")


class AnswerOut(BaseModel):
    correct: bool
    score: float
    feedback: str
    mistake: str | None
    unit_issue: str | None
    problem: str | None
    expected: float | None
    given: float | None = Field(description="the answer as read, in the base unit")
    unit: str | None = Field(description="the base unit of expected and given (B, s...)")
    answer_unit: str | None = Field(description="the unit the question asks for; a bare "
                                    "number is read in it")
    read_as: str | None = Field(description="how the answer was read, as the language "
                                "writes it (\"3,25 GB\")")
    correct_choices: list[str]
    explanation: str


Lang = Literal[LANGUAGES]  # type: ignore[valid-type]
LANG_QUERY = Query(None, description="en, fr, tr or zh (default: the Accept-Language header)")


def _lang(lang: Lang | None) -> str:
    if lang is not None:
        current_language.set(lang)
        return lang
    return current_language.get()


@router.get("", summary="List questions (same filters as the browse page)",
            response_model=QuestionPage)
def list_questions(request: Request, session: SessionDep,
                   lang: Lang | None = LANG_QUERY) -> QuestionPage:
    language = _lang(lang)
    filters, ignored = repository.Filters.parse(dict(request.query_params))
    if ignored:
        raise HTTPException(422, [{"loc": ["query", name], "msg": "is not a valid filter value",
                                   "type": "value_error"} for name in ignored])
    result = repository.browse(session, filters, language)
    return QuestionPage(total=result.total, page=min(filters.page, result.pages),
                        pages=result.pages, items=[QuestionSummary(
                            id=item.slug, topic=item.topic, seniority=item.seniority,
                            difficulty=item.difficulty, kind=item.kind, tags=item.tags,
                            title=item.title) for item in result.items])


def _load(session: SessionDep, slug: str, lang: str, seed: int | None) -> QuestionView:
    question = find(session, slug, lang, seed)
    if question is None:
        raise HTTPException(404, f"no question '{slug[:80]}'")
    return question


@router.get("/{slug}", summary="One question, without its answer", response_model=QuestionOut,
            responses={404: {"description": "Unknown question"}})
def get_question(slug: str, session: SessionDep, lang: Lang | None = LANG_QUERY,
                 seed: int | None = Query(None, ge=1, lt=2**31)) -> QuestionOut:
    q = _load(session, slug, _lang(lang), seed)
    return QuestionOut(
        id=q.spec.id, topic=q.spec.topic, seniority=q.spec.seniority,
        difficulty=q.spec.difficulty, kind=q.spec.kind, tags=list(q.spec.tags),
        lang=q.shown_lang, title=q.texts.title,
        prompt=q.texts.prompt,
        choices=[Choice(key=c.key, text=q.choice_text(c.key)) for c in q.spec.choices],
        has_variants=bool(q.spec.variants), seed=q.seed, params=q.params,
        answer_unit=q.spec.answer.unit if isinstance(q.spec.answer, NumericAnswer) else None)


@router.post("/{slug}/answer", summary="Grade an answer", response_model=AnswerOut,
             responses={404: {"description": "Unknown question"},
                        400: {"description": "The body could not be read as JSON"}})
def answer_question(slug: str, body: AnswerIn, session: SessionDep,
                    lang: Lang | None = LANG_QUERY) -> JSONResponse:
    q = _load(session, slug, _lang(lang), body.seed)
    answers = body.answer if isinstance(body.answer, list) else [body.answer]
    result = grade(q.spec, [str(a)[:2000] for a in answers[:20]], q.seed, current_language.get())
    out = AnswerOut(
        correct=result.correct, score=result.score,
        feedback="\n".join(m.text for m in messages(result, q)), mistake=result.mistake,
        unit_issue=result.unit_issue, problem=result.problem, expected=result.expected,
        given=result.given, unit=result.unit, answer_unit=result.answer_unit,
        read_as=reading_text(result) or None, correct_choices=result.correct_choices,
        explanation=q.texts.explanation if not result.problem else "")
    return JSONResponse(json.loads(out.model_dump_json()),
                        status_code=422 if result.problem else 200)
