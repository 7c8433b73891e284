"""The number of SQL statements per page does not grow with the bank or the page."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from fastapi.testclient import TestClient
from sqlalchemy import Engine, event
from sqlalchemy.orm import Session, sessionmaker

from app.bank.checks import BankFile, check_bank
from app.bank.loader import load_bank
from app.config import ROOT
from app.main import app
from app.questions import repository

PAGES = ["/", "/questions", "/questions?seniority=mid&q=all", "/questions?page=2",
         "/questions/ring-allreduce-bytes-per-rank", "/api/v1/questions"]


@contextmanager
def counting(engine: Engine) -> Iterator[list[str]]:
    statements: list[str] = []

    def record(_conn, _cursor, statement, *_args) -> None:
        statements.append(statement)

    event.listen(engine, "before_cursor_execute", record)
    try:
        yield statements
    finally:
        event.remove(engine, "before_cursor_execute", record)


def clones(files: list[BankFile], copies: int) -> list[BankFile]:
    """The bank again under new ids, so the bank is ``copies + 1`` times larger."""
    out = []
    for n in range(copies):
        for f in files:
            question = f.question.model_copy(update={"id": f"{f.question.id}-copy-{n}",
                                                     "follow_ups": []})
            out.append(BankFile(f.path, question))
    return out


def counts(engine: Engine) -> dict[str, int]:
    previous = getattr(app.state, "session_factory", None)
    app.state.session_factory = sessionmaker(bind=engine)
    try:
        with TestClient(app) as client:
            result = {}
            for page in PAGES:
                client.get(page)  # warm caches (parsed questions, templates)
                with counting(engine) as statements:
                    assert client.get(page).status_code == 200, page
                result[page] = len(statements)
            return result
    finally:
        app.state.session_factory = previous


def test_queries_per_page_do_not_grow_with_the_bank(engine):
    files = check_bank(ROOT / "question_bank").files

    with Session(engine) as session, session.begin():
        load_bank(session, files)
    small = counts(engine)
    with Session(engine) as session, session.begin():
        load_bank(session, clones(files, 3))
    large = counts(engine)
    assert large == small
    assert max(small.values()) <= 10, small




def test_a_shared_page_runs_no_statement_unless_the_visitor_has_practised(engine,
                                                                          monkeypatch):
    """A question page from the worker's copy: no statement for a first-time visitor, the
    due count's one for a candidate with a practice profile."""
    now = repository._clock()
    monkeypatch.setattr(repository, "_clock", lambda: now)  # the revision stays fresh
    with Session(engine) as session, session.begin():
        load_bank(session, check_bank(ROOT / "question_bank").files)
    previous = getattr(app.state, "session_factory", None)
    app.state.session_factory = sessionmaker(bind=engine)
    page = "/questions/ring-allreduce-bytes-per-rank"
    try:
        with TestClient(app) as client:
            client.get(page)
            with counting(engine) as statements:
                assert client.get(page).status_code == 200
            assert statements == []
            client.post(page + "/answer", data={"csrf_token": client.cookies["csrftoken"],
                                                "answer": "1 GB"})
            assert client.cookies.get("ringside_profile")
            with counting(engine) as statements:
                assert client.get(page).status_code == 200
            assert len(statements) == 1 and "review_card" in statements[0]
    finally:
        app.state.session_factory = previous
