"""DDP gradient synchronisation and bucketing."""

from __future__ import annotations

from typing import ClassVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.calculator import InputError, run

MIB = 1024 * 1024


class TestSync:
    def test_two_ranks_average_to_one_and_a_half(self):
        """Local gradients [1, 1] and [2, 2]: DDP leaves [1.5, 1.5] on both ranks."""
        assert run("ddp-sync", local_grads=[[1, 1], [2, 2]])["synced_grad"] == [1.5, 1.5]

    def test_sum_hook_is_world_size_times_larger(self):
        out = run("ddp-sync", local_grads=[[1.0], [2.0], [3.0], [4.0]], reduction="sum")
        assert out["synced_grad"] == [10.0]
        assert out["scale_vs_average"] == 4

    def test_uneven_batches_under_weight_the_larger_rank(self):
        """1 sample vs 3: DDP averages the means (1.5); the pooled mean is 1.75."""
        out = run("ddp-sync", local_grads=[[1, 1], [2, 2]], local_batch_sizes=[1, 3])
        assert out["synced_grad"] == [1.5, 1.5]
        assert out["pooled_mean_grad"] == [1.75, 1.75]
        assert out["pooled_loss_scales"] == [0.5, 1.5]

    def test_loss_scales_recover_the_pooled_mean(self):
        grads, sizes = [[1.0, -2.0], [4.0, 0.5], [0.0, 3.0]], [2, 5, 1]
        out = run("ddp-sync", local_grads=grads, local_batch_sizes=sizes)
        scaled = [[s * g for g in grad] for s, grad in
                  zip(out["pooled_loss_scales"], grads, strict=True)]
        assert run("ddp-sync", local_grads=scaled)["synced_grad"] == pytest.approx(
            out["pooled_mean_grad"])

    def test_scalars_are_one_element_gradients(self):
        assert run("ddp-sync", local_grads=[1, 2])["synced_grad"] == [1.5]

    def test_batch_sizes_must_match_ranks(self):
        with pytest.raises(InputError) as info:
            run("ddp-sync", local_grads=[[1], [2]], local_batch_sizes=[1, 2, 3])
        assert info.value.problems[0].param == "local_batch_sizes"

    def test_ragged_gradients_are_refused(self):
        with pytest.raises(InputError, match="same length"):
            run("ddp-sync", local_grads=[[1, 2], [3]])


class TestBuckets:
    # Sizes recorded from torch 2.13 DDP (gloo, fp32): 300k, 50k, 200k, 2M, 10, 4M, 100k elements.
    SIZES: ClassVar = [4 * n for n in (300_000, 50_000, 200_000, 2_000_000, 10, 4_000_000, 100_000)]

    def test_defaults_are_25_mib_and_1_mib(self):
        out = run("ddp-buckets", param_bytes=[1])
        assert out["bucket_cap_bytes"] == 25 * MIB == 26_214_400
        assert out["first_bucket_cap_bytes"] == MIB

    def test_default_steady_state(self):
        out = run("ddp-buckets", param_bytes=self.SIZES)
        assert out["buckets"] == [[6, 5], [4, 3, 2, 1, 0]]
        assert out["bucket_bytes"] == [16_400_000, 10_200_040]

    def test_explicit_cap_has_no_small_first_bucket(self):
        out = run("ddp-buckets", param_bytes=self.SIZES, bucket_cap_mb=4)
        assert out["first_bucket_cap_bytes"] == 4 * MIB
        assert out["bucket_bytes"] == [16_400_000, 8_000_040, 2_200_000]

    def test_find_unused_parameters_keeps_construction_buckets(self):
        out = run("ddp-buckets", param_bytes=self.SIZES, find_unused_parameters=True)
        assert out["buckets"] == [[1, 2, 3, 4, 5, 6], [0]]
        assert out["bucket_bytes"] == [25_400_040, 1_200_000]

    def test_large_cap_gives_one_bucket(self):
        assert run("ddp-buckets", param_bytes=self.SIZES, bucket_cap_mb=25)["num_buckets"] == 1

    def test_sizes_may_carry_units(self):
        out = run("ddp-buckets", param_bytes=["20 MiB", "20 MiB"], bucket_cap_mb=25)
        assert out["bucket_bytes"] == [40 * MIB]

    @given(sizes=st.lists(st.integers(1, 50 * MIB), min_size=1, max_size=60),
           cap=st.one_of(st.none(), st.floats(0, 100)), unused=st.booleans())
    def test_every_parameter_is_in_exactly_one_bucket(self, sizes, cap, unused):
        out = run("ddp-buckets", param_bytes=sizes, bucket_cap_mb=cap,
                  find_unused_parameters=unused)
        flat = sorted(i for bucket in out["buckets"] for i in bucket)
        assert flat == list(range(len(sizes)))
        assert sum(out["bucket_bytes"]) == sum(sizes)
        # Every bucket but the last built one reaches its cap.
        assert out["num_buckets"] == len(out["buckets"])
