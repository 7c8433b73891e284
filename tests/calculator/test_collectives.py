"""The collective calculator against the figures and formulas of its sources."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.calculator import InputError, get, run
from app.calculator.collectives import POWER_OF_TWO_ONLY, SUPPORTED


class TestRingAllReduce:
    def test_eight_ranks_of_800_mb_send_1_4_gb_in_14_steps(self):
        """The interview staple: 2(N−1)/N × 800 MB = 1400 MB per rank, 2(N−1) steps."""
        out = run("collective", op="all-reduce", world_size=8, message_bytes="800 MB")
        assert out["steps"] == 14
        assert out["bytes_sent_per_rank"] == pytest.approx(1.4e9)
        assert out["bytes_received_per_rank"] == pytest.approx(1.4e9)
        assert out["busbw_factor"] == pytest.approx(1.75)

    def test_wrong_answers_of_the_seed_question_differ(self):
        """800 MB (no factor 2), 6400 MB (N×S) and 100 MB (S/N) are not the answer."""
        sent = run("collective", op="all-reduce", world_size=8, message_bytes=800e6)[
            "bytes_sent_per_rank"]
        assert sent not in (800e6, 6400e6, 100e6)

    def test_time_is_alpha_beta_gamma(self):
        out = run("collective", op="all-reduce", world_size=4, message_bytes=1e9,
                  alpha_s=1e-5, beta_s_per_byte=1e-10, gamma_s_per_byte=1e-11)
        expected = 6 * 1e-5 + 2 * 3 / 4 * 1e9 * 1e-10 + 3 / 4 * 1e9 * 1e-11
        assert out["time_s"] == pytest.approx(expected)

    def test_bandwidth_is_another_way_to_give_beta(self):
        by_beta = run("collective", op="all-reduce", world_size=8, message_bytes="800MB",
                      alpha_s=0, beta_s_per_byte=1 / 12.5e9)
        by_bw = run("collective", op="all-reduce", world_size=8, message_bytes="800MB",
                    alpha_s=0, bandwidth_bytes_per_s="100 Gbit/s")
        assert by_bw["time_s"] == pytest.approx(by_beta["time_s"]) == pytest.approx(0.112)

    def test_no_time_without_alpha_and_beta(self):
        out = run("collective", op="all-reduce", world_size=8, message_bytes=1, alpha_s=1e-6)
        assert "time_s" not in out

    def test_one_rank_sends_nothing(self):
        out = run("collective", op="all-reduce", world_size=1, message_bytes=1e6)
        assert out["steps"] == 0 and out["bytes_sent_per_rank"] == 0


class TestLatencyVersusBandwidth:
    def test_small_messages_favour_recursive_doubling(self):
        """DOMAIN.md: p = 1024, n = 8 B, α = 5 µs: ring ≈ 10 ms, recursive doubling ≈ 50 µs."""
        common = dict(op="all-reduce", world_size=1024, message_bytes=8, alpha_s=5e-6,
                      beta_s_per_byte=1e-9)
        ring = run("collective", algorithm="ring", **common)["time_s"]
        doubling = run("collective", algorithm="recursive-doubling", **common)["time_s"]
        assert ring == pytest.approx(2 * 1023 * 5e-6, rel=0.01)
        assert doubling == pytest.approx(10 * 5e-6, rel=0.01)

    def test_tree_takes_2_log_p_steps(self):
        assert run("collective", op="all-reduce", algorithm="tree", world_size=8,
                   message_bytes=1)["steps"] == 6
        assert run("collective", op="all-reduce", algorithm="tree", world_size=6,
                   message_bytes=1)["steps"] == 6  # ⌈log2 6⌉ = 3

    def test_rabenseifner_moves_ring_bytes_in_log_steps(self):
        out = run("collective", op="all-reduce", algorithm="rabenseifner", world_size=16,
                  message_bytes=1600)
        assert out["steps"] == 8
        assert out["bytes_sent_per_rank"] == pytest.approx(2 * 15 / 16 * 1600)


class TestOtherCollectives:
    @pytest.mark.parametrize("op", ["all-gather", "reduce-scatter", "all-to-all"])
    def test_half_an_all_reduce(self, op):
        """S is the whole array, as nccl-tests counts it: each rank moves (p−1)/p·S."""
        out = run("collective", op=op, world_size=8, message_bytes=800e6)
        assert out["steps"] == 7
        assert out["bytes_sent_per_rank"] == pytest.approx(700e6)
        assert out["busbw_factor"] == pytest.approx(7 / 8)

    def test_all_reduce_is_reduce_scatter_plus_all_gather(self):
        rs = run("collective", op="reduce-scatter", world_size=8, message_bytes=1e9)
        ag = run("collective", op="all-gather", world_size=8, message_bytes=1e9)
        ar = run("collective", op="all-reduce", world_size=8, message_bytes=1e9)
        assert ar["steps"] == rs["steps"] + ag["steps"]
        assert ar["bytes_sent_per_rank"] == pytest.approx(
            rs["bytes_sent_per_rank"] + ag["bytes_sent_per_rank"])

    @pytest.mark.parametrize("op", ["broadcast", "reduce"])
    def test_broadcast_and_reduce_bus_factor_is_one(self, op):
        assert run("collective", op=op, world_size=8, message_bytes=1)["busbw_factor"] == 1

    def test_binomial_broadcast_root_sends_log_p_copies(self):
        out = run("collective", op="broadcast", algorithm="tree", world_size=8, message_bytes=100)
        assert out["steps"] == 3
        assert out["bytes_sent_per_rank"] == 300
        assert out["bytes_received_per_rank"] == 100

    def test_scatter_allgather_broadcast(self):
        """van de Geijn: (lg p + p − 1) steps, 2(p−1)/p·n bytes from the root."""
        out = run("collective", op="broadcast", algorithm="scatter-allgather", world_size=8,
                  message_bytes=800, alpha_s=1, beta_s_per_byte=0)
        assert out["steps"] == 3 + 7
        assert out["bytes_sent_per_rank"] == pytest.approx(1400)
        assert out["bytes_received_per_rank"] == pytest.approx(400 + 700)  # half, then 7/8
        assert out["time_s"] == 10


class TestGloo:
    """algorithm="gloo": torch 2.13's gloo backend on CPU tensors, as recorded by the
    collective-traffic experiment (tests/experiments/test_collective_traffic.py)."""

    @pytest.mark.parametrize(("op", "per_rank"), [
        ("all-reduce", 1400), ("all-gather", 700), ("all-to-all", 700),
        ("reduce-scatter", 1400)])
    def test_symmetric_ops(self, op, per_rank):
        out = run("collective", op=op, algorithm="gloo", world_size=8, message_bytes=800)
        assert out["bytes_sent_by_rank"] == [per_rank] * 8
        assert out["bytes_sent_per_rank"] == out["bytes_received_per_rank"] == per_rank

    def test_reduce_scatter_is_a_whole_all_reduce_twice_the_ring(self):
        gloo = run("collective", op="reduce-scatter", algorithm="gloo", world_size=8,
                   message_bytes=1e9)
        ring = run("collective", op="reduce-scatter", world_size=8, message_bytes=1e9)
        all_reduce = run("collective", op="all-reduce", world_size=8, message_bytes=1e9)
        assert gloo["bytes_sent_per_rank"] == 2 * ring["bytes_sent_per_rank"]
        assert gloo["steps"] == all_reduce["steps"] == 14
        assert gloo["bytes_sent_per_rank"] == all_reduce["bytes_sent_per_rank"]

    @pytest.mark.parametrize(("p", "copies"), [
        (2, [1, 0]), (4, [2, 1, 0, 0]), (6, [3, 2, 0, 0, 0, 0]), (8, [3, 2, 1, 1, 0, 0, 0, 0])])
    def test_broadcast_root_and_leaves(self, p, copies):
        """gloo/broadcast.cc: in round i every rank r < 2^i sends S to r + 2^i."""
        out = run("collective", op="broadcast", algorithm="gloo", world_size=p,
                  message_bytes=100)
        assert out["bytes_sent_by_rank"] == [100 * c for c in copies]
        assert out["bytes_sent_per_rank"] == 100 * math.ceil(math.log2(p))
        assert out["bytes_received_per_rank"] == 100
        assert out["steps"] == math.ceil(math.log2(p))

    def test_gloo_broadcast_tree_is_not_mpichs(self):
        """Same root, same ⌈log₂p⌉ rounds, other ranks forwarding."""
        mpich = run("collective", op="broadcast", algorithm="tree", world_size=8,
                    message_bytes=1)["bytes_sent_by_rank"]
        assert mpich == [3, 0, 1, 0, 2, 0, 1, 0]

    def test_reduce_up_to_2p_mib_is_ring_reduce_scatter_plus_gather(self):
        out = run("collective", op="reduce", algorithm="gloo", world_size=8,
                  message_bytes=8 << 20)
        assert out["bytes_sent_by_rank"] == [7 << 20] + [8 << 20] * 7
        assert out["bytes_received_per_rank"] == (7 << 20) * 2  # the root: ring + 7 blocks
        assert out["steps"] == 8

    def test_reduce_past_2p_mib_sends_all_segments_but_two(self):
        """Measured at 16 MiB on 2 ranks: the root sends 14 MiB, the other rank 22 MiB."""
        out = run("collective", op="reduce", algorithm="gloo", world_size=2,
                  message_bytes=16 << 20)
        assert out["bytes_sent_by_rank"] == [14 << 20, 22 << 20]
        big = run("collective", op="reduce", algorithm="gloo", world_size=8, message_bytes=1e9)
        ring = run("collective", op="reduce-scatter", world_size=8, message_bytes=1e9)
        assert big["bytes_sent_by_rank"][0] > 1.14 * ring["bytes_sent_per_rank"]

    def test_one_rank_sends_nothing(self):
        for op in SUPPORTED:
            out = run("collective", op=op, algorithm="gloo", world_size=1, message_bytes=1e6)
            assert out["bytes_sent_by_rank"] == [0.0] and out["steps"] == 0

    def test_worked_formula_says_how_the_ranks_differ(self):
        evaluation = get("collective").evaluate({"op": "broadcast", "algorithm": "gloo",
                                                 "world_size": 8, "message_bytes": 100})
        lines = [str(step) for step in evaluation.worked]
        assert lines[3] == ("bytes sent by each rank = S for every round i with r < 2^i and "
                            "r + 2^i < p, from 0 B to 300 B")
        symmetric = get("collective").evaluate({"op": "all-reduce", "algorithm": "gloo",
                                                "world_size": 8, "message_bytes": 100})
        assert not any("sent by each rank" in str(step) for step in symmetric.worked)


class TestBytesSentByRank:
    def test_symmetric_algorithms_give_every_rank_the_same(self):
        out = run("collective", op="all-reduce", world_size=8, message_bytes="800 MB")
        assert out["bytes_sent_by_rank"] == [pytest.approx(1.4e9)] * 8

    def test_trees_and_chains_rooted_at_rank_0(self):
        def by_rank(op, algorithm):
            return run("collective", op=op, algorithm=algorithm, world_size=8,
                       message_bytes=8)["bytes_sent_by_rank"]

        assert by_rank("all-reduce", "tree") == [24, 8, 16, 8, 24, 8, 16, 8]
        assert by_rank("broadcast", "ring") == [8] * 7 + [0]
        assert by_rank("broadcast", "scatter-allgather") == [14, 7, 8, 7, 10, 7, 8, 7]
        assert by_rank("reduce", "ring") == by_rank("reduce", "tree") == [0] + [8] * 7

    def test_left_out_past_1024_ranks(self):
        assert "bytes_sent_by_rank" in run("collective", op="all-reduce", world_size=1024,
                                           message_bytes=1)
        assert "bytes_sent_by_rank" not in run("collective", op="all-reduce",
                                               world_size=1025, message_bytes=1)


@given(op=st.sampled_from(sorted(SUPPORTED)), data=st.data(), p=st.integers(1, 300),
       size=st.floats(0, 1e12))
def test_bytes_sent_by_rank_agrees_with_the_busiest_rank(op, data, p, size):
    algorithm = data.draw(st.sampled_from(SUPPORTED[op]))
    if algorithm in POWER_OF_TWO_ONLY and p & (p - 1):
        return
    out = run("collective", op=op, algorithm=algorithm, world_size=p, message_bytes=size)
    by_rank = out["bytes_sent_by_rank"]
    assert len(by_rank) == p
    assert max(by_rank) == pytest.approx(out["bytes_sent_per_rank"])
    if op in ("broadcast", "reduce") and algorithm != "scatter-allgather" and (
            op, algorithm) != ("reduce", "gloo"):
        # Every rank but the root receives S once (broadcast) or sends it once (reduce).
        assert sum(by_rank) == pytest.approx((p - 1) * size)


class TestBadInput:
    def test_algorithm_that_does_not_apply(self):
        with pytest.raises(InputError) as info:
            run("collective", op="all-gather", algorithm="tree", world_size=8, message_bytes=1)
        assert info.value.problems[0].param == "algorithm"
        assert "ring, recursive-doubling" in str(info.value)

    def test_recursive_doubling_needs_power_of_two(self):
        with pytest.raises(InputError, match="power-of-two"):
            run("collective", op="all-reduce", algorithm="recursive-doubling", world_size=6,
                message_bytes=1)

    def test_beta_and_bandwidth_together(self):
        with pytest.raises(InputError, match="not both"):
            run("collective", op="all-reduce", world_size=2, message_bytes=1, alpha_s=0,
                beta_s_per_byte=1e-9, bandwidth_bytes_per_s=1e9)

    def test_every_problem_is_reported_at_once(self):
        with pytest.raises(InputError) as info:
            run("collective", op="gather", world_size=0, message_bytes="-3 GB", colour="red")
        assert {p.param for p in info.value.problems} == {"op", "world_size", "message_bytes",
                                                          "colour"}


@given(p=st.integers(2, 4096), size=st.floats(1, 1e13))
def test_ring_all_reduce_meets_the_bandwidth_lower_bound(p, size):
    """Patarasuk & Yuan: every all-reduce moves ≥ 2(p−1)/p·S through a rank; the ring hits it."""
    out = run("collective", op="all-reduce", world_size=p, message_bytes=size)
    assert out["bytes_sent_per_rank"] == pytest.approx(2 * (p - 1) / p * size)
    bigger = run("collective", op="all-reduce", world_size=p + 1, message_bytes=size)
    assert bigger["bytes_sent_per_rank"] > out["bytes_sent_per_rank"]
    assert out["bytes_sent_per_rank"] < 2 * size


@given(op=st.sampled_from(sorted(SUPPORTED)), data=st.data(), k=st.integers(0, 10),
       size=st.floats(0, 1e12))
def test_every_supported_pair_gives_sane_costs(op, data, k, size):
    algorithm = data.draw(st.sampled_from(SUPPORTED[op]))
    out = run("collective", op=op, algorithm=algorithm, world_size=2**k, message_bytes=size,
              alpha_s=1e-6, beta_s_per_byte=1e-10)
    assert out["steps"] >= 0
    assert 0 <= out["bytes_sent_per_rank"] <= max(1, math.log2(2**k)) * 2 * size + 1e-6
    assert out["time_s"] >= 0
