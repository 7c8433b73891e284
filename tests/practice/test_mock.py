"""Mock interviews over HTTP: set-up, answers, follow-ups, report, resume, isolation,
bad input; history export and deletion; the FSRS schedule."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from fastapi.testclient import TestClient
from fsrs import Card, Rating

from app.main import app
from app.practice.grading import Grade
from app.practice.service import rating_for, scheduler


class Candidate:
    """A browser of its own (its own cookies: its own profile)."""

    def __init__(self, client: TestClient) -> None:
        self.http = TestClient(app)
        self.http.get("/mock")
        self.token = self.http.cookies.get("csrftoken")

    def start(self, **fields: str) -> str:
        data = {"csrf_token": self.token, "seniority": "mid", "lang": "en", "length": "3",
                "seconds": "300", **fields}
        response = self.http.post("/mock", data=data, follow_redirects=False)
        assert response.status_code == 303, response.text[:500]
        return response.headers["location"].split("?")[0]

    def current(self, url: str) -> dict[str, str] | None:
        page = self.http.get(url).text
        slug = re.search(r'name="slug" value="([^"]+)"', page)
        if slug is None:
            return None
        kind = ("choice" if re.search(r'name="answer" value="a"', page) else
                "text" if "<textarea" in page else "numeric")
        return {"slug": slug.group(1), "kind": kind, "page": page,
                "number": re.search(r'name="number" value="(\d+)"', page).group(1)}

    def answer(self, url: str, step: dict[str, str], **extra: object):
        value = {"choice": "a", "text": "ZeRO shards the optimizer state across ranks.",
                 "numeric": "1"}[step["kind"]]
        data = {"csrf_token": self.token, "slug": step["slug"], "number": step["number"],
                "answer": value, **extra}
        response = self.http.post(f"{url}/answer", data=data, follow_redirects=False)
        if response.status_code == 303:
            page = self.http.get(url).text
            if 'name="step" value="assess"' in page:  # open or spoken: the self-check
                keys = re.findall(r'name="rubric" value="([^"]+)"', page)
                response = self.http.post(f"{url}/answer", follow_redirects=False,
                                          data={**data, "step": "assess", "rubric": keys[:1]})
        return response

    def run_to_the_end(self, url: str) -> list[str]:
        kinds = []
        for _ in range(40):
            step = self.current(url)
            if step is None:
                return kinds
            kind = re.search(r'data-step="(\w+)"', step["page"]).group(1)
            kinds.append("main" if kind == "main" else "follow-up")
            response = self.answer(url, step)
            assert response.status_code in (303, 422), response.text[:300]
            if response.status_code == 422:  # an unreadable numeric answer: answer again
                assert "could not" in response.text or "quantity" in response.text
                step["kind"] = "numeric"
                self.http.post(f"{url}/answer", follow_redirects=False, data={
                    "csrf_token": self.token, "slug": step["slug"], "number": step["number"],
                    "answer": "1 GB"})
        raise AssertionError("the interview never ended")


@pytest.mark.parametrize("lang", ["en", "fr"])
@pytest.mark.parametrize("seniority", ["junior", "mid", "senior"])
def test_whole_interview(client, seniority, lang):
    candidate = Candidate(client)
    url = candidate.start(seniority=seniority, lang=lang, length="3")
    kinds = candidate.run_to_the_end(url)
    assert kinds.count("main") == 3
    assert kinds.count("follow-up") == 3  # one follow-up after every answer
    report = candidate.http.get(f"{url}?lang={lang}")
    assert report.status_code == 200
    assert "big-score" in report.text and "<svg" in report.text
    assert f'<html lang="{lang}">' in report.text
    # Numbered by question; each follow-up sits under its question without a number.
    items = re.findall(r'<li class="(main|follow_up|spoken)"( value="\d+")?>', report.text)
    assert [value for kind, value in items if kind == "main"] == [
        ' value="1"', ' value="2"', ' value="3"']
    assert all(not value for kind, value in items if kind != "main")


def test_no_question_repeats_and_levels_are_mixed(client):
    candidate = Candidate(client)
    url = candidate.start(seniority="senior", length="8")
    seen = []
    for _ in range(30):
        step = candidate.current(url)
        if step is None:
            break
        if 'data-step="main"' in step["page"]:
            seen.append(step["slug"])
        candidate.answer(url, step)
    assert len(seen) == len(set(seen)) == 8


def test_reload_resumes_where_the_candidate_was(client):
    candidate = Candidate(client)
    url = candidate.start(length="3")
    first = candidate.current(url)
    assert candidate.current(url)["slug"] == first["slug"]  # a reload shows the same step
    candidate.answer(url, first)
    after = candidate.current(url)
    assert "Follow-up to question 1 of 3" in after["page"]
    again = Candidate.__new__(Candidate)  # same cookies, fresh client: a new tab
    again.http = TestClient(app, cookies=dict(candidate.http.cookies))
    assert "Follow-up to question 1 of 3" in again.http.get(url).text


def test_another_profile_cannot_see_the_interview(client):
    owner, stranger = Candidate(client), Candidate(client)
    url = owner.start()
    assert stranger.http.get(url).status_code == 404
    step = owner.current(url)
    response = stranger.http.post(f"{url}/answer", data={
        "csrf_token": stranger.token, "slug": step["slug"], "number": "1", "answer": "a"})
    assert response.status_code == 404
    assert owner.current(url)["slug"] == step["slug"]  # nothing recorded


@pytest.mark.parametrize(("field", "value", "message"), [
    ("topics", "astrology", "Unknown topic"),
    ("length", "0", "questions"),
    ("length", "1000", "questions"),
    ("seniority", "wizard", "Choose junior"),
    ("seconds", "-5", "time per question"),
])
def test_bad_set_up(client, field, value, message):
    candidate = Candidate(client)
    response = candidate.http.post("/mock", data={
        "csrf_token": candidate.token, "seniority": "mid", "lang": "en", "length": "3",
        "seconds": "0", field: value})
    assert response.status_code == 422
    assert message in response.text


def test_tampered_question_and_late_answers_are_refused(client):
    candidate = Candidate(client)
    url = candidate.start(length="3")
    step = candidate.current(url)
    tampered = candidate.http.post(f"{url}/answer", data={
        "csrf_token": candidate.token, "slug": "ring-allreduce-steps-not-this-one",
        "number": step["number"], "answer": "a"})
    assert tampered.status_code == 409 and "another step" in tampered.text
    assert candidate.current(url)["slug"] == step["slug"]
    candidate.run_to_the_end(url)
    late = candidate.http.post(f"{url}/answer", data={
        "csrf_token": candidate.token, "slug": step["slug"], "number": "1", "answer": "a"})
    assert late.status_code == 409 and "ended" in late.text


def test_history_export_and_delete(client):
    candidate = Candidate(client)
    url = candidate.start(length="3")
    candidate.run_to_the_end(url)
    export = candidate.http.get("/progress/export")
    assert export.headers["content-disposition"].startswith("attachment")
    data = export.json()
    assert len(data["interviews"]) == 1 and len(data["attempts"]) >= 3
    page = candidate.http.get("/progress")
    assert "Accuracy by topic" in page.text and page.headers["cache-control"] == "no-store"
    asked = candidate.http.post("/progress/delete", data={"csrf_token": candidate.token})
    assert asked.status_code == 200 and "cannot be undone" in asked.text  # nothing gone yet
    assert "/progress/export" in asked.text and 'name="confirm" value="yes"' in asked.text
    assert candidate.http.get(url).status_code == 200
    deleted = candidate.http.post("/progress/delete", data={"csrf_token": candidate.token,
                                                            "confirm": "yes"},
                                  follow_redirects=False)
    assert deleted.status_code == 303
    assert candidate.http.get(url).status_code == 404
    assert candidate.http.get("/progress/export").json()["attempts"] == []


def test_question_page_answers_feed_the_review(client):
    candidate = Candidate(client)
    candidate.http.post("/questions/ring-allreduce-bytes-per-rank/answer",
                        data={"csrf_token": candidate.token, "answer": "700 MB"})
    review = candidate.http.get("/review")
    assert "/questions/ring-allreduce-bytes-per-rank" in review.text
    assert "Practise my mistakes" not in review.text or "now" in review.text
    practise = candidate.http.post("/review/practise", data={"csrf_token": candidate.token},
                                   follow_redirects=False)
    assert practise.status_code == 303


def test_the_navigation_counts_the_questions_due_for_one_more_statement(client, web_engine):
    from sqlalchemy import update
    from sqlalchemy.orm import Session

    from app.practice.models import ReviewCard
    from app.practice.service import find_profile
    from tests.web.test_queries import counting

    candidate = Candidate(client)
    assert "due-count" not in candidate.http.get("/questions").text  # no profile yet
    for slug, wrong in (("ring-allreduce-bytes-per-rank", "700 MB"),
                        ("ring-allreduce-steps", "d")):
        answered = candidate.http.post(f"/questions/{slug}/answer",
                                       data={"csrf_token": candidate.token, "answer": wrong})
        assert "Not quite" in answered.text or "wrong" in answered.text.lower()
    assert "due-count" not in candidate.http.get("/questions").text  # due in a minute
    with Session(web_engine) as db, db.begin():  # both come back now
        profile = find_profile(db, candidate.http.cookies.get("ringside_profile"))
        db.execute(update(ReviewCard).where(ReviewCard.profile_id == profile.id)
                   .values(due_at=datetime(2026, 1, 1, tzinfo=UTC)))
    page = candidate.http.get("/calculators").text  # a page without a session of its own
    assert '<span class="due-count"' in page and "2 questions due for review" in page
    stranger = TestClient(app)
    stranger.get("/questions")
    with counting(web_engine) as without:
        stranger.get("/questions")
    with counting(web_engine) as with_profile:
        assert ">2<" in candidate.http.get("/questions").text
    assert len(with_profile) == len(without) + 1


class TestSchedule:
    NOW = datetime(2026, 11, 29, 12, tzinfo=UTC)

    def test_a_wrong_answer_is_due_before_a_right_one(self):
        wrong, _ = scheduler.review_card(Card(), rating_for(Grade("numeric"), 30, None),
                                         self.NOW)
        right, _ = scheduler.review_card(
            Card(), rating_for(Grade("numeric", correct=True, score=1.0), 200, None), self.NOW)
        assert wrong.due < right.due

    def test_ratings(self):
        assert rating_for(Grade("numeric", correct=False, score=0.0), 10, None) == Rating.Again
        assert rating_for(Grade("multi_choice", correct=False, score=0.5), 10, None) == \
            Rating.Hard
        assert rating_for(Grade("numeric", correct=True, score=1.0), 200, 300) == Rating.Good
        assert rating_for(Grade("numeric", correct=True, score=1.0), 30, 300) == Rating.Easy


def test_writes_are_committed_before_the_redirect_leaves(web_engine, client):
    """A browser follows a 303 at once: the new profile and interview must already be in
    the database when the response starts, not after it has been sent."""

    from sqlalchemy import func, select
    from sqlalchemy.orm import Session

    from app.practice.models import MockInterview

    with Session(web_engine) as session:
        before = session.scalar(select(func.count()).select_from(MockInterview))
    seen_at_response_start: list[int] = []

    async def spy(scope, receive, send):
        async def watching_send(message):
            if message["type"] == "http.response.start" and scope["method"] == "POST":
                with Session(web_engine) as session:
                    seen_at_response_start.append(session.scalar(
                        select(func.count()).select_from(MockInterview)))
            await send(message)

        await app(scope, receive, watching_send)

    spied = TestClient(spy)
    spied.get("/mock")
    token = spied.cookies.get("csrftoken")
    response = spied.post("/mock", follow_redirects=False, data={
        "csrf_token": token, "seniority": "mid", "lang": "en", "length": "3", "seconds": "0"})
    assert response.status_code == 303
    assert seen_at_response_start == [before + 1]


def test_accuracy_over_time_is_drawn_from_the_days(web_engine, client):
    """Two days of answers give a two-point line, one point per day."""
    from datetime import timedelta

    from sqlalchemy import select, update
    from sqlalchemy.orm import Session

    from app.practice.models import Attempt, Profile
    from app.practice.service import token_hash

    candidate = Candidate(client)
    for answer in ("700 MB", "1.4 GB"):
        candidate.http.post("/questions/ring-allreduce-bytes-per-rank/answer",
                            data={"csrf_token": candidate.token, "answer": answer})
    profile_token = candidate.http.cookies.get("ringside_profile")
    with Session(web_engine) as session, session.begin():
        profile_id = session.scalar(select(Profile.id).where(
            Profile.token_hash == token_hash(profile_token)))
        first = session.scalar(select(Attempt.id).where(Attempt.profile_id == profile_id)
                               .order_by(Attempt.id))
        moved = session.scalar(select(Attempt.created_at).where(Attempt.id == first))
        session.execute(update(Attempt).where(Attempt.id == first).values(
            created_at=moved - timedelta(days=1)))
    page = candidate.http.get("/progress").text
    assert 'class="picture trend"' in page  # templates/pictures/progress.html
    points = page.split('<polyline', 1)[1].split('points="', 1)[1].split('"', 1)[0].split()
    assert len(points) == 2
    assert points[0].endswith(",110.0") and points[1].endswith(",10.0")  # 0% then 100%


def test_the_report_runs_as_many_statements_whatever_its_length(web_engine, client):
    """The report names every question of the interview: their texts come from the
    per-worker caches, not from one query per question."""
    from tests.web.test_queries import counting

    counts = {}
    for length in ("3", "8"):
        candidate = Candidate(client)
        url = candidate.start(length=length, seconds="0")
        candidate.run_to_the_end(url)
        candidate.http.get(url)  # warm: the bank index and the parsed questions
        with counting(web_engine) as statements:
            report = candidate.http.get(url)
        assert report.status_code == 200 and 'name="slug"' not in report.text  # the report
        counts[length] = len(statements)
    assert counts["3"] == counts["8"], counts


# ----------------------------------------------------------------------------- the clock


def remaining(page: str) -> int:
    return int(re.search(r'data-remaining="(-?\d+)"', page).group(1))


def shift(web_engine, url: str, **moments: float) -> None:
    """Move the interview's clock fields back by so many seconds (time passing)."""
    from datetime import timedelta

    from sqlalchemy import select
    from sqlalchemy.orm import Session

    from app.practice.models import MockInterview

    with Session(web_engine) as session, session.begin():
        interview = session.scalars(select(MockInterview).where(
            MockInterview.public_id == url.rsplit("/", 1)[1])).one()
        for field, seconds in moments.items():
            setattr(interview, field, getattr(interview, field) - timedelta(seconds=seconds))


def clock_post(candidate: Candidate, url: str, action: str, **extra: str):
    return candidate.http.post(f"{url}/clock", data={"csrf_token": candidate.token,
                                                     "action": action, **extra},
                               follow_redirects=False)


def test_a_reload_shows_the_time_really_left(client, web_engine):
    candidate = Candidate(client)
    url = candidate.start(seconds="120")
    assert 118 <= remaining(candidate.http.get(url).text) <= 120
    shift(web_engine, url, step_started_at=50)
    assert 68 <= remaining(candidate.http.get(url).text) <= 70


def test_pause_stops_the_clock_hides_the_question_and_keeps_the_draft(client, web_engine):
    candidate = Candidate(client)
    url = candidate.start(seconds="120")
    step = candidate.current(url)
    paused = clock_post(candidate, url, "pause", answer="half of my answer")
    assert paused.status_code == 303
    page = candidate.http.get(url).text
    assert 'data-paused="yes"' in page and 'name="slug"' not in page  # the question is hidden
    shift(web_engine, url, step_started_at=40, paused_at=40)  # 40 s pass while paused
    assert 118 <= remaining(candidate.http.get(url).text) <= 120
    clock_post(candidate, url, "resume")
    page = candidate.http.get(url).text
    assert 'data-paused="no"' in page and f'value="{step["slug"]}"' in page
    if step["kind"] != "choice":
        assert "half of my answer" in page  # the draft is back in the field


def test_one_more_minute_is_kept_across_reloads(client):
    candidate = Candidate(client)
    url = candidate.start(seconds="120")
    clock_post(candidate, url, "extend")
    assert 178 <= remaining(candidate.http.get(url).text) <= 180
    assert clock_post(candidate, url, "sideways").status_code == 422


def test_overtime_is_counted_and_shown_in_the_report(client, web_engine):
    candidate = Candidate(client)
    url = candidate.start(seconds="120", length="3")
    shift(web_engine, url, step_started_at=200)
    page = candidate.http.get(url).text
    assert remaining(page) <= -79 and "over time" in page
    candidate.answer(url, candidate.current(url))
    candidate.run_to_the_end(url)
    report = candidate.http.get(url).text
    assert "over the limit" in report
    assert re.search(r"1 min 2\d s over the limit", report), report[:2000]


def test_an_interview_can_be_ended_early_and_resumed_from_the_set_up_page(client):
    candidate = Candidate(client)
    url = candidate.start(length="5")
    setup = candidate.http.get("/mock").text
    assert "interview in progress" in setup and url in setup  # offered to resume
    candidate.answer(url, candidate.current(url))
    ended = candidate.http.post(f"{url}/end", data={"csrf_token": candidate.token},
                                follow_redirects=False)
    assert ended.status_code == 303
    report = candidate.http.get(url).text
    assert "Interview report" in report and "Ended early: 1 of 5 questions answered" in report
    assert "interview in progress" not in candidate.http.get("/mock").text


def test_a_review_session_says_so_and_shuffles_choices_per_attempt(client, web_engine):
    """Two attempts at the same choice questions rarely show them in the same order, and a
    reload keeps one attempt's order."""
    from app.practice.models import MockInterview
    from app.practice.service import Step, choice_order

    keys = list("abcdef")
    orders = {tuple(choice_order(MockInterview(public_id=f"id{n}"),
                                 Step("main", "q", None, 1, 3), keys)) for n in range(20)}
    assert len(orders) > 10
    one = MockInterview(public_id="same")
    step = Step("main", "q", None, 1, 3)
    assert choice_order(one, step, keys) == choice_order(one, step, keys)

    candidate = Candidate(client)
    candidate.http.post("/questions/ring-allreduce-bytes-per-rank/answer",
                        data={"csrf_token": candidate.token, "answer": "700 MB"})
    from datetime import timedelta

    from sqlalchemy import update
    from sqlalchemy.orm import Session

    from app.db import utcnow
    from app.practice.models import ReviewCard

    with Session(web_engine) as db, db.begin():  # the missed question is due now
        db.execute(update(ReviewCard).values(due_at=utcnow() - timedelta(minutes=1)))
    session = candidate.http.post("/review/practise", data={"csrf_token": candidate.token})
    assert "Review session" in session.text and "Mock interview ·" not in session.text


def test_a_draft_is_kept_as_it_is_typed(client):
    candidate = Candidate(client)
    url = candidate.start(seconds="0")
    step = candidate.current(url)
    data = {"csrf_token": candidate.token, "slug": step["slug"], "number": step["number"],
            "answer": "what I have typed so far"}
    assert candidate.http.post(f"{url}/draft", data=data).status_code == 204
    page = candidate.http.get(url).text
    if step["kind"] != "choice":
        assert "what I have typed so far" in page
    stale = {**data, "number": "99"}
    assert candidate.http.post(f"{url}/draft", data=stale).status_code == 409


def test_the_report_shows_each_answer_with_its_text_and_the_model_answer(client):
    candidate = Candidate(client)
    url = candidate.start(length="3")
    candidate.run_to_the_end(url)
    report = candidate.http.get(url).text
    assert report.count("Model answer") >= 3
    if "ZeRO shards the optimizer state" not in report:  # no open question was drawn
        assert 'class="chosen"' in report or "<code>" in report
    assert '<ul class="chosen"><li><strong>A</strong>' in report or "<code>1" in report \
        or "ZeRO shards the optimizer state" in report


def _change_interview(web_engine, url: str, change) -> None:
    from sqlalchemy import select
    from sqlalchemy.orm import Session

    from app.practice.models import MockInterview

    with Session(web_engine) as db, db.begin():
        change(db.scalars(select(MockInterview).where(
            MockInterview.public_id == url.rsplit("/", 1)[1])).one())


def ask_spoken(web_engine, url: str, index: int = 0) -> None:
    """After the first answer, the interviewer asks spoken follow-up ``index``."""
    def spoken(interview) -> None:
        steps = [dict(s) for s in interview.steps]
        steps[-1]["follow_up"] = {"spoken": index}
        interview.steps, interview.stage = steps, "follow_up"
    _change_interview(web_engine, url, spoken)


def bank_question(slug: str):
    import yaml

    from app.bank.schema import QuestionFile
    from app.config import ROOT

    path = next((ROOT / "question_bank/questions").glob(f"*/{slug}.yaml"))
    return QuestionFile.model_validate(yaml.safe_load(path.read_text()))


def checked(page: str) -> list[str]:
    return re.findall(r'name="rubric" value="([^"]+)" checked', page)


def test_an_empty_spoken_follow_up_asks_to_write_or_skip(client, web_engine):
    candidate = Candidate(client)
    url = candidate.start(length="3")
    candidate.answer(url, candidate.current(url))
    ask_spoken(web_engine, url)
    step = candidate.current(url)
    assert 'data-step="spoken"' in step["page"] and "Skip this follow-up" in step["page"]
    data = {"csrf_token": candidate.token, "slug": step["slug"], "number": step["number"]}
    empty = candidate.http.post(f"{url}/answer", data={**data, "answer": "  "},
                                follow_redirects=False)
    assert empty.status_code == 422 and "skip this follow-up" in empty.text
    skipped = candidate.http.post(f"{url}/answer", data={**data, "answer": "", "skip": "yes"},
                                  follow_redirects=False)
    assert skipped.status_code == 303
    assert 'data-step="spoken"' not in candidate.http.get(url).text


def test_the_candidates_own_rating_replaces_the_one_the_grade_gave(client, web_engine):
    """Again brings the question back sooner than Easy; rating twice does not count two
    reviews (each rating starts from the card before the answer)."""
    from sqlalchemy import select
    from sqlalchemy.orm import Session

    from app.practice.models import ReviewCard
    from app.questions.models import Question

    slug = "ring-allreduce-steps"
    candidate = Candidate(client)
    page = candidate.http.post(f"/questions/{slug}/answer", data={
        "csrf_token": candidate.token, "answer": "a"}, headers={"HX-Request": "true"})
    assert 'name="rating" value="easy"' in page.text

    def due() -> datetime:
        with Session(web_engine) as db:
            question_id = db.scalars(select(Question.id).where(Question.slug == slug)).one()
            return db.scalars(select(ReviewCard.due_at).where(  # this candidate's: the
                ReviewCard.question_id == question_id)  # card answered last
                .order_by(ReviewCard.reviewed_at.desc()).limit(1)).one()

    def rate(rating: str):
        return candidate.http.post("/review/rate", data={
            "csrf_token": candidate.token, "slug": slug, "rating": rating},
            headers={"HX-Request": "true"})

    easy = rate("easy")
    assert easy.status_code == 200 and "next review" in easy.text
    after_easy = due()
    rate("again")
    after_again = due()
    assert after_again < after_easy
    rate("easy")
    assert due() == after_easy  # the same review, rated again: not a second one
    assert rate("sideways").status_code == 422
    stranger = Candidate(client)
    assert stranger.http.post("/review/rate", data={
        "csrf_token": stranger.token, "slug": slug, "rating": "easy"}).status_code == 409


def test_a_spoken_follow_up_is_checked_against_its_model_answer_and_kept(client, web_engine):
    """Writing an answer shows the follow-up's own model answer and key points, pre-ticked;
    the ticks survive a reload and a change; the report shows both answers and the ticks."""
    candidate = Candidate(client)
    url = candidate.start(length="3")
    first = "ring-allreduce-bytes-per-rank"
    _change_interview(web_engine, url, lambda interview: setattr(
        interview, "plan", [{"slug": first, "seed": None}, *interview.plan[1:]]))
    candidate.answer(url, candidate.current(url))
    ask_spoken(web_engine, url, index=1)
    step = candidate.current(url)
    assert step["slug"] == first
    follow_up = bank_question(first).translations["en"].follow_ups[1]
    data = {"csrf_token": candidate.token, "slug": step["slug"], "number": step["number"]}
    posted = candidate.http.post(f"{url}/answer", data={**data, "answer": follow_up.answer},
                                 follow_redirects=False)
    assert posted.status_code == 303  # post, then redirect: a reload is safe
    assess = candidate.http.get(url)
    assert 'name="step" value="assess"' in assess.text
    assert 'class="model-answer"' in assess.text
    assert len(re.findall(r'name="rubric" value="\d"', assess.text)) == len(follow_up.points)
    assert checked(assess.text), "its own model answer ticks at least one key point"
    reloaded = candidate.http.get(url).text  # the self-check is still there, as left
    assert 'name="step" value="assess"' in reloaded
    assert checked(reloaded) == checked(assess.text)
    kept = candidate.http.post(f"{url}/draft", data={**data, "step": "assess", "rubric": "1"})
    assert kept.status_code == 204
    assert checked(candidate.http.get(url).text) == ["1"]
    done = candidate.http.post(f"{url}/answer", data={**data, "step": "assess", "rubric": "1"},
                               follow_redirects=False)
    assert done.status_code == 303
    candidate.http.post(f"{url}/end", data={"csrf_token": candidate.token})
    report = candidate.http.get(url).text
    assert f"1 of {len(follow_up.points)} key points ticked" in report
    assert report.count('class="ticked"') == 1
    assert report.count('class="missed"') == len(follow_up.points) - 1


def test_an_open_answers_self_check_survives_a_reload(client, web_engine):
    candidate = Candidate(client)
    url = candidate.start(length="3")
    open_slug = "three-d-layout"

    def ask_open(interview) -> None:
        interview.plan = [{"slug": open_slug, "seed": None}, *interview.plan[1:]]
    _change_interview(web_engine, url, ask_open)
    step = candidate.current(url)
    assert step["slug"] == open_slug
    data = {"csrf_token": candidate.token, "slug": open_slug, "number": step["number"]}
    text = "Tensor parallelism stays inside a node because of NVLink."
    candidate.http.post(f"{url}/answer", data={**data, "answer": text})
    page = candidate.http.get(url).text
    assert 'name="step" value="assess"' in page and text in page
    keys = re.findall(r'name="rubric" value="([^"]+)"', page)
    candidate.http.post(f"{url}/draft", data={**data, "step": "assess", "rubric": keys[:2]})
    assert checked(candidate.http.get(url).text) == keys[:2]
    candidate.http.post(f"{url}/answer", data={**data, "step": "assess", "rubric": keys[:2]})
    candidate.http.post(f"{url}/end", data={"csrf_token": candidate.token})
    report = candidate.http.get(url).text
    assert text in report and f"2 of {len(keys)} key points ticked" in report
