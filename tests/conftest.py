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
from sqlalchemy import Engine, text
from sqlalchemy.orm import Session

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


@pytest.fixture(scope="session")
def client() -> Iterator[TestClient]:
    from app.main import app

    with TestClient(app, raise_server_exceptions=False) as test_client:
        yield test_client


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
