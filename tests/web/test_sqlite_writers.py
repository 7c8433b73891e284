"""On SQLite, the requests of a worker that write queue for the one write lock in turn:
many candidates answering at once all get graded and recorded; one that waited too long
gets a clear 503 and nothing half-written."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from app import db
from app.bank.checks import check_bank
from app.bank.loader import load_bank
from app.config import ROOT
from app.db import make_engine
from app.main import create_app
from app.practice.models import Attempt
from tests.conftest import migrate

ANSWER = "/questions/ring-allreduce-bytes-per-rank/answer"


@pytest.fixture
def sqlite_app(tmp_path, monkeypatch):
    """The app on a SQLite file of its own, through the real get_session."""
    engine = make_engine(f"sqlite:///{tmp_path / 'writers.db'}")
    migrate(engine)
    with Session(engine) as session, session.begin():
        load_bank(session, check_bank(ROOT / "question_bank").files)
    monkeypatch.setattr(db, "session_factory",
                        lambda: sessionmaker(bind=engine, expire_on_commit=False))
    yield create_app(), engine
    engine.dispose()


def answer(app, value: str) -> int:
    with TestClient(app) as client:
        client.get("/")
        return client.post(ANSWER, data={"csrf_token": client.cookies["csrftoken"],
                                          "answer": value}).status_code


def attempts(engine) -> int:
    with Session(engine) as session:
        return session.scalar(select(func.count()).select_from(Attempt))


def test_candidates_answering_at_once_are_all_recorded(sqlite_app):
    app, engine = sqlite_app
    with ThreadPoolExecutor(max_workers=12) as pool:
        statuses = list(pool.map(lambda n: answer(app, f"{n + 1} GB"), range(36)))
    assert statuses == [200] * 36
    assert attempts(engine) == 36


def test_a_writer_that_waits_too_long_gets_a_clear_503(sqlite_app, monkeypatch):
    app, engine = sqlite_app
    monkeypatch.setattr(db, "SQLITE_WRITE_WAIT_S", 0.2)
    with TestClient(app) as client:
        client.get("/")
        assert db._SQLITE_WRITER.acquire(timeout=1)  # another request is writing
        try:
            response = client.post(ANSWER, data={"csrf_token": client.cookies["csrftoken"],
                                                 "answer": "1.4 GB"})
        finally:
            db._SQLITE_WRITER.release()
    assert response.status_code == 503 and response.headers["retry-after"] == "5"
    assert "very busy" in response.text and "Traceback" not in response.text
    assert attempts(engine) == 0
    assert answer(app, "1.4 GB") == 200  # the lock is free again


def test_writers_waiting_their_turn_hold_no_thread(sqlite_app, monkeypatch):
    """Many candidates answering at once on one worker (one event loop) with a small
    thread pool: a writer waiting for its turn must not hold a thread, or the writer in
    front of it could never get one to commit (each waited out its timeout: 503s)."""
    import anyio
    import httpx2

    app, engine = sqlite_app
    monkeypatch.setattr(db, "SQLITE_WRITE_WAIT_S", 5)

    async def many() -> list[int]:
        anyio.to_thread.current_default_thread_limiter().total_tokens = 3
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://testserver") as http:
            await http.get("/")
            token = http.cookies["csrftoken"]
            responses = await asyncio.gather(*(
                http.post(ANSWER, data={"csrf_token": token, "answer": f"{n + 1} GB"})
                for n in range(24)))
            return [r.status_code for r in responses]

    with ThreadPoolExecutor(max_workers=1) as thread:  # a loop of its own (e2e left one)
        statuses = thread.submit(asyncio.run, many()).result()
    assert statuses == [200] * 24
    assert attempts(engine) == 24
