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
    """The bank at 300 (issue #19), read from `ringside bank stats --json` as a newcomer
    would: every topic at least 12, each seniority at least 90, each kind at least 60."""
    assert cli_main(["bank", "stats", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["total"] >= 300 and stats["problems"] == 0
    assert len(stats["by_topic"]) == 15 and min(stats["by_topic"].values()) >= 12
    assert min(stats["by_seniority"].values()) >= 90
    for level, difficulties in stats["difficulty_by_seniority"].items():
        assert min(difficulties.values()) >= 3, level  # difficulty 1-3 spread in each level
    kinds = stats["by_kind"]
    assert kinds["numeric"] >= 60 and kinds["open"] >= 60
    assert kinds["single_choice"] + kinds["multi_choice"] >= 60
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


# Issue #19's subjects, each a set of topics or tags: a senior candidate who practises
# only senior questions must meet every one of them.
SENIOR_AREAS = {
    "low precision": ({"low-precision"}, set()),
    "in-network and topology-aware collectives": (set(), {
        "topology", "nvls", "sharp", "nvls-sharp", "rail-optimized", "pxn",
        "hierarchical-all-reduce", "adaptive-routing"}),
    "sequence and context parallelism": ({"long-context"}, set()),
    "mixture of experts": ({"moe"}, set()),
    "pipeline schedules beyond 1F1B": (set(), {"interleaved", "interleaved-1f1b",
                                               "zero-bubble", "dualpipe"}),
    "overlap in tensor parallelism and sharded data parallelism": (set(), {
        "async-tp", "collective-matmul", "distributed-optimizer", "fsdp2"}),
    "compilers": (set(), {"torch-compile", "compiled-autograd"}),
    "reliability at scale": ({"fault-tolerance"}, set()),
    "data loading": (set(), {"data-loading", "input-pipeline", "data-loader"}),
}


def test_a_senior_candidate_meets_every_subject_of_the_bank(result):
    senior = [f.question for f in result.files if f.question.seniority == "senior"]
    for area, (topics, tags) in SENIOR_AREAS.items():
        found = [q.id for q in senior if q.topic in topics or tags & set(q.tags)]
        assert len(found) >= 2, (area, found)


def test_senior_numeric_questions_name_every_way_of_getting_them_wrong(result):
    """A senior numeric question combines constraints: each has its named mistakes."""
    for f in result.files:
        q = f.question
        if q.seniority == "senior" and q.kind == "numeric":
            assert len(q.answer.mistakes) >= 2, q.id  # one per constraint, at least
