"""Database plumbing: the declarative base, engines and sessions.

SQLite is the embedded default (foreign keys on, WAL); PostgreSQL goes through
psycopg 3 with the same code. A request gets one session and commits once.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from functools import cache
from typing import Any

from fastapi import HTTPException
from sqlalchemy import JSON, DateTime, Engine, MetaData, create_engine, event
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, sessionmaker
from starlette.concurrency import run_in_threadpool
from starlette.requests import HTTPConnection, Request

from app.config import get_settings
from app.i18n import _

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def utcnow() -> datetime:
    return datetime.now(UTC)


def as_utc(moment: datetime) -> datetime:
    """A stored moment in UTC. SQLite hands datetimes back without their time zone (every
    one is stored in UTC); PostgreSQL in the session's zone, which FSRS refuses."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map = {  # noqa: RUF012 - read by SQLAlchemy at class creation
        dict[str, Any]: JSON, list[Any]: JSON, datetime: DateTime(timezone=True)}


class Timestamped:
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


# Per worker process: 4 workers hold at most 4 × 20 PostgreSQL connections (default
# max_connections is 100); requests beyond wait for a connection rather than open one.
POOL_SIZE = 12
POOL_OVERFLOW = 8


def make_engine(url: str) -> Engine:
    """An engine for ``url``; SQLite connections get foreign keys and WAL."""
    if url.startswith("sqlite"):
        # Writers queue for the lock (BEGIN IMMEDIATE, see get_session) up to 30 s.
        # A pool as large as the requests a worker runs at once: a connection opened past
        # the pool is closed again when returned, and opening one (with its pragmas) costs
        # more than the statements of a page.
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30},
                               pool_size=POOL_SIZE, max_overflow=POOL_OVERFLOW)

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA journal_mode=WAL")
            # In WAL mode NORMAL never corrupts the database; a commit is durable once the
            # WAL is checkpointed, so a power cut (not a crash of Ringside) can lose the
            # last moments of answers. FULL would fsync every answer a candidate saves.
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.close()

        return engine
    return create_engine(url, pool_pre_ping=True, pool_size=POOL_SIZE,
                         max_overflow=POOL_OVERFLOW)


@cache
def engine() -> Engine:
    return make_engine(get_settings().database_url)


@cache
def session_factory() -> sessionmaker[Session]:
    return sessionmaker(bind=engine(), expire_on_commit=False)


def request_sessions(connection: HTTPConnection) -> sessionmaker[Session]:
    """The sessions of the app serving ``connection``: the deployment database, or the
    one a test or a benchmark binds to that app (``app.state.session_factory``)."""
    bound = getattr(connection.app.state, "session_factory", None)
    return bound if bound is not None else session_factory()


# SQLite has one writer at a time. A worker's writing requests queue for their turn on
# its event loop (waiting there holds no thread: threads blocked on a lock would starve
# the thread pool that the writer holding it needs to commit), then take the database's
# write lock at their first statement.
_WRITER_TURNS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
    weakref.WeakKeyDictionary())
# Writers of other event loops in the same process (tests run several) wait here.
_SQLITE_WRITER = threading.Lock()
SQLITE_WRITE_WAIT_S = 30


def _too_busy() -> HTTPException:
    return HTTPException(503, _("Ringside is very busy right now. Please try again in a "
                                "moment."), headers={"Retry-After": "5"})


async def _writer_turn() -> asyncio.Lock:
    loop = asyncio.get_running_loop()
    turn = _WRITER_TURNS.get(loop)
    if turn is None:
        turn = _WRITER_TURNS[loop] = asyncio.Lock()
    try:
        await asyncio.wait_for(turn.acquire(), SQLITE_WRITE_WAIT_S)
    except TimeoutError:
        raise _too_busy() from None
    return turn


async def get_session(request: Request) -> AsyncIterator[Session]:
    """FastAPI dependency: one session per request, committed once at the end.

    It runs on the event loop and costs no thread of its own: the session opens a
    connection at its first statement, in the route's thread, and the commit (or the
    rollback) goes to a thread only when a statement ran.

    On SQLite a request that may write (POST and the like) takes the write lock at its
    first statement (``BEGIN IMMEDIATE``, see :func:`_begin_sqlite_writer`): a
    transaction that read first and wrote later would fail with "database is locked" as
    soon as another request committed in between, instead of waiting its turn.
    """
    session = request_sessions(request)()
    turn = None
    if request.method not in SAFE_METHODS and session.get_bind().dialect.name == "sqlite":
        turn = await _writer_turn()
        session.info["sqlite_writer"] = True
    request.state.db = session  # for what the page template still asks (due count)
    try:
        yield session
        if session.in_transaction():
            await run_in_threadpool(session.commit)
    except BaseException:
        if session.in_transaction():
            await run_in_threadpool(session.rollback)
        raise
    finally:
        # An error page rendered after this must not reuse the session (and its lock).
        request.state.db = None
        session.info.pop("sqlite_writer", None)
        try:
            if session.in_transaction():
                await run_in_threadpool(session.close)
            else:
                session.close()
        finally:  # even when the client went away meanwhile
            if session.info.pop("sqlite_locked", False):
                _SQLITE_WRITER.release()
            if turn is not None:
                turn.release()


@event.listens_for(Session, "after_begin")
def _begin_sqlite_writer(session: Session, _transaction: Any, connection: Any) -> None:
    """A writing request's first statement on SQLite: after its turn in the worker, the
    process's lock (SQLite's own busy wait polls with sleeps, so under load a writer could
    wait out its timeout while others got the lock in between), then the write lock."""
    if not session.info.get("sqlite_writer"):
        return
    if not session.info.get("sqlite_locked"):
        if not _SQLITE_WRITER.acquire(timeout=SQLITE_WRITE_WAIT_S):
            raise _too_busy()
        session.info["sqlite_locked"] = True
    connection.exec_driver_sql("BEGIN IMMEDIATE")
