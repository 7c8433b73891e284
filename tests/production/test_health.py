"""``/healthz`` (the process answers) and ``/readyz`` (database, migrations, bank)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from app.db import make_engine
from tests.conftest import client_on, migrate


def test_healthz(client):
    response = client.get("/healthz")
    assert response.status_code == 200 and response.json() == {"status": "ok"}
    assert response.headers["cache-control"] == "no-store"


def test_ready_with_the_bank_loaded(client):
    response = client.get("/readyz")
    assert response.status_code == 200
    assert response.json() == {"status": "ready", "checks": {
        "database": "ok", "migrations": "ok", "bank": "ok"}}


@pytest.fixture
def fresh_client(empty_engine: Engine) -> Iterator[TestClient]:
    yield from client_on(empty_engine)


def test_not_ready_before_migrations_then_before_the_bank(fresh_client, empty_engine):
    body = fresh_client.get("/readyz").json()
    assert body["status"] == "not ready"
    assert body["checks"]["migrations"].startswith("at nothing; head is ")
    migrate(empty_engine)
    migrate(empty_engine, "-1", down=True)
    body = fresh_client.get("/readyz").json()
    assert "run: ringside db upgrade" in body["checks"]["migrations"]
    migrate(empty_engine)
    response = fresh_client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["checks"] == {"database": "ok", "migrations": "ok",
                                         "bank": "no question loaded (run: ringside bank load)"}


def test_not_ready_when_the_database_is_unreachable(tmp_path: Path):
    engine = make_engine(f"sqlite:///{tmp_path / 'missing-dir' / 'x.db'}")
    for test_client in client_on(engine):
        response = test_client.get("/readyz")
        assert response.status_code == 503
        assert response.json()["checks"] == {"database": "unreachable: OperationalError"}
        assert test_client.get("/healthz").status_code == 200
