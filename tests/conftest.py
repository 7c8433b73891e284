"""Shared fixtures: an HTTP client on the real application."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient


@pytest.fixture(scope="session")
def client() -> TestClient:
    from app.main import app

    with TestClient(app, raise_server_exceptions=False) as test_client:
        yield test_client
