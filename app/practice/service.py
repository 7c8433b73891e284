"""Mock interviews, history and spaced review for an anonymous profile.

The interview's whole state (its plan, the current step, what was answered) lives in
the database, so reloading the page or losing the connection resumes it.
"""

from __future__ import annotations

import hashlib
import random
import secrets
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from fsrs import Card, Rating, Scheduler
from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from app.bank.schema import SENIORITIES, TOPICS, QuestionFile
from app.db import as_utc, utcnow
from app.practice.grading import Grade
from app.practice.models import Attempt, MockInterview, Profile, ReviewCard
from app.questions.models import Question

PROFILE_COOKIE = "ringside_profile"
LENGTHS = (3, 5, 8, 12)
TIME_LIMITS = (0, 120, 300, 600)  # seconds per question; 0 = untimed
EASY_FRACTION = 0.5  # right in under half the time limit (or a minute untimed) is "Easy"
LOWER_LEVEL_SHARE = 0.3  # about a third of an interview comes from one level below

scheduler = Scheduler(enable_fuzzing=False)


class PracticeError(ValueError):
    """A request the interview cannot take (a tampered field, an ended interview...)."""


# ----------------------------------------------------------------------------- profiles


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def find_profile(session: Session, token: str | None) -> Profile | None:
    if not token or len(token) > 100:
        return None
    return session.scalars(select(Profile).where(Profile.token_hash == token_hash(token))
                           ).one_or_none()


def new_profile(session: Session) -> tuple[Profile, str]:
    """A fresh profile and the token to put in its cookie (never stored in clear)."""
    token = secrets.token_urlsafe(32)
    profile = Profile(token_hash=token_hash(token))
    session.add(profile)
    session.flush()
    return profile, token


# ----------------------------------------------------------------------------- planning


@dataclass(frozen=True)
class Candidate:
    id: int
    slug: str
    topic: str
    seniority: str
    kind: str
    has_variants: bool


def plan_interview(session: Session, seniority: str, topics: list[str], length: int,
                   rng: random.Random, only: list[str] | None = None) -> list[dict[str, Any]]:
    """A balanced set: mixed kinds and topics, mostly at the level with some one below,
    no repeats; questions with variants get fresh numbers."""
    # Whether a question has variants, asked of the JSON in SQL: loading every spec to
    # read one key was most of the cost of starting an interview.
    has_variants = Question.spec["variants"].as_string().is_not(None)
    query = select(Question.id, Question.slug, Question.topic, Question.seniority,
                   Question.kind, has_variants.label("has_variants")).where(Question.public())
    if only is not None:
        query = query.where(Question.slug.in_(only))
    else:
        query = query.where(Question.topic.in_(topics))
    pool = [Candidate(r.id, r.slug, r.topic, r.seniority, r.kind, bool(r.has_variants))
            for r in session.execute(query)]
    level = SENIORITIES.index(seniority)
    below = SENIORITIES[level - 1] if level > 0 else None
    by_level: dict[str | None, list[Candidate]] = defaultdict(list)
    for candidate in pool:
        by_level[candidate.seniority].append(candidate)
    n_lower = round(length * LOWER_LEVEL_SHARE) if below else 0
    chosen = _diverse(by_level[below], n_lower, rng)
    chosen += _diverse(by_level[seniority], length - len(chosen), rng)
    # Too few at these levels: fill from one level below, then from the rest.
    rest = [c for c in pool if c.seniority not in (seniority, below)]
    for group in (by_level[below], rest):
        chosen += _diverse([c for c in group if c not in chosen], length - len(chosen), rng)
    return [{"slug": c.slug, "seed": rng.randrange(1, 2**31) if c.has_variants else None}
            for c in _interleave(chosen)]


def _diverse(group: list[Candidate], count: int, rng: random.Random) -> list[Candidate]:
    """``count`` candidates spread over topics and kinds: round-robin over topics, each
    topic giving its kinds in turn."""
    if count <= 0:
        return []
    by_topic: dict[str, list[Candidate]] = defaultdict(list)
    for candidate in sorted(group, key=lambda c: c.slug):
        by_topic[candidate.topic].append(candidate)
    for items in by_topic.values():
        rng.shuffle(items)
        seen: Counter[str] = Counter()
        ranked = []
        for candidate in items:  # one of each kind before a second of any
            ranked.append((seen[candidate.kind], candidate))
            seen[candidate.kind] += 1
        items[:] = [c for _, c in sorted(ranked, key=lambda pair: pair[0])]
    order = list(by_topic)
    rng.shuffle(order)
    picked: list[Candidate] = []
    while len(picked) < count and any(by_topic.values()):
        for topic in order:
            if by_topic[topic] and len(picked) < count:
                picked.append(by_topic[topic].pop(0))
    return picked


def _interleave(chosen: list[Candidate]) -> list[Candidate]:
    """Order so that consecutive questions differ in topic and kind where possible."""
    ordered: list[Candidate] = []
    remaining = list(chosen)
    while remaining:
        last = ordered[-1] if ordered else None
        remaining.sort(key=lambda c: (last is not None and c.topic == last.topic)
                       + (last is not None and c.kind == last.kind))
        ordered.append(remaining.pop(0))
    return ordered


def start_interview(session: Session, profile: Profile, seniority: str, topics: list[str],
                    lang: str, length: int, seconds: int | None,
                    only: list[str] | None = None, purpose: str = "mock") -> MockInterview:
    rng = random.Random(secrets.randbits(64))  # noqa: S311 - choosing questions, not secrets
    plan = plan_interview(session, seniority, topics, length, rng, only)
    if not plan:
        raise PracticeError("no-questions")
    interview = MockInterview(public_id=secrets.token_urlsafe(16), profile_id=profile.id,
                              seniority=seniority, topics=topics, lang=lang,
                              seconds_per_question=seconds or None, plan=plan, steps=[],
                              position=0, stage="question", step_started_at=utcnow(),
                              started_at=utcnow(), purpose=purpose)
    session.add(interview)
    session.flush()
    return interview


def find_interview(session: Session, profile: Profile | None, public_id: str
                   ) -> MockInterview | None:
    """Only the profile's own interviews: another profile's id is simply not found."""
    if profile is None or len(public_id) > 40:
        return None
    return session.scalars(select(MockInterview).where(
        MockInterview.public_id == public_id, MockInterview.profile_id == profile.id)
    ).one_or_none()


# ----------------------------------------------------------------------------- the flow


@dataclass(frozen=True)
class Step:
    """What the candidate faces now."""

    kind: str  # "main" | "follow_up" | "spoken" | "done"
    slug: str | None
    seed: int | None
    number: int  # 1-based main question number
    total: int
    spoken_text_index: int | None = None


def current_step(interview: MockInterview) -> Step:
    total = len(interview.plan)
    if interview.stage == "done":
        return Step("done", None, None, total, total)
    entry = interview.plan[interview.position]
    number = interview.position + 1
    if interview.stage == "question":
        return Step("main", entry["slug"], entry.get("seed"), number, total)
    follow = interview.steps[-1].get("follow_up") or {}
    if "slug" in follow:
        return Step("follow_up", follow["slug"], follow.get("seed"), number, total)
    return Step("spoken", entry["slug"], entry.get("seed"), number, total,
                spoken_text_index=follow.get("spoken", 0))


def choose_follow_up(spec: QuestionFile, interview: MockInterview,
                     known: dict[str, QuestionFile]) -> dict[str, Any]:
    """A linked question not already in the interview (choice or numeric, so it can be
    graded at once), else the first spoken follow-up, answered as open text."""
    used = {e["slug"] for e in interview.plan} | {
        s.get("slug") for s in interview.steps}
    for slug in spec.follow_ups:
        linked = known.get(slug)
        if linked is not None and slug not in used and linked.kind != "open":
            return {"slug": slug, "seed": None}
    return {"spoken": 0}


@dataclass(frozen=True)
class Clock:
    """The current step's clock, from the server's record: what the page shows on load."""

    limit: int | None  # seconds for this step, +1 min extensions included; None = untimed
    elapsed: float  # seconds spent on the step, pauses excluded
    paused: bool

    @property
    def remaining(self) -> float | None:
        return None if self.limit is None else self.limit - self.elapsed

    @property
    def overtime(self) -> float:
        return 0.0 if self.limit is None else max(0.0, self.elapsed - self.limit)


def clock(interview: MockInterview) -> Clock:
    now = utcnow()
    wall = max(0.0, (now - as_utc(interview.step_started_at)).total_seconds())
    paused = interview.paused_seconds or 0.0
    if interview.paused_at is not None:
        paused += max(0.0, (now - as_utc(interview.paused_at)).total_seconds())
    limit = (interview.seconds_per_question + (interview.extra_seconds or 0)
             if interview.seconds_per_question else None)
    return Clock(limit, round(max(0.0, wall - paused), 1), interview.paused_at is not None)


EXTENSION_SECONDS = 60
MAX_EXTENSIONS = 10


def pause(interview: MockInterview, draft: str | None) -> None:
    """Stop the clock (the question is hidden meanwhile); keep what was typed."""
    if interview.paused_at is None and interview.stage != "done":
        interview.paused_at = utcnow()
    if draft is not None:
        interview.draft = draft[:4000]


def resume(interview: MockInterview) -> None:
    if interview.paused_at is not None:
        interview.paused_seconds = (interview.paused_seconds or 0.0) + max(
            0.0, (utcnow() - as_utc(interview.paused_at)).total_seconds())
        interview.paused_at = None


def extend(interview: MockInterview, draft: str | None) -> None:
    """One more minute for this step (at most ten)."""
    if interview.seconds_per_question and (interview.extra_seconds or 0) < (
            EXTENSION_SECONDS * MAX_EXTENSIONS):
        interview.extra_seconds = (interview.extra_seconds or 0) + EXTENSION_SECONDS
    if draft is not None:
        interview.draft = draft[:4000]


def record(session: Session, interview: MockInterview, step: Step, question_id: int,
           grade: Grade, seconds: float, answers: list[str]) -> None:
    """Store a graded answer in the interview, the history and the review schedule."""
    entry = {"kind": step.kind, "slug": step.slug, "seed": step.seed, "number": step.number,
             "answer": [a[:2000] for a in answers[:12]], "correct": grade.correct,
             "score": grade.score, "mistake": grade.mistake, "unit_issue": grade.unit_issue,
             "seconds": seconds, **_time_limit(interview)}
    if grade.kind == "open":
        entry["ticked"] = grade.rubric_ticked
    interview.steps = [*interview.steps, entry]
    save_attempt(session, interview.profile_id, question_id, grade, seconds, interview.id,
                 interview.seconds_per_question)


def save_attempt(session: Session, profile_id: int, question_id: int, grade: Grade,
                 seconds: float | None, interview_id: int | None = None,
                 limit: int | None = None) -> None:
    session.add(Attempt(profile_id=profile_id, question_id=question_id,
                        interview_id=interview_id, correct=grade.correct, score=grade.score,
                        mistake=grade.mistake, seconds=seconds))
    schedule(session, profile_id, question_id, rating_for(grade, seconds, limit))


def advance(interview: MockInterview, follow_up: dict[str, Any] | None) -> None:
    """Move to the next step: main → its follow-up → next main … → done."""
    if interview.stage == "question" and follow_up is not None:
        interview.steps[-1]["follow_up"] = follow_up
        interview.steps = list(interview.steps)  # JSON column: assign to mark it changed
        interview.stage = "follow_up"
    elif interview.position + 1 < len(interview.plan):
        interview.position += 1
        interview.stage = "question"
    else:
        interview.stage = "done"
        interview.finished_at = utcnow()
    interview.step_started_at = utcnow()
    interview.paused_at, interview.paused_seconds, interview.extra_seconds = None, 0.0, 0
    interview.draft = None
    interview.assessment = None


def choice_order(interview: MockInterview, step: Step, keys: list[str]) -> list[str]:
    """The choices in an order of this attempt's own: the same on every reload of the
    step, different in the next interview, so a review is not answered by recognition."""
    order = list(keys)
    random.Random(f"{interview.public_id}:{step.number}:{step.kind}:{step.slug}").shuffle(  # noqa: S311
        order)
    return order


def end_early(interview: MockInterview) -> None:
    """Stop the interview now: the report covers the steps answered so far."""
    if interview.stage != "done":
        interview.stage = "done"
        interview.finished_at = utcnow()
        interview.paused_at = None


def start_assessment(interview: MockInterview, text: str, suggested: list[str]) -> None:
    """Keep the answer being self-checked and the suggested ticks, so a reload finds them."""
    interview.assessment = {"answer": text[:4000], "ticks": list(suggested)}
    interview.draft = text[:4000]


def keep_ticks(interview: MockInterview, ticks: list[str]) -> None:
    if interview.assessment:
        interview.assessment = {**interview.assessment, "ticks": ticks[:12]}


def record_spoken(interview: MockInterview, step: Step, text: str, seconds: float,
                  ticked: list[int] | None, points: int) -> None:
    """A spoken follow-up's answer with the key points the candidate ticked (None when it
    was skipped); it is not graded, so it leaves the score and the review schedule alone."""
    interview.steps = [*interview.steps, {
        "kind": "spoken", "slug": step.slug, "seed": step.seed, "number": step.number,
        "answer": [text[:4000]], "seconds": seconds, "spoken_index": step.spoken_text_index,
        "ticked": ticked, "score": len(ticked) / points if ticked is not None and points
        else None, **_time_limit(interview)}]


def _time_limit(interview: MockInterview) -> dict[str, Any]:
    """The step's limit (extensions included) and the time over it, for the report."""
    state = clock(interview)
    return {} if state.limit is None else {"limit": state.limit,
                                           "overtime": round(state.overtime, 1)}


# ----------------------------------------------------------------------------- review (FSRS)


def rating_for(grade: Grade, seconds: float | None, limit: int | None) -> Rating:
    """Wrong → Again, partial → Hard, right → Good, right and fast → Easy."""
    if not grade.correct:
        return Rating.Again if grade.score == 0 else Rating.Hard
    fast = seconds is not None and seconds <= EASY_FRACTION * (limit or 120)
    return Rating.Easy if fast else Rating.Good


def schedule(session: Session, profile_id: int, question_id: int, rating: Rating,
             now: datetime | None = None) -> ReviewCard:
    now = now or utcnow()
    row = session.scalars(select(ReviewCard).where(
        ReviewCard.profile_id == profile_id, ReviewCard.question_id == question_id)
    ).one_or_none()
    before = row.card if row is not None else {}
    card, _log = scheduler.review_card(Card.from_dict(before) if before else Card(), rating,
                                       now)
    if row is None:
        row = ReviewCard(profile_id=profile_id, question_id=question_id, card={}, due_at=now)
        session.add(row)
    row.card, row.due_at, row.before, row.reviewed_at = card.to_dict(), card.due, before, now
    return row


SELF_RATINGS = {"again": Rating.Again, "hard": Rating.Hard, "good": Rating.Good,
                "easy": Rating.Easy}


def rate_last_review(session: Session, profile_id: int, question_id: int, rating: Rating
                     ) -> ReviewCard | None:
    """The candidate's own rating replaces the one their last answer's grade gave: the card
    is reviewed again from its state before that answer, at the same moment."""
    row = session.scalars(select(ReviewCard).where(
        ReviewCard.profile_id == profile_id, ReviewCard.question_id == question_id)
    ).one_or_none()
    if row is None or row.before is None or row.reviewed_at is None:
        return None
    card, _log = scheduler.review_card(Card.from_dict(row.before) if row.before else Card(),
                                       rating, as_utc(row.reviewed_at))
    row.card, row.due_at = card.to_dict(), card.due
    return row


def due_questions(session: Session, profile: Profile, now: datetime | None = None,
                  limit: int = 50) -> list[tuple[str, datetime]]:
    """Questions the profile missed or found hard, due for review first."""
    now = now or utcnow()
    rows = session.execute(
        select(Question.slug, ReviewCard.due_at).join(Question, Question.id ==
                                                      ReviewCard.question_id)
        .where(ReviewCard.profile_id == profile.id, Question.public())
        .order_by(ReviewCard.due_at).limit(limit)).all()
    return [(slug, due) for slug, due in rows]


def due_count(session: Session, token: str | None, now: datetime | None = None) -> int:
    """How many live questions the profile of ``token`` has due now (one statement)."""
    if not token or len(token) > 100:
        return 0
    return session.scalar(
        select(func.count()).select_from(ReviewCard)
        .join(Profile, Profile.id == ReviewCard.profile_id)
        .join(Question, Question.id == ReviewCard.question_id)
        .where(Profile.token_hash == token_hash(token), ReviewCard.due_at <= (now or utcnow()),
               Question.public())) or 0


# ----------------------------------------------------------------------------- reports


@dataclass(frozen=True)
class Report:
    overall: float
    by_topic: list[tuple[str, float, int]]
    main: list[dict[str, Any]]
    follow_ups: list[dict[str, Any]]
    to_review: list[str]
    total_seconds: float


def report(interview: MockInterview, topics_by_slug: dict[str, str]) -> Report:
    graded = [s for s in interview.steps if s["kind"] in ("main", "follow_up")]
    main = [s for s in interview.steps if s["kind"] == "main"]
    scores: dict[str, list[float]] = defaultdict(list)
    for step in graded:
        scores[topics_by_slug.get(step["slug"], "")].append(step["score"])
    by_topic = sorted(((t, sum(v) / len(v), len(v)) for t, v in scores.items()),
                      key=lambda item: TOPICS.index(item[0]) if item[0] in TOPICS else 99)
    overall = sum(s["score"] for s in graded) / len(graded) if graded else 0.0
    to_review = list(dict.fromkeys(s["slug"] for s in graded if s["score"] < 1))
    return Report(overall, by_topic, main,
                  [s for s in interview.steps if s["kind"] in ("follow_up", "spoken")],
                  to_review, sum(s.get("seconds") or 0 for s in interview.steps))


def history(session: Session, profile: Profile) -> dict[str, Any]:
    """Everything stored for the profile, as plain data (for the page and the export)."""
    interviews = session.scalars(select(MockInterview).where(
        MockInterview.profile_id == profile.id).order_by(MockInterview.started_at.desc())).all()
    attempts = session.execute(
        select(Attempt, Question.slug, Question.topic, Question.seniority)
        .join(Question, Question.id == Attempt.question_id)
        .where(Attempt.profile_id == profile.id).order_by(Attempt.created_at)).all()
    by_topic: Counter[str] = Counter()
    right_topic: Counter[str] = Counter()
    by_level: Counter[str] = Counter()
    right_level: Counter[str] = Counter()
    for attempt, _slug, topic, seniority in attempts:
        by_topic[topic] += 1
        right_topic[topic] += attempt.correct
        by_level[seniority] += 1
        right_level[seniority] += attempt.correct
    by_day: dict[str, list[bool]] = defaultdict(list)
    for attempt, *_ in attempts:
        by_day[attempt.created_at.date().isoformat()].append(attempt.correct)
    return {
        "accuracy_by_day": [{"day": day, "accuracy": sum(v) / len(v), "answers": len(v)}
                            for day, v in sorted(by_day.items())],
        "interviews": [{"id": i.public_id, "seniority": i.seniority, "lang": i.lang,
                        "questions": len(i.plan), "stage": i.stage,
                        "started_at": i.started_at.isoformat(), "steps": i.steps}
                       for i in interviews],
        "attempts": [{"question": slug, "topic": topic, "seniority": seniority,
                      "correct": a.correct, "score": a.score, "mistake": a.mistake,
                      "seconds": a.seconds, "at": a.created_at.isoformat()}
                     for a, slug, topic, seniority in attempts],
        "accuracy_by_topic": {t: right_topic[t] / n for t, n in by_topic.items()},
        "accuracy_by_seniority": {s: right_level[s] / n for s, n in by_level.items()},
    }


def forget(session: Session, profile: Profile) -> None:
    """Delete the profile and everything stored under it."""
    for model in (Attempt, ReviewCard, MockInterview):
        session.execute(delete(model).where(model.profile_id == profile.id))
    session.delete(profile)
