"""Mock interviews (/mock), history (/progress) and spaced review (/review)."""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from sqlalchemy import select
from starlette.datastructures import FormData
from starlette.responses import RedirectResponse, Response

from app.bank.schema import SENIORITIES, TOPICS, SpokenFollowUp
from app.db import as_utc, utcnow
from app.deps import FormDep, LangDep, SessionDep
from app.i18n import LANGUAGES, _, current_language
from app.practice import service
from app.practice.feedback import problem_message
from app.practice.grading import grade, grade_open
from app.practice.keypoints import suggested_ticks
from app.practice.models import MockInterview
from app.practice.profile import ensure_profile, profile_of, set_profile_cookie
from app.questions import repository
from app.questions.service import QuestionView, find
from app.web.templating import lang_query, render

router = APIRouter(include_in_schema=False)


# ----------------------------------------------------------------------------- set-up


@router.get("/mock", name="mock:setup")
def setup(request: Request, session: SessionDep) -> Response:
    """Choose seniority, topics, language, length and time per question."""
    profile = profile_of(request, session)
    past = [] if profile is None else session.scalars(
        select(MockInterview).where(MockInterview.profile_id == profile.id)
        .order_by(MockInterview.started_at.desc()).limit(10)).all()
    return render(request, "practice/setup.html", {
        "seniorities": SENIORITIES, "topics": TOPICS, "languages": LANGUAGES,
        "lengths": service.LENGTHS, "limits": service.TIME_LIMITS, "past": past,
        "errors": {}, "form": {}})


def _setup_errors(form: FormData) -> tuple[dict[str, str], dict[str, Any]]:
    errors: dict[str, str] = {}
    seniority = form.get("seniority")
    if seniority not in SENIORITIES:
        errors["seniority"] = _("Choose junior, mid-level or senior.")
    topics = [t for t in form.getlist("topics") if isinstance(t, str)]
    unknown = [t for t in topics if t not in TOPICS]
    if unknown:
        errors["topics"] = _("Unknown topic: %(names)s.", names=", ".join(unknown)[:80])
    lang = form.get("lang")
    if lang not in LANGUAGES:
        errors["lang"] = _("Choose one of the four languages.")
    length_text = str(form.get("length", ""))
    if not length_text.isdigit() or int(length_text) not in service.LENGTHS:
        errors["length"] = _("An interview has %(choices)s questions.",
                             choices=", ".join(map(str, service.LENGTHS)))
    limit_text = str(form.get("seconds", "0"))
    if not limit_text.isdigit() or int(limit_text) not in service.TIME_LIMITS:
        errors["seconds"] = _("Choose a time per question from the list.")
    values = {"seniority": seniority, "topics": topics or list(TOPICS), "lang": lang,
              "length": int(length_text) if length_text.isdigit() else 0,
              "seconds": int(limit_text) if limit_text.isdigit() else 0}
    return errors, values


@router.post("/mock", name="mock:start")
def start(request: Request, form: FormDep, session: SessionDep) -> Response:
    errors, values = _setup_errors(form)
    if errors:
        return render(request, "practice/setup.html", {
            "seniorities": SENIORITIES, "topics": TOPICS, "languages": LANGUAGES,
            "lengths": service.LENGTHS, "limits": service.TIME_LIMITS, "past": [],
            "errors": errors, "form": values}, status_code=422)
    profile, token = ensure_profile(request, session)
    try:
        interview = service.start_interview(session, profile, values["seniority"],
                                            values["topics"], values["lang"],
                                            values["length"], values["seconds"])
    except service.PracticeError:
        raise HTTPException(422, _("No question matches this set-up.")) from None
    response = RedirectResponse(f"/mock/{interview.public_id}?lang={values['lang']}",
                                status_code=303)
    set_profile_cookie(request, response, token)
    return response


# ----------------------------------------------------------------------------- the interview


def _interview(request: Request, session: SessionDep, public_id: str) -> MockInterview:
    found = service.find_interview(session, profile_of(request, session), public_id)
    if found is None:
        raise HTTPException(404, _("There is no such interview in this browser."))
    return found


def _speak(request: Request, interview: MockInterview) -> str:
    """An interview runs in the language chosen at set-up, unless ?lang= asks otherwise."""
    lang = request.query_params.get("lang")
    if lang not in LANGUAGES:
        lang = interview.lang
    current_language.set(lang)
    return lang


def _view(session: SessionDep, slug: str | None, lang: str, seed: int | None) -> QuestionView:
    question = find(session, slug or "", lang, seed)
    if question is None:
        raise HTTPException(410, _("A question of this interview has been removed."))
    return question


@router.get("/mock/{public_id}", name="mock:interview")
def interview_page(request: Request, public_id: str, session: SessionDep) -> Response:
    """The current step, or the report once the interview is over."""
    interview = _interview(request, session, public_id)
    lang = _speak(request, interview)
    step = service.current_step(interview)
    if step.kind == "done":
        return _report(request, session, interview, lang)
    question = _view(session, step.slug, lang, step.seed)
    if interview.assessment and not interview.paused_at:  # the self-check, as left
        return _assess(request, interview, step, question, interview.assessment["answer"],
                       interview.assessment.get("ticks", []))
    return render(request, "practice/step.html", {
        "interview": interview, "step": step, "q": question,
        "spoken": _spoken(question, step), "given_text": interview.draft or "",
        "clock": service.clock(interview)})


def _spoken(question: QuestionView, step: service.Step) -> SpokenFollowUp | None:
    return question.spoken(step.spoken_text_index) if step.kind == "spoken" else None


def _key_points(question: QuestionView, step: service.Step) -> dict[str, str]:
    return question.key_points(step.spoken_text_index if step.kind == "spoken" else None)


def _assess(request: Request, interview: MockInterview, step: service.Step,
            question: QuestionView, text: str, ticks: list[str]) -> Response:
    """The model answer beside the candidate's, with the key points to tick."""
    spoken = _spoken(question, step)
    return render(request, "practice/step.html", {
        "interview": interview, "step": step, "q": question, "assessing": True,
        "spoken": spoken, "clock": service.clock(interview), "given_text": text,
        "model_answer": spoken.answer if spoken else question.texts.guidance.model_answer,
        "key_points": _key_points(question, step), "suggested": ticks})


@router.post("/mock/{public_id}/answer", name="mock:answer")
def answer(request: Request, form: FormDep, public_id: str, session: SessionDep) -> Response:
    """Record the answer to the current step and move on (post, then redirect)."""
    interview = _interview(request, session, public_id)
    lang = _speak(request, interview)
    step = service.current_step(interview)
    if step.kind == "done":
        raise HTTPException(409, _("This interview has ended; its report is below."))
    if form.get("slug") != step.slug or str(form.get("number")) != str(step.number):
        raise HTTPException(409, _("This answer is for another step of the interview. "
                                   "Reload the page to continue where you are."))
    answers = [v for v in form.getlist("answer") if isinstance(v, str)]
    question = _view(session, step.slug, lang, step.seed)
    service.resume(interview)  # an answer posted while paused ends the pause
    seconds = service.clock(interview).elapsed
    back = RedirectResponse(f"/mock/{public_id}" + lang_query(request), status_code=303)

    spec = question.spec
    ticked = [v for v in form.getlist("rubric") if isinstance(v, str)]
    if step.kind == "spoken" and form.get("skip") == "yes":
        service.record_spoken(interview, step, "", seconds, None, 0)
        service.advance(interview, None)
        return back
    if step.kind == "spoken" or spec.kind == "open":  # written, then self-checked
        assessing = form.get("step") == "assess"
        # The answer being checked is the one kept on the server (a form may post it too).
        text = ((interview.assessment or {}).get("answer") if assessing else None) or (
            answers[0] if answers else "")
        if not text.strip():
            return _step_error(request, interview, step, question, _(
                "Write your answer, or skip this follow-up with the button below it.")
                if step.kind == "spoken" else _("Write your answer first."))
        points = _key_points(question, step)
        if points and not assessing:  # post, then redirect: reloads are safe
            service.start_assessment(interview, text,
                                     suggested_ticks(text, points, question.shown_lang))
            return back
        if step.kind == "spoken":
            service.record_spoken(interview, step, text, seconds,
                                  [int(key) for key in points if key in ticked], len(points))
            service.advance(interview, None)
            return back
        result = grade_open(spec, ticked)
        answers = [text]
    else:
        result = grade(spec, answers, step.seed, lang)
    if result.problem:
        return _step_error(request, interview, step, question, problem_message(result),
                           answers[0] if answers and spec.kind == "numeric" else "")
    service.record(session, interview, step, question.question_id, result, seconds, answers)
    follow_up = None
    if step.kind == "main":
        known = {}
        for slug in spec.follow_ups:
            linked = find(session, slug, lang, None)
            if linked is not None:
                known[slug] = linked.spec
        follow_up = service.choose_follow_up(spec, interview, known)
    service.advance(interview, follow_up)
    return back


@router.post("/mock/{public_id}/draft", name="mock:draft")
def save_draft(request: Request, form: FormDep, public_id: str, session: SessionDep
               ) -> Response:
    """Keep what the candidate is typing for the current step (htmx, as they type)."""
    interview = _interview(request, session, public_id)
    step = service.current_step(interview)
    if form.get("slug") != step.slug or str(form.get("number")) != str(step.number):
        return Response(status_code=409)  # typed for a step that is over: nothing to keep
    if form.get("step") == "assess":  # the self-check's ticks, as they change
        service.keep_ticks(interview, [v for v in form.getlist("rubric") if isinstance(v, str)])
        return Response(status_code=204)
    text = _text(form.get("answer"))
    if text is None:
        return Response(status_code=409)
    interview.draft = text[:4000]
    return Response(status_code=204)


@router.post("/mock/{public_id}/end", name="mock:end")
def end(request: Request, public_id: str, session: SessionDep) -> Response:
    """End the interview now; the report covers what was answered."""
    interview = _interview(request, session, public_id)
    service.end_early(interview)
    return RedirectResponse(f"/mock/{public_id}" + lang_query(request), status_code=303)


@router.post("/mock/{public_id}/clock", name="mock:clock")
def clock(request: Request, form: FormDep, public_id: str, session: SessionDep) -> Response:
    """Pause, resume or extend the current step's clock; what was typed is kept.

    The buttons submit the answer form here (``formaction``), so a draft survives a pause
    and the page works without JavaScript.
    """
    interview = _interview(request, session, public_id)
    action = form.get("action")
    draft = _text(form.get("answer"))
    if action == "pause":
        service.pause(interview, draft)
    elif action == "resume":
        service.resume(interview)
    elif action == "extend":
        service.extend(interview, draft)
    else:
        raise HTTPException(422, _("Unknown timer action."))
    return RedirectResponse(f"/mock/{public_id}" + lang_query(request), status_code=303)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _step_error(request: Request, interview: MockInterview, step: service.Step,
                question: QuestionView, message: str, given_text: str = "") -> Response:
    """The step again with the problem named and what was typed kept in the field."""
    return render(request, "practice/step.html", {
        "interview": interview, "step": step, "q": question, "error": message,
        "given_text": given_text[:4000], "spoken": _spoken(question, step),
        "clock": service.clock(interview)}, status_code=422)


def _report(request: Request, session: SessionDep, interview: MockInterview,
            lang: str) -> Response:
    # Each step as it was shown: its question with the numbers of its draw.
    shown = list(dict.fromkeys((s["slug"], s.get("seed")) for s in interview.steps
                               if s.get("slug")))
    views = {key: find(session, key[0], lang, key[1]) for key in shown}
    topics = {slug: v.spec.topic for (slug, _seed), v in views.items() if v is not None}
    titles = {slug: v.texts.title for (slug, _seed), v in views.items() if v is not None}
    return render(request, "practice/report.html", {
        "interview": interview, "report": service.report(interview, topics), "views": views,
        "titles": titles})


# ----------------------------------------------------------------------------- history, review


@router.get("/progress", name="progress")
def progress(request: Request, session: SessionDep) -> Response:
    """Past interviews and accuracy by topic and seniority."""
    profile = profile_of(request, session)
    data = service.history(session, profile) if profile else None
    response = render(request, "practice/progress.html", {"history": data})
    response.headers["Cache-Control"] = "no-store"
    return response


@router.get("/progress/export", name="progress:export")
def export(request: Request, session: SessionDep) -> Response:
    """Everything stored for this browser, as a JSON download."""
    profile = profile_of(request, session)
    data = service.history(session, profile) if profile else {"interviews": [], "attempts": []}
    return Response(json.dumps(data, ensure_ascii=False, indent=2),
                    media_type="application/json; charset=utf-8",
                    headers={"Content-Disposition": 'attachment; filename="ringside.json"',
                             "Cache-Control": "no-store"})


@router.post("/progress/delete", name="progress:delete")
def forget(request: Request, form: FormDep, session: SessionDep) -> Response:
    """Delete this browser's history and forget its profile, once the candidate confirms.

    The first post shows what would go, with the export one click away; only a post
    with ``confirm=yes`` deletes.
    """
    profile = profile_of(request, session)
    if form.get("confirm") != "yes":
        data = service.history(session, profile) if profile else None
        response = render(request, "practice/confirm_delete.html", {"history": data})
        response.headers["Cache-Control"] = "no-store"
        return response
    if profile is not None:
        service.forget(session, profile)
    response = RedirectResponse("/progress", status_code=303)
    response.delete_cookie(service.PROFILE_COOKIE)
    return response


@router.get("/review", name="review")
def review(request: Request, session: SessionDep, lang: LangDep) -> Response:
    """Missed questions, in the order spaced repetition wants them back."""
    profile = profile_of(request, session)
    due = service.due_questions(session, profile) if profile else []
    names = repository.titles(session, [slug for slug, _ in due], lang)
    now = utcnow()
    items = [(slug, names.get(slug, slug), when, as_utc(when) <= now) for slug, when in due]
    return render(request, "practice/review.html", {"items": items})



@router.post("/review/rate", name="review:rate")
def rate(request: Request, form: FormDep, session: SessionDep, lang: LangDep) -> Response:
    """The candidate's own rating of their last answer to a question (again, hard, good,
    easy) schedules its next review instead of the one the grade chose."""
    slug, rating = _text(form.get("slug")) or "", service.SELF_RATINGS.get(
        _text(form.get("rating")) or "")
    profile = profile_of(request, session)
    question = find(session, slug, lang, None) if len(slug) <= 80 else None
    if rating is None or question is None or question.question_id is None:
        raise HTTPException(422, _("Choose again, hard, good or easy for a question you "
                                   "answered."))
    card = service.rate_last_review(session, profile.id, question.question_id, rating) \
        if profile else None
    if card is None:
        raise HTTPException(409, _("Answer the question first, then rate how it went."))
    return render(request, "practice/rated.html", {"slug": slug, "due": card.due_at},
                  block="rated")


@router.post("/review/practise", name="review:practise")
def practise_mistakes(request: Request, session: SessionDep, lang: LangDep) -> Response:
    """A short untimed interview over what is due now."""
    profile = profile_of(request, session)
    now = utcnow()
    due = [slug for slug, when in (service.due_questions(session, profile) if profile else [])
           if as_utc(when) <= now][:5]
    if profile is None or not due:
        return RedirectResponse("/review", status_code=303)
    interview = service.start_interview(session, profile, "senior", list(TOPICS), lang,
                                        len(due), None, only=due, purpose="review")
    return RedirectResponse(f"/mock/{interview.public_id}", status_code=303)
