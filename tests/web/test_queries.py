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
from app.db import get_session
from app.main import app

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
    factory = sessionmaker(bind=engine)

    def session_override() -> Iterator[Session]:
        with factory() as session:
            yield session

    previous = app.dependency_overrides.get(get_session)
    app.dependency_overrides[get_session] = session_override
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
        if previous is None:
            app.dependency_overrides.pop(get_session, None)
        else:
            app.dependency_overrides[get_session] = previous


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


