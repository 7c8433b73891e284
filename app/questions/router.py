"""Browse questions and practise one: /questions and /questions/{id}."""

from __future__ import annotations

import secrets
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from sqlalchemy.orm import Session
from starlette.responses import RedirectResponse, Response

from app.bank.schema import KINDS, SENIORITIES, TOPICS
from app.deps import FormDep, LangDep, SessionDep
from app.i18n import _
from app.practice.feedback import messages
from app.practice.grading import Grade, grade
from app.practice.profile import ensure_profile, set_profile_cookie
from app.practice.service import save_attempt
from app.questions import repository
from app.questions.service import QuestionView, find
from app.web.templating import lang_query, render, render_shared

router = APIRouter(prefix="/questions", include_in_schema=False)

MAX_SEED = 2**31


@router.get("", name="questions:browse")
async def browse(request: Request, lang: LangDep) -> Response:
    """Filter by topic, seniority, difficulty, kind, tag and text; facets count the rest."""
    filters, ignored = repository.Filters.parse(dict(request.query_params))

    def context(session: Session) -> dict[str, Any]:
        result = repository.browse(session, filters, lang)
        return {"filters": filters, "result": result, "items": result.items,
                "ignored": ignored, "topics": TOPICS, "seniorities": SENIORITIES,
                "kinds": KINDS}

    return await render_shared(request, "questions/browse.html", context, block="results")


def _seed(raw: str | None) -> int | None:
    if raw is None or raw == "":
        return None
    if not raw.isdigit() or not 0 < int(raw) < MAX_SEED:
        raise HTTPException(422, _("The 'seed' of a question must be a whole number."))
    return int(raw)


def _question(session: SessionDep, slug: str, lang: str, seed: int | None) -> QuestionView:
    question = find(session, slug, lang, seed)
    if question is None:
        raise HTTPException(404, _("There is no question '%(id)s'.", id=slug[:80]))
    return question


def _detail_context(session: SessionDep, question: QuestionView,
                    grade_: Grade | None = None, **extra: Any) -> dict[str, Any]:
    links = repository.titles(session, question.spec.follow_ups, question.lang)
    follow_ups = [(slug, links[slug]) for slug in question.spec.follow_ups if slug in links]
    return {"q": question, "grade": grade_, "feedback": messages(grade_, question)
            if grade_ else [], "follow_up_links": follow_ups, **extra}


@router.get("/{slug}", name="questions:detail")
async def detail(request: Request, slug: str, lang: LangDep) -> Response:
    """The question and an answer form for its kind."""
    seed = _seed(request.query_params.get("seed"))

    def context(session: Session) -> dict[str, Any]:
        return _detail_context(session, _question(session, slug, lang, seed))

    return await render_shared(request, "questions/detail.html", context)


@router.get("/{slug}/new-numbers", name="questions:new_numbers")
def new_numbers(request: Request, slug: str, session: SessionDep, lang: LangDep) -> Response:
    """Redraw the parameters of a question with variants."""
    question = _question(session, slug, lang, None)
    if not question.spec.variants:
        return RedirectResponse(f"/questions/{slug}", status_code=303)
    seed = secrets.randbelow(MAX_SEED - 1) + 1
    return RedirectResponse(f"/questions/{slug}?seed={seed}{lang_query(request, '&')}",
                            status_code=303)


@router.post("/{slug}/answer", name="questions:answer")
def answer(request: Request, form: FormDep, slug: str, session: SessionDep, lang: LangDep
           ) -> Response:
    """Grade a submitted answer: the result block for htmx, the whole page otherwise."""
    question = _question(session, slug, lang, _seed(_text(form.get("seed"))))
    answers = [v for v in form.getlist("answer") if isinstance(v, str)]
    ticked = [v for v in form.getlist("rubric") if isinstance(v, str)]
    extra: dict[str, Any] = {"given_text": answers[0][:2000] if answers else ""}
    if question.spec.kind == "open" and form.get("step") != "assess":
        # First step: show the model answer and the key points to tick.
        if not extra["given_text"].strip():
            result = Grade(kind="open", problem="empty")
            return render(request, "questions/detail.html",
                          _detail_context(session, question, result, **extra),
                          block="result", status_code=422)
        return render(request, "questions/detail.html",
                      _detail_context(session, question, None, assess=True, **extra),
                      block="result")
    result = grade(question.spec, ticked if question.spec.kind == "open" else answers,
                   question.seed, lang)
    token = None
    if not result.problem:  # remember it for the candidate's history and review schedule
        profile, token = ensure_profile(request, session)
        save_attempt(session, profile.id, question.question_id, result, None)
    response = render(request, "questions/detail.html",
                      _detail_context(session, question, result, **extra), block="result",
                      status_code=422 if result.problem else 200)
    set_profile_cookie(request, response, token)
    return response


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None
