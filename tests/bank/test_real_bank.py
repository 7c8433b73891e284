"""The real bank in question_bank/: valid, canonical, and large enough."""

from __future__ import annotations

import json

import pytest

from app.bank.checks import check_bank
from app.bank.loader import to_yaml
from app.bank.schema import LANGUAGES
from app.cli import main as cli_main
from app.config import ROOT

BANK = ROOT / "question_bank"


@pytest.fixture(scope="module")
def result():
    return check_bank(BANK)


def test_bank_check_passes(result):
    assert [str(f) for f in result.findings] == []


def test_files_are_in_canonical_form(result):
    """So that load then export reproduces them byte for byte (`ringside bank fmt`)."""
    for bank_file in result.files:
        assert bank_file.path.read_text(encoding="utf-8") == to_yaml(bank_file.question), (
            f"{bank_file.path} is not canonical: run `ringside bank fmt`")


def test_stats_json(capsys, result):
    assert cli_main(["bank", "stats", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["total"] == len(result.files)
    assert stats["languages"] == {lang: stats["total"] for lang in LANGUAGES}
    assert sum(stats["by_topic"].values()) == stats["total"]
    assert stats["min_follow_ups"] >= 2
