"""A worker fills its caches before it serves: templates compiled, catalogs read, every
live question parsed; and warming up never stops it from starting."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import sessionmaker

from app import i18n, warmup
from app.lru import LRU
from app.questions import service
from app.web.templating import templates


@pytest.fixture
def cold(monkeypatch):
    """Empty caches, as in a new worker."""
    monkeypatch.setattr(service, "_PARSED", LRU(service._PARSED.size))
    templates.env.cache.clear()
    i18n.translations.cache_clear()


def test_warm_up_fills_the_caches(cold, web_engine, monkeypatch):
    monkeypatch.setattr(warmup, "session_factory", lambda: sessionmaker(bind=web_engine))
    figures = warmup.warm_up()
    assert figures["questions"] == len(service._PARSED) >= 150
    assert figures["templates"] == len(templates.env.list_templates())
    assert len(templates.env.cache) == figures["templates"]
    assert i18n.translations.cache_info().currsize == len(i18n.LANGUAGES)


def test_a_database_not_migrated_does_not_stop_the_warm_up(cold, tmp_path, monkeypatch):
    from app.db import make_engine

    empty = make_engine(f"sqlite:///{tmp_path / 'empty.db'}")
    monkeypatch.setattr(warmup, "session_factory", lambda: sessionmaker(bind=empty))
    figures = warmup.warm_up()
    assert "questions" not in figures and figures["templates"] > 0


@pytest.mark.parametrize(("env", "setting", "warmed"), [
    ("production", None, True), ("development", None, False),
    ("development", "true", True), ("production", "false", False)])
def test_the_app_warms_up_at_start_in_production(env, setting, warmed, monkeypatch):
    from app.config import get_settings
    from app.main import create_app

    calls = []
    monkeypatch.setattr(warmup, "warm_up", lambda: calls.append(1))
    monkeypatch.setenv("RINGSIDE_ENV", env)
    monkeypatch.setenv("RINGSIDE_SECRET_KEY", "s" * 48)
    monkeypatch.setenv("RINGSIDE_ALLOWED_HOSTS", '["testserver"]')
    if setting is None:
        monkeypatch.delenv("RINGSIDE_WARM_UP", raising=False)
    else:
        monkeypatch.setenv("RINGSIDE_WARM_UP", setting)
    get_settings.cache_clear()
    try:
        with TestClient(create_app()) as client:
            client.get("/healthz")
    finally:
        get_settings.cache_clear()
    assert calls == ([1] if warmed else [])
