"""The geometry behind the pictures is the algorithm the calculator costs: simulated here.

Ring, tree and recursive doubling move data so that every rank ends with every rank's
contribution; the pipeline schedules run each operation once, after what it depends on,
and leave every stage idle for exactly the calculator's bubble fraction.
"""

from __future__ import annotations

import math

import pytest

from app.calculator import run
from app.pictures import collective, pipeline


def ring_contributions(op: str, n: int) -> list[list[set[int]]]:
    """Whose contributions each rank holds, chunk by chunk, after the ring's steps."""
    held = [[{rank} if op != "all-gather" or chunk == rank else set() for chunk in range(n)]
            for rank in range(n)]
    for _phase, moves, _size in collective.step_plan(op, "ring", n, 1.0):
        arriving = [(dst, chunk, set(held[src][chunk])) for src, dst, chunk in moves]
        for dst, chunk, data in arriving:  # the sends of a step happen at once
            held[dst][chunk] |= data  # reduce (adds) and copy (all-gather) alike
    return held


@pytest.mark.parametrize("n", range(2, 9))
def test_ring_allreduce_gives_every_rank_every_contribution(n):
    plan = collective.ring_transfers("all-reduce", n)
    assert len(plan) == 2 * (n - 1) == run("collective", op="all-reduce", world_size=n,
                                           message_bytes=1)["steps"]
    for _phase, moves in plan:  # each rank sends exactly one chunk, to the next rank
        assert sorted(src for src, _dst, _c in moves) == list(range(n))
        assert all(dst == (src + 1) % n for src, dst, _c in moves)
    held = ring_contributions("all-reduce", n)
    assert all(chunk == set(range(n)) for rank in held for chunk in rank)


@pytest.mark.parametrize("n", range(2, 9))
def test_ring_reduce_scatter_and_all_gather_alone(n):
    held = ring_contributions("reduce-scatter", n)
    assert all(held[rank][rank] == set(range(n)) for rank in range(n))  # rank i owns chunk i
    held = ring_contributions("all-gather", n)
    assert all(held[rank][chunk] == {chunk} for rank in range(n) for chunk in range(n))


@pytest.mark.parametrize("n", range(2, 9))
def test_tree_and_doubling_reach_everyone_in_the_calculators_steps(n):
    tree = collective.tree_transfers(n)
    assert len(tree) == run("collective", op="all-reduce", algorithm="tree", world_size=n,
                            message_bytes=1)["steps"]
    held = [{rank} for rank in range(n)]
    for phase, moves in tree:
        for src, dst, _c in moves:
            held[dst] = held[dst] | held[src] if phase == "reduce" else set(held[src])
        if phase == "reduce" and moves == tree[len(tree) // 2 - 1][1]:
            assert held[0] == set(range(n))  # the root has everything after the reduce
    assert all(h == set(range(n)) for h in held)
    if n & (n - 1) == 0:
        doubling = collective.doubling_transfers(n)
        assert len(doubling) == run("collective", op="all-reduce", algorithm="recursive-doubling",
                                    world_size=n, message_bytes=1)["steps"]
        held = [{rank} for rank in range(n)]
        for _phase, pairs in doubling:
            for a, b, _k in pairs:
                held[a] = held[b] = held[a] | held[b]
        assert all(h == set(range(n)) for h in held)


def test_world_sizes_cover_2_to_1024_and_the_chosen_size():
    assert collective.world_sizes(8) == [2 ** k for k in range(1, 11)]
    assert collective.world_sizes(3000)[-1] == 4096


def test_winners_are_runs_of_the_lowest_value():
    runs = collective.winners([2, 4, 8, 16], {"ring": [1, 2, 3, 4], "tree": [2, 2, 1, 1]})
    assert runs == [("ring", 2, 4), ("tree", 8, 16)]


CASES = [(p, m, "gpipe", 1) for p, m in [(1, 1), (2, 1), (4, 8), (4, 2), (8, 32)]] + \
    [(p, m, "1f1b", 1) for p, m in [(1, 3), (3, 1), (4, 8), (4, 3), (8, 32), (16, 128)]] + \
    [(p, m, "interleaved", v) for p, m, v in [(2, 2, 2), (4, 8, 2), (4, 16, 4), (8, 32, 2),
                                               (8, 16, 4), (4, 8, 1), (3, 6, 3)]]


@pytest.mark.parametrize(("p", "m", "schedule", "v"), CASES)
def test_simulated_schedule_has_the_calculators_bubble(p, m, schedule, v):
    grid = pipeline.simulate(p, m, schedule, v)
    outputs = run("pipeline-bubble", stages=p, microbatches=m, schedule=schedule,
                  virtual_stages=v)
    length = len(grid[0])
    assert length == 2 * (v * m + p - 1)
    for row in grid:
        ops = [op for op in row if op is not None]
        assert len(ops) == 2 * m * v == len(set(ops))  # each forward and backward once
        idle = row.count(None)
        assert idle == 2 * (p - 1)
        assert math.isclose(idle / length, outputs["bubble_fraction_of_total"])
    finished = {}
    for t in range(length):
        for d, row in enumerate(grid):
            if row[t] is not None:
                finished[(row[t], d)] = t
    for (op, d), t in finished.items():  # a forward follows the previous virtual stage's
        kind, j, chunk = op
        stage = chunk * p + d
        if kind == "F" and stage > 0:
            before = (stage - 1) % p, (stage - 1) // p
            assert finished[(("F", j, before[1]), before[0])] < t
        if kind == "B" and stage < p * v - 1:
            after = (stage + 1) % p, (stage + 1) // p
            assert finished[(("B", j, after[1]), after[0])] < t


def test_long_busy_stretches_are_cut_and_counted():
    grid = pipeline.simulate(16, 128, "1f1b")
    drawn = pipeline.columns(grid)
    slots = sum(b - a + 1 for _kind, a, b in drawn)
    assert slots == len(grid[0])
    cuts = [(a, b) for kind, a, b in drawn if kind == "cut"]
    assert cuts
    assert all(all(row[t] is not None for row in grid for t in range(a, b + 1)) for a, b in cuts)
    assert pipeline.columns(pipeline.simulate(4, 8, "1f1b")) == [
        ("slot", t, t) for t in range(22)]
