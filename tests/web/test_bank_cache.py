"""Browse results, follow-up titles and whole pages are kept per worker for the bank's
revision: a change this worker makes, through any session, is seen at once; one made by
another worker (a statement this worker's sessions never saw) once the worker's copy of
the revision is older than REVISION_TTL_S."""

from __future__ import annotations

from sqlalchemy import select, text
from sqlalchemy.orm import Session, selectinload

from app.bank.checks import check_bank
from app.bank.loader import fill_row, load_bank, question_from_row
from app.config import ROOT
from app.questions import repository
from app.questions.models import Question
from app.questions.repository import Filters

SLUG = "ring-allreduce-bytes-per-rank"


def listed(engine, **filters) -> dict[str, str]:
    with Session(engine) as session:
        result = repository.browse(session, Filters(**filters), "en", per_page=500)
        return {item.slug: item.title for item in result.items}


def edit(engine, change) -> None:
    """Change the question as the admin form does: through its file model, then save."""
    with Session(engine) as session, session.begin():
        row = session.scalars(select(Question).where(Question.slug == SLUG).options(
            selectinload(Question.translations), selectinload(Question.tags),
            selectinload(Question.evidence))).one()
        question = question_from_row(row)
        fill_row(row, change(question), row.status)


def test_a_change_elsewhere_is_seen_by_the_next_request(engine):
    with Session(engine) as session, session.begin():
        load_bank(session, check_bank(ROOT / "question_bank").files)
    before = listed(engine, topic="collectives")
    assert listed(engine, topic="collectives") == before  # the cached result, same answer
    assert SLUG in before

    def retitle(question):
        en = question.translations["en"].model_copy(update={"title": "Bytes a rank sends"})
        return question.model_copy(update={"translations": {**question.translations,
                                                            "en": en}})

    edit(engine, retitle)
    assert listed(engine, topic="collectives")[SLUG] == "Bytes a rank sends"
    with Session(engine) as session:
        assert repository.titles(session, [SLUG], "en") == {SLUG: "Bytes a rank sends"}

    with Session(engine) as session, session.begin():
        session.scalars(select(Question).where(Question.slug == SLUG)).one().status = "draft"
    assert SLUG not in listed(engine, topic="collectives")
    with Session(engine) as session:
        assert repository.titles(session, [SLUG], "en") == {}


def test_a_session_that_writes_asks_for_the_revision_again(engine):
    with Session(engine) as session:
        load_bank(session, check_bank(ROOT / "question_bank").files)
        session.flush()
        assert SLUG in {i.slug for i in repository.browse(session, Filters(), "en", 500).items}
        session.scalars(select(Question).where(Question.slug == SLUG)).one().status = "draft"
        session.flush()
        assert SLUG not in {i.slug for i in repository.browse(session, Filters(), "en",
                                                              500).items}


def test_another_workers_change_is_seen_within_the_revision_ttl(engine, monkeypatch):
    with Session(engine) as session, session.begin():
        load_bank(session, check_bank(ROOT / "question_bank").files)
    with Session(engine) as session:
        before = repository.worker_revision(session)
    with engine.begin() as connection:  # another worker: no session of this one sees it
        connection.execute(text("UPDATE question SET version_id = version_id + 1 "
                                "WHERE slug = :slug"), {"slug": SLUG})
    with Session(engine) as session:
        assert repository.worker_revision(session) == before  # this worker's copy, no query
    now = repository._clock()
    monkeypatch.setattr(repository, "_clock", lambda: now + repository.REVISION_TTL_S + 0.1)
    with Session(engine) as session:
        assert repository.worker_revision(session) != before
