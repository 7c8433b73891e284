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


def test_coverage_of_the_full_bank(capsys):
    """Issue #8's coverage, read from `ringside bank stats --json` as a newcomer would."""
    assert cli_main(["bank", "stats", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["total"] >= 190 and stats["problems"] == 0
    assert len(stats["by_topic"]) == 15 and min(stats["by_topic"].values()) >= 8
    for topic in ("long-context", "moe", "low-precision"):  # issue #19's frontier topics
        assert stats["by_topic"][topic] >= 12, topic
    assert min(stats["by_seniority"].values()) >= 40
    for level, difficulties in stats["difficulty_by_seniority"].items():
        assert min(difficulties.values()) >= 3, level  # difficulty 1-3 spread in each level
    kinds = stats["by_kind"]
    assert kinds["numeric"] >= 45 and kinds["open"] >= 35
    assert kinds["single_choice"] + kinds["multi_choice"] >= 50
    assert stats["with_variants"] > kinds["numeric"] / 2  # most numeric ones redraw numbers
    # Every question: 3 spoken follow-ups with model answers (bank check requires the
    # answers and key points) and 2 linked questions to go deeper.
    assert stats["min_follow_ups"] >= 3 and stats["min_linked_follow_ups"] >= 2


def test_every_question_was_reviewed_for_facts_and_each_translation(result):
    for bank_file in result.files:
        scopes = {review.scope for review in bank_file.question.reviewed}
        assert scopes == {"technical", "fr", "tr", "zh"}, bank_file.path


def test_numeric_answers_and_numeric_choices_come_from_the_calculator(result):
    for bank_file in result.files:
        question = bank_file.question
        if question.kind == "numeric":
            assert question.answer.calculator and question.answer.mistakes, question.id
        if any(choice.value is not None for choice in question.choices):
            assert question.answer is not None, question.id  # the correct value is computed


def test_the_subjects_ringside_is_named_for_cite_recorded_runs(capsys):
    """All-reduce traffic, DDP, bucketing and ZeRO memory rest on recordings, not only on
    the calculator: enough questions cite one, in each of those topics."""
    assert cli_main(["bank", "stats", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["with_evidence"] >= 60
    for topic in ("collectives", "data-parallel", "bucketing", "zero-fsdp", "memory",
                  "tensor-parallel", "pipeline-parallel"):
        assert stats["evidence_by_topic"][topic] >= 3, topic
    for experiment in ("collective-traffic", "zero-memory", "tensor-parallel-collectives",
                       "pipeline-schedules", "ddp-communication-volume"):
        assert stats["experiments_cited"].get(experiment, 0) >= 1, experiment
