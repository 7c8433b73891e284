"""/experiments pages, in every language."""

from __future__ import annotations

import pytest

from app.config import ROOT
from app.experiments.records import experiments
from app.i18n import LANGUAGES

NAMES = sorted(experiments(ROOT / "question_bank"))


@pytest.mark.parametrize("lang", LANGUAGES)
def test_index_lists_every_experiment(client, lang):
    page = client.get(f"/experiments?lang={lang}")
    assert page.status_code == 200 and f'<html lang="{lang}">' in page.text
    assert all(f"/experiments/{name}\"" in page.text for name in NAMES)


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("name", NAMES)
def test_detail_shows_code_results_and_versions(client, name, lang):
    page = client.get(f"/experiments/{name}?lang={lang}")
    assert page.status_code == 200
    assert "2.13.0" in page.text and "def " in page.text
    assert f"question_bank/experiments/{name}.py" in page.text
    assert "<details>" in page.text


def test_gloo_page_shows_exact_errors(client):
    page = client.get("/experiments/gloo-reduce-ops")
    assert "Cannot use ReduceOp.PREMUL_SUM with Gloo" in page.text


def test_unknown_experiment_is_404(client):
    assert client.get("/experiments/nope").status_code == 404
