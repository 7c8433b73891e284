"""Model-state and activation memory against ZeRO and Korthikanti et al."""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.calculator import InputError, run

GB = 1e9

# ZeRO Table 1 (GB per device, Ψ in parameters, K = 12), as printed: the paper rounds
# or truncates, so each printed cell must lie within one unit of its last digit.
ZERO_TABLE_1 = {
    7.5e9: {1: ("120", "120", "120"), 4: ("52.5", "41.3", "30"), 16: ("35.6", "21.6", "7.5"),
            64: ("31.4", "16.6", "1.88"), 256: ("30.4", "15.4", "0.47"),
            1024: ("30.1", "15.1", "0.12")},
    128e9: {1: ("2048", "2048", "2048"), 4: ("896", "704", "512"), 16: ("608", "368", "128"),
            64: ("536", "284", "32"), 256: ("518", "263", "8"), 1024: ("513", "257", "2")},
    1e12: {1: ("16000", "16000", "16000"), 4: ("7000", "5500", "4000"),
           16: ("4750", "2875", "1000"), 64: ("4187", "2218", "250"),
           256: ("4046", "2054", "62.5"), 1024: ("4011", "2013", "15.6")},
}


def _within_last_digit(exact: float, printed: str) -> bool:
    decimals = len(printed.partition(".")[2])
    return abs(exact - float(printed)) < 10 ** -decimals


@pytest.mark.parametrize("psi", sorted(ZERO_TABLE_1))
@pytest.mark.parametrize("dp", [1, 4, 16, 64, 256, 1024])
def test_zero_table_1(psi, dp):
    for stage, printed in zip((1, 2, 3), ZERO_TABLE_1[psi][dp], strict=True):
        exact = run("model-memory", params=psi, zero_stage=stage, dp=dp)["total_bytes"] / GB
        assert _within_last_digit(exact, printed), (psi, dp, stage, exact, printed)


def test_zero_figure_1():
    """7.5B parameters on 64 GPUs: 120 → 31.4 → 16.6 → 1.9 GB."""
    totals = [run("model-memory", params=7.5e9, zero_stage=s, dp=64)["total_bytes"]
              for s in range(4)]
    assert totals == pytest.approx([120e9, 31.40625e9, 16.640625e9, 1.875e9])


def test_gpt3_175b_fp32_adam():
    """700 GB weights, 700 GB gradients, 1400 GB Adam moments: 2.8 TB."""
    out = run("model-memory", params=175e9, precision="fp32")
    assert out["param_bytes"] == pytest.approx(700e9)
    assert out["grad_bytes"] == pytest.approx(700e9)
    assert out["optimizer_bytes"] == pytest.approx(1400e9)
    assert out["total_bytes"] == pytest.approx(2.8e12)


def test_mixed_precision_is_16_bytes_and_20_with_fp32_gradients():
    assert run("model-memory", params=1e9)["bytes_per_param"] == 16
    assert run("model-memory", params=1e9, fp32_grad_accum=True)["bytes_per_param"] == 20


def test_fp32_grad_accum_is_sharded_from_stage_2():
    """Playbook: with FP32 gradient accumulation add 4Ψ/N_d to the gradient term (ZeRO-2/3)."""
    base = run("model-memory", params=1e9, zero_stage=2, dp=8)
    extra = run("model-memory", params=1e9, zero_stage=2, dp=8, fp32_grad_accum=True)
    assert extra["grad_bytes"] - base["grad_bytes"] == pytest.approx(4e9 / 8)


def test_zero_table_2_max_model_on_a_32_gb_v100():
    """Baseline DP with 16 bytes per parameter fits 2B parameters in 32 GB; Pos+g+p at
    N_d = 1024 fits 2T (Table 2: 2B and 2048B at MP = 1)."""
    base = run("model-memory", params=1, device_bytes=32e9)
    assert base["max_params"] == pytest.approx(2e9)
    full = run("model-memory", params=1, zero_stage=3, dp=1024, device_bytes=32e9)
    assert full["max_params"] == pytest.approx(2.048e12)
    pos = run("model-memory", params=1, zero_stage=1, dp=64, device_bytes=32e9)
    assert pos["max_params"] == pytest.approx(7.6e9, rel=0.01)  # Table 2 prints 7.6B


def test_fp32_grad_accum_needs_mixed_precision():
    with pytest.raises(InputError) as info:
        run("model-memory", params=1e9, precision="fp32", fp32_grad_accum=True)
    assert info.value.problems[0].param == "fp32_grad_accum"


@given(psi=st.floats(1e6, 1e13), dp=st.integers(1, 4096),
       optimizer=st.sampled_from(["adam", "sgd-momentum", "sgd"]),
       precision=st.sampled_from(["mixed", "fp32"]))
def test_each_zero_stage_needs_no_more_than_the_one_before(psi, dp, optimizer, precision):
    totals = [run("model-memory", params=psi, zero_stage=s, dp=dp, optimizer=optimizer,
                  precision=precision)["total_bytes"] for s in range(4)]
    assert all(a >= b * (1 - 1e-12) for a, b in pairwise(totals))


class TestActivations:
    S, B, H, A = 2048, 1, 12288, 96  # GPT-3 shape (Korthikanti §4)

    def per_layer(self, **kw):
        return run("activation-memory", seq_len=self.S, micro_batch=self.B, hidden=self.H,
                   heads=self.A, **kw)["bytes_per_layer"]

    def test_no_parallelism_is_sbh_34_plus_5as_over_h(self):
        sbh = self.S * self.B * self.H
        assert self.per_layer() == pytest.approx(sbh * (34 + 5 * self.A * self.S / self.H))

    def test_tensor_parallel(self):
        sbh = self.S * self.B * self.H
        expected = sbh * (10 + 24 / 8 + 5 * self.A * self.S / (self.H * 8))
        assert self.per_layer(tp=8) == pytest.approx(expected)

    def test_sequence_parallel_divides_everything_by_t(self):
        assert self.per_layer(tp=8, sequence_parallel=True) == pytest.approx(self.per_layer() / 8)

    def test_selective_recompute_drops_the_attention_term(self):
        sbh = self.S * self.B * self.H
        assert self.per_layer(tp=8, sequence_parallel=True, recompute="selective") == \
            pytest.approx(34 * sbh / 8)
        assert self.per_layer(tp=8, recompute="selective") == pytest.approx(sbh * 13)

    def test_full_recompute_keeps_the_layer_input(self):
        assert self.per_layer(tp=8, recompute="full") == 2 * self.S * self.B * self.H

    def test_total_is_per_layer_times_layers(self):
        out = run("activation-memory", seq_len=2048, micro_batch=1, hidden=20480, heads=128,
                  layers=105, tp=8, sequence_parallel=True, recompute="selective")
        assert out["total_bytes"] == pytest.approx(105 * out["bytes_per_layer"])

    def test_gpt2_shape_compared_with_zero_footnote(self):
        """DOMAIN flag 13: Eq. 1 gives about 287 GB for GPT-2 1.5B at seq 1K, batch 32."""
        out = run("activation-memory", seq_len=1024, micro_batch=32, hidden=1600, heads=25,
                  layers=48)
        assert out["total_bytes"] / 1e9 == pytest.approx(287, rel=0.01)
