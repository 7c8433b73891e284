"""The recorded torch pipeline schedules against the pipeline calculator and its picture.

`question_bank/experiments/pipeline-schedules.json` holds, for GPipe, 1F1B and interleaved
1F1B, the order in which each rank really ran its forwards and backwards, and the
timeline derived from that order with one slot per forward and per backward (the
convention of `app/calculator/pipeline.py` and `app/pictures/pipeline.py`). These tests
check that the calculator's bubble and the picture's simulated order and timeline are
what torch does, and pin down the places where torch differs from the calculator.
"""

from __future__ import annotations

import json
import math

import pytest

from app.calculator import InputError, run
from app.config import ROOT
from app.pictures import pipeline

RECORD = json.loads((ROOT / "question_bank" / "experiments" / "pipeline-schedules.json")
                    .read_text(encoding="utf-8"))
SUMMARY = RECORD["summary"]
RAN = sorted(k for k, v in SUMMARY.items() if "error" not in v)
# The configurations the calculator accepts: micro-batches a multiple of the ranks for
# the interleaved schedule (Megatron-LM's rule), everything else.
COMPARABLE = [k for k in RAN if SUMMARY[k]["schedule"] != "interleaved"
              or SUMMARY[k]["microbatches"] % SUMMARY[k]["stages"] == 0]


def op(action: str, ranks: int) -> pipeline.Op:
    """torch's '5B2' (stage 5, backward, micro-batch 2) as the picture's ('B', 2, chunk)."""
    kind = "F" if "F" in action else "B"
    stage, mb = action.split(kind)
    return kind, int(mb), int(stage) // ranks  # virtual stage s sits on rank s mod p


def params(case: dict) -> dict:
    return {"stages": case["stages"], "microbatches": case["microbatches"],
            "schedule": case["schedule"], "virtual_stages": case["stages_per_rank"]}


def test_the_grid_ran_and_computed_the_right_gradients():
    grid = {(s, p, m) for s in ("gpipe", "1f1b", "interleaved") for p in (2, 4)
            for m in (4, 8)}
    assert grid <= {(v["schedule"], v["stages"], v["microbatches"]) for v in
                    (SUMMARY[k] for k in RAN)}
    for key in RAN:
        case = SUMMARY[key]
        assert case["grads_match_reference"], key  # the schedule trained the whole model
        assert case["same_order_every_step"], key  # the order is the schedule's, not luck
        assert case["hooks_inside_calls"], key  # the wrapped calls are the real compute


@pytest.mark.parametrize("key", RAN)
def test_derived_timeline_keeps_each_ranks_executed_order(key):
    case = SUMMARY[key]
    for row, executed in zip(case["timeline"], case["executed_order"], strict=True):
        assert len(row) == case["slots_per_stage"]
        assert [a for a in row if a is not None] == executed
    assert case["idle_slots_per_stage"] == [row.count(None) for row in case["timeline"]]


@pytest.mark.parametrize("key", COMPARABLE)
def test_calculator_bubble_is_the_recorded_bubble(key):
    case = SUMMARY[key]
    out = run("pipeline-bubble", **params(case))
    slots = case["slots_per_stage"]
    for idle in case["idle_slots_per_stage"]:  # every stage is idle equally long
        assert math.isclose(idle / slots, out["bubble_fraction_of_total"])
        assert math.isclose(idle / (slots - idle), out["bubble_over_ideal"])


@pytest.mark.parametrize("key", COMPARABLE)
def test_picture_simulates_the_order_torch_executes(key):
    case = SUMMARY[key]
    p, m, v = case["stages"], case["microbatches"], case["stages_per_rank"]
    recorded = [[op(a, p) for a in row] for row in case["executed_order"]]
    assert pipeline.stage_orders(p, m, case["schedule"], v) == recorded
    timeline = [[None if a is None else op(a, p) for a in row] for row in case["timeline"]]
    assert pipeline.simulate(p, m, case["schedule"], v) == timeline


# The interleaved in-flight count p·(1 + (p−1)/(p·v)) is capped by the m micro-batches
# there are (with m = p it would be 5.5 of 4 for p = m = 4, v = 2): torch's warm-up, like
# the picture's, stops at v·m chunks. This recording found that bug; the cases pin it.
INFLIGHT_CASES = COMPARABLE


def first_stage_stash(case: dict) -> float:
    """The most micro-batch chunks rank 0 held in `fwd_cache`, in whole stages."""
    return case["max_stashed_chunks"][0] / case["stages_per_rank"]


@pytest.mark.parametrize("key", INFLIGHT_CASES)
def test_calculator_inflight_is_what_the_first_stage_stashes(key):
    case = SUMMARY[key]
    out = run("pipeline-bubble", **params(case))
    assert math.isclose(first_stage_stash(case), out["inflight_microbatches"])


def test_interleaved_inflight_is_capped_by_the_microbatches():
    """What torch holds: p + (p−1)/v micro-batches, but never more than the m there are."""
    cases = [SUMMARY[k] for k in COMPARABLE if SUMMARY[k]["schedule"] == "interleaved"]
    assert any(c["microbatches"] == c["stages"] for c in cases)
    for case in cases:
        p, m, v = case["stages"], case["microbatches"], case["stages_per_rank"]
        assert math.isclose(first_stage_stash(case), min(p + (p - 1) / v, m))


class TestDocumentedDifferences:
    def test_torch_1f1b_refuses_fewer_microbatches_than_stages(self):
        case = SUMMARY["1f1b_p4_m2"]
        assert case["error"] == {"type": "ValueError", "message": "Number of microbatches "
                                 "(2) must be greater than or equal to the number of "
                                 "stages (4)."}
        # The calculator and the picture still model it: a shorter warm-up, as in GPipe.
        out = run("pipeline-bubble", stages=4, microbatches=2, schedule="1f1b")
        assert out["inflight_microbatches"] == 2

    def test_torch_interleaves_microbatch_counts_the_calculator_refuses(self):
        """torch only needs m to be a multiple of its rounds, max(1, m // p); Megatron-LM
        and the calculator need a multiple of p. With m = 6 on 4 ranks torch runs one round
        of 6 micro-batches per chunk, and the idle time still is 2(p−1) slots per stage."""
        case = SUMMARY["interleaved_p4_m6"]
        p, m, v = case["stages"], case["microbatches"], case["stages_per_rank"]
        with pytest.raises(InputError):
            run("pipeline-bubble", **params(case))
        assert case["slots_per_stage"] == 2 * (v * m + p - 1)
        assert case["idle_slots_per_stage"] == [2 * (p - 1)] * p
        # One round: rank 0 runs every forward before its first backward, like GPipe.
        assert case["max_stashed_chunks"][0] == v * m

    def test_torch_1f1b_plan_misnumbers_the_last_stage(self):
        """Schedule1F1B.pipeline_order gives the last stage micro-batches 1..m, not
        0..m−1; what runs is 0..m−1. The plans of the other stages are what runs."""
        for key in (k for k in RAN if SUMMARY[k]["schedule"] == "1f1b"):
            case = SUMMARY[key]
            p, m = case["stages"], case["microbatches"]
            last = [a for a in case["pipeline_order"][-1] if "REDUCE" not in a]
            assert last[0] == f"{p - 1}F1" and f"{p - 1}F{m}" in last, key
            assert case["executed_order"][-1][0] == f"{p - 1}F0", key
            assert case["pipeline_order_compute_matches_executed"] == [True] * (p - 1) + \
                [False], key

    def test_torch_interleaved_plan_pads_the_cool_down(self):
        """ScheduleInterleaved1F1B's plan puts an idle step before every cool-down
        backward (and pads the warm-up), so it shows more idle steps than the stage waits for
        in slot time."""
        for key in (k for k in RAN if SUMMARY[k]["schedule"] == "interleaved"):
            case = SUMMARY[key]
            assert all(case["pipeline_order_compute_matches_executed"]), key
            for plan_idle, idle in zip(case["pipeline_order_idle"],
                                       case["idle_slots_per_stage"], strict=True):
                assert plan_idle > idle, key
