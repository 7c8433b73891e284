"""Production settings (SECURITY.md item 29): importing the app refuses a missing,
placeholder or short secret key and a wildcard host list, with a message saying what to
set; a good configuration starts without debug."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from app.config import ROOT

GOOD_SECRET = "x" * 20 + "Z9" * 10
GOOD = {"RINGSIDE_ENV": "production", "RINGSIDE_SECRET_KEY": GOOD_SECRET,
        "RINGSIDE_ALLOWED_HOSTS": '["ringside.example"]',
        "RINGSIDE_DATABASE_URL": "sqlite:///:memory:"}


def import_app(**overrides: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RINGSIDE_")}
    env.update({k: v for k, v in {**GOOD, **overrides}.items() if v is not None})
    return subprocess.run(
        [sys.executable, "-c", "import app.main as m; print('debug', m.app.debug)"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=False)


@pytest.mark.parametrize(("overrides", "message"), [
    ({"RINGSIDE_SECRET_KEY": None}, "RINGSIDE_SECRET_KEY must be set"),
    ({"RINGSIDE_SECRET_KEY": "changeme"}, "RINGSIDE_SECRET_KEY must be set"),
    ({"RINGSIDE_SECRET_KEY": "short-but-not-a-placeholder"}, "at least 32 characters"),
    ({"RINGSIDE_ALLOWED_HOSTS": '["*"]'}, "RINGSIDE_ALLOWED_HOSTS must list"),
    ({"RINGSIDE_ALLOWED_HOSTS": None}, "RINGSIDE_ALLOWED_HOSTS must list"),
])
def test_production_refuses_to_start(overrides, message):
    result = import_app(**overrides)
    assert result.returncode != 0
    assert message in result.stderr
    assert GOOD_SECRET not in result.stderr


def test_production_starts_without_debug():
    result = import_app()
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "debug False"


def test_development_needs_no_secret():
    result = import_app(RINGSIDE_ENV=None, RINGSIDE_SECRET_KEY=None,
                        RINGSIDE_ALLOWED_HOSTS=None)
    assert result.returncode == 0, result.stderr
