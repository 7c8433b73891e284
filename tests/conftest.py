"""Shared fixtures: the HTTP client, and migrated databases (SQLite, and PostgreSQL when
RINGSIDE_TEST_DATABASE_URL is set)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from alembic import command
from alembic.config import Config
from fastapi.testclient import TestClient
from sqlalchemy import Engine, create_engine, make_url, text
from sqlalchemy.orm import Session, sessionmaker

from app.config import ROOT
from app.db import make_engine

POSTGRES_URL = os.environ.get("RINGSIDE_TEST_DATABASE_URL")
BACKENDS = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgres", id="postgres", marks=[
        pytest.mark.postgres,
        pytest.mark.skipif(not POSTGRES_URL, reason="RINGSIDE_TEST_DATABASE_URL is not set"),
    ]),
]


def alembic_config() -> Config:
    return Config(toml_file=ROOT / "pyproject.toml")


def migrate(engine: Engine, revision: str = "head", *, down: bool = False) -> None:
    with engine.begin() as connection:
        config = alembic_config()
        config.attributes["connection"] = connection
        (command.downgrade if down else command.upgrade)(config, revision)


def reset_postgres(engine: Engine) -> None:
    """Start PostgreSQL tests from an empty public schema."""
    with engine.begin() as connection:
        connection.execute(text("DROP SCHEMA public CASCADE"))
        connection.execute(text("CREATE SCHEMA public"))


def fresh_engine(backend: str, tmp_path: Path) -> Engine:
    if backend == "sqlite":
        return make_engine(f"sqlite:///{tmp_path / 'test.db'}")
    engine = make_engine(POSTGRES_URL or "")
    reset_postgres(engine)
    return engine


@pytest.fixture(params=BACKENDS)
def empty_engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    """An engine on an empty database of each backend."""
    engine = fresh_engine(request.param, tmp_path)
    yield engine
    engine.dispose()


@pytest.fixture
def engine(empty_engine: Engine) -> Engine:
    """A database migrated to head."""
    migrate(empty_engine)
    return empty_engine


@pytest.fixture
def session(engine: Engine) -> Iterator[Session]:
    with Session(engine, expire_on_commit=False) as db_session:
        yield db_session


def postgres_database(suffix: str, *, create: bool = True) -> str:
    """A new, empty PostgreSQL database ``<test database>_<suffix>`` (dropped first if it
    is there); with ``create=False`` only dropped. Returns its URL."""
    base = make_url(POSTGRES_URL or "")
    name = f"{base.database}_{suffix}"
    admin = create_engine(base.set(database="postgres"), isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        if create:
            connection.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return base.set(database=name).render_as_string(hide_password=False)


def _web_database_url(backend: str, directory: Path) -> str:
    """A database of its own for the HTTP tests (the function-scoped ones reset theirs)."""
    if backend == "sqlite":
        return f"sqlite:///{directory / 'web.db'}"
    return postgres_database("web")


def client_on(engine: Engine) -> Iterator[TestClient]:
    """A fresh app whose sessions are bound to ``engine`` (not the shared web database)."""
    from app.main import create_app

    app = create_app()
    app.state.session_factory = sessionmaker(bind=engine, expire_on_commit=False)
    with TestClient(app, raise_server_exceptions=False) as test_client:
        yield test_client


def app_routes() -> list:
    """Every route of the app, those of included routers too (FastAPI wraps them)."""
    from app.main import app

    found = []
    for route in app.routes:
        found += route.original_router.routes if hasattr(route, "original_router") else [route]
    return found


@pytest.fixture(scope="session", params=BACKENDS)
def web_engine(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
               ) -> Iterator[Engine]:
    """A migrated database with the real bank loaded, shared by the HTTP tests."""
    from app.bank.checks import check_bank
    from app.bank.loader import load_bank

    engine = make_engine(_web_database_url(request.param, tmp_path_factory.mktemp("web")))
    migrate(engine)
    result = check_bank(ROOT / "question_bank")
    with Session(engine) as session, session.begin():
        load_bank(session, result.files)
    yield engine
    engine.dispose()


@pytest.fixture(scope="session")
def client(web_engine: Engine) -> Iterator[TestClient]:
    """The real application, its sessions bound to the test database."""
    from app.main import app

    app.state.session_factory = sessionmaker(bind=web_engine, expire_on_commit=False)
    with TestClient(app, raise_server_exceptions=False) as test_client:
        yield test_client
    del app.state.session_factory


def csrf_token(client: TestClient, path: str = "/") -> str:
    """The token a page hands to its forms (and the cookie that goes with it)."""
    client.get(path)
    return client.cookies.get("csrftoken") or ""
