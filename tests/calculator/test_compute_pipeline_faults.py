"""Compute, MFU, pipeline bubble, checkpoint interval and communication volumes."""

from __future__ import annotations

import math
from typing import ClassVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.calculator import InputError, run


class TestTrainingFlops:
    def test_gpt3(self):
        """GPT-3 Table D.1: 174.6B parameters, 300B tokens: 3.14e23 FLOPs, 3.64e3 PF-days."""
        out = run("training-flops", params=174.6e9, tokens=300e9)
        assert out["flops"] == pytest.approx(3.1428e23)
        assert out["pf_days"] == pytest.approx(3637.5)

    def test_time_to_train(self):
        out = run("training-flops", params=1e9, tokens=20e9, gpus=8,
                  peak_flops_per_gpu="312 TFLOP/s", mfu=0.5)
        assert out["time_s"] == pytest.approx(6 * 1e9 * 20e9 / (8 * 312e12 * 0.5))

    def test_time_needs_all_three(self):
        with pytest.raises(InputError) as info:
            run("training-flops", params=1e9, tokens=1e9, gpus=8, mfu=0.4)
        assert info.value.problems[0].param == "peak_flops_per_gpu"


class TestMfu:
    PALM: ClassVar = dict(params=540.35e9, tokens_per_s=238.3e3, gpus=6144,
                          peak_flops_per_gpu=275e12)

    def test_palm_540b_with_attention(self):
        """PaLM §4.1: 46.2% MFU; 3.28 TFLOPs per token with Q = 256 (DOMAIN flag 11)."""
        out = run("mfu", **self.PALM, layers=118, heads=48, head_dim=256, seq_len=2048)
        assert out["flops_per_token"] / 1e12 == pytest.approx(3.28, abs=0.005)
        assert out["mfu"] == pytest.approx(0.462, abs=0.0005)

    def test_palm_540b_without_attention(self):
        assert run("mfu", **self.PALM)["mfu"] == pytest.approx(0.457, abs=0.0005)

    def test_attention_term_needs_the_whole_shape(self):
        with pytest.raises(InputError) as info:
            run("mfu", **self.PALM, layers=118, heads=48)
        assert info.value.problems[0].param == "head_dim"


class TestPipelineBubble:
    def test_megatron_and_gpipe_definitions(self):
        """DOMAIN flag 7: p = 4, m = 16 gives 0.1875 of ideal time, 0.1579 of total."""
        out = run("pipeline-bubble", stages=4, microbatches=16)
        assert out["bubble_over_ideal"] == pytest.approx(0.1875)
        assert out["bubble_fraction_of_total"] == pytest.approx(3 / 19)

    def test_single_batch_bubble_is_p_minus_one(self):
        assert run("pipeline-bubble", stages=8, microbatches=1)["bubble_over_ideal"] == 7

    def test_interleaving_divides_by_v(self):
        out = run("pipeline-bubble", stages=4, microbatches=16, schedule="interleaved",
                  virtual_stages=2)
        assert out["bubble_over_ideal"] == pytest.approx(3 / 32)

    def test_gpipe_rule_of_thumb(self):
        """GPipe: negligible when M ≥ 4K; at M = 4K the overhead is under 20%."""
        out = run("pipeline-bubble", stages=8, microbatches=32, schedule="gpipe")
        assert out["bubble_fraction_of_total"] < 0.2
        assert out["inflight_microbatches"] == 32

    def test_1f1b_holds_at_most_p_microbatches(self):
        assert run("pipeline-bubble", stages=8, microbatches=32)["inflight_microbatches"] == 8

    def test_interleaving_holds_more_activations(self):
        """Korthikanti §4.2.3: the first stage needs 1 + (p−1)/(p·v) times 1F1B's memory."""
        out = run("pipeline-bubble", stages=4, microbatches=16, schedule="interleaved",
                  virtual_stages=2)
        assert out["inflight_microbatches"] == pytest.approx(4 * (1 + 3 / 8))

    def test_chunks_only_for_interleaved(self):
        with pytest.raises(InputError) as info:
            run("pipeline-bubble", stages=4, microbatches=8, schedule="gpipe", virtual_stages=2)
        assert info.value.problems[0].param == "virtual_stages"

    def test_interleaved_needs_multiple_of_stages(self):
        with pytest.raises(InputError) as info:
            run("pipeline-bubble", stages=4, microbatches=6, schedule="interleaved",
                virtual_stages=2)
        assert info.value.problems[0].param == "microbatches"

    @given(p=st.integers(1, 512), m=st.integers(1, 10_000), v=st.integers(1, 8))
    def test_fraction_of_total_is_in_0_1(self, p, m, v):
        out = run("pipeline-bubble", stages=p, microbatches=m * p, schedule="interleaved",
                  virtual_stages=v)
        assert 0 <= out["bubble_fraction_of_total"] < 1


class TestCheckpointInterval:
    def test_young(self):
        out = run("checkpoint-interval", checkpoint_cost_s="5 min", mtbf_s="1 day")
        assert out["young_interval_s"] == pytest.approx(math.sqrt(2 * 300 * 86400))
        assert out["young_interval_s"] == pytest.approx(7200)

    def test_cluster_mtbf_from_nodes(self):
        """1000 nodes that each fail every ~3 years fail together about daily."""
        out = run("checkpoint-interval", checkpoint_cost_s=60, node_mtbf_s="1000 days",
                  nodes=1000)
        assert out["cluster_mtbf_s"] == pytest.approx(86400)

    def test_daly_is_close_to_young_when_checkpoints_are_cheap(self):
        out = run("checkpoint-interval", checkpoint_cost_s=10, mtbf_s=1e6)
        assert out["daly_interval_s"] == pytest.approx(out["young_interval_s"], rel=0.01)

    def test_daly_falls_back_to_mtbf_for_expensive_checkpoints(self):
        out = run("checkpoint-interval", checkpoint_cost_s=500, mtbf_s=200)
        assert out["daly_interval_s"] == 200

    def test_mtbf_one_way_only(self):
        with pytest.raises(InputError):
            run("checkpoint-interval", checkpoint_cost_s=1, mtbf_s=10, node_mtbf_s=10, nodes=2)
        with pytest.raises(InputError) as info:
            run("checkpoint-interval", checkpoint_cost_s=1, node_mtbf_s=10)
        assert info.value.problems[0].param == "nodes"


class TestCommunicationVolumes:
    def test_zero_3_moves_one_and_a_half_times_dp(self):
        dp = run("zero-comm", params=1e9, zero_stage=0)
        z3 = run("zero-comm", params=1e9, zero_stage=3)
        assert dp["elements_per_step"] == 2e9
        assert z3["bytes_per_step"] == pytest.approx(1.5 * dp["bytes_per_step"])

    def test_zero_ring_factor(self):
        out = run("zero-comm", params=1e9, zero_stage=1, dp=8)
        assert out["ring_bytes_sent_per_rank"] == pytest.approx(4e9 * 7 / 8)

    def test_megatron_four_all_reduces_per_layer(self):
        """Narayanan §3.2: 8bsh(t−1)/t elements per layer per device."""
        out = run("tp-comm", micro_batch=1, seq_len=2048, hidden=12288, tp=8)
        assert out["allreduces_per_layer"] == 4
        bsh = 2048 * 12288
        assert out["bytes_sent_per_rank_per_layer"] == pytest.approx(8 * bsh * 7 / 8 * 2)

    def test_sequence_parallel_same_volume_other_collectives(self):
        plain = run("tp-comm", micro_batch=2, seq_len=4096, hidden=8192, tp=4)
        sp = run("tp-comm", micro_batch=2, seq_len=4096, hidden=8192, tp=4,
                 sequence_parallel=True)
        assert sp["allreduces_per_layer"] == 0
        assert sp["allgathers_per_layer"] == sp["reduce_scatters_per_layer"] == 4
        assert sp["bytes_sent_per_rank_per_layer"] == plain["bytes_sent_per_rank_per_layer"]

    def test_recompute_makes_six(self):
        """ZeRO §8: with activation checkpointing Megatron does 6 all-reduces per block."""
        out = run("tp-comm", micro_batch=1, seq_len=1024, hidden=1024, tp=2,
                  activation_recompute=True)
        assert out["allreduces_per_layer"] == 6

    def test_one_device_communicates_nothing(self):
        out = run("tp-comm", micro_batch=1, seq_len=1024, hidden=1024, tp=1)
        assert out["allreduces_per_layer"] == 0 and out["bytes_sent_per_rank"] == 0
