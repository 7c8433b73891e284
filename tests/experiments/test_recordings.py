"""The recorded experiments: well-formed, current with their scripts, and reproduced by
the calculators that claim to model them."""

from __future__ import annotations

import hashlib
import importlib.util
import json

import pytest

from app.calculator import run
from app.config import ROOT
from app.experiments.records import experiments

DIRECTORY = ROOT / "question_bank" / "experiments"
RECORDS = {p.stem: json.loads(p.read_text()) for p in sorted(DIRECTORY.glob("*.json"))}
REQUIRED = {"name", "asks", "torch_version", "python_version", "backend", "world_sizes",
            "script_sha256", "recorded_at", "runs", "summary"}


def load_runner():
    spec = importlib.util.spec_from_file_location("run_all", DIRECTORY / "run_all.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_eight_experiments_are_recorded():
    assert {"ddp-gradient-averaging", "ddp-sum-comm-hook", "ddp-uneven-batches",
            "ddp-bucketing", "ddp-no-sync", "ddp-broadcast-at-construction",
            "gloo-reduce-ops", "ddp-unused-parameters"} <= set(RECORDS)


@pytest.mark.parametrize("name", sorted(RECORDS))
def test_record_is_complete_and_matches_its_script(name):
    record = RECORDS[name]
    assert set(record) >= REQUIRED, REQUIRED - set(record)
    assert record["name"] == name
    assert record["backend"] == "gloo"
    assert record["torch_version"].startswith("2.13.0")
    script = (DIRECTORY / f"{name}.py").read_bytes()
    assert record["script_sha256"] == hashlib.sha256(script).hexdigest(), (
        f"{name}.py changed since it was recorded: run `make experiments`")
    assert set(record["world_sizes"]) <= {2, 4, 8}


def test_the_app_reads_them_without_torch():
    import sys

    found = experiments(ROOT / "question_bank")
    assert set(found) == set(RECORDS)
    assert "torch" not in sys.modules


class TestCalculatorsAgree:
    def test_ddp_sync_reproduces_gradient_averaging(self):
        summary = RECORDS["ddp-gradient-averaging"]["summary"]
        assert run("ddp-sync", local_grads=summary["local_grads"])["synced_grad"] == \
            summary["ddp_grad"]
        assert run("ddp-sync", local_grads=summary["local_grads"], reduction="sum")[
            "synced_grad"] == summary["allreduce_sum"]

    @pytest.mark.parametrize("world", [2, 4])
    def test_ddp_sync_reproduces_the_sum_hook(self, world):
        summary = RECORDS["ddp-sum-comm-hook"]["summary"][f"world_size_{world}"]
        out = run("ddp-sync", local_grads=[[1.0]] * world, reduction="sum")
        assert out["scale_vs_average"] == summary["grad_ratio"] == summary["step_ratio"]

    def test_ddp_sync_reproduces_uneven_batches(self):
        summary = RECORDS["ddp-uneven-batches"]["summary"]
        out = run("ddp-sync", local_grads=summary["local_grads"],
                  local_batch_sizes=summary["local_batch_sizes"])
        assert out["synced_grad"] == pytest.approx(summary["ddp_grad"], rel=1e-6)
        assert out["pooled_mean_grad"] == pytest.approx(summary["pooled_grad"], rel=1e-6)
        assert out["pooled_loss_scales"] == summary["loss_scales"]
        assert summary["ddp_grad_scaled_loss"] == pytest.approx(summary["pooled_grad"])

    def test_ddp_buckets_reproduces_every_recorded_configuration(self):
        record = RECORDS["ddp-bucketing"]
        sizes = [p["bytes"] for p in record["summary"]["parameters"]]
        assert record["runs"]
        for recorded_run in record["runs"]:
            config = recorded_run["config"]
            steady = recorded_run["ranks"][0]["iterations"][-1]  # after DDP's rebuild
            out = run("ddp-buckets", param_bytes=sizes, bucket_cap_mb=config["bucket_cap_mb"],
                      find_unused_parameters=config["find_unused_parameters"])
            assert out["buckets"] == [b["params"] for b in steady], config
            assert out["bucket_bytes"] == [b["bytes"] for b in steady], config
            assert out["num_buckets"] == len(steady)


def test_replay_comparison_ignores_only_timestamps_and_timings():
    differences = load_runner().differences
    recorded = {"recorded_at": "a", "timing": {"s": 1}, "summary": {"x": [1.5, 2.0]}}
    assert differences(recorded, {"recorded_at": "b", "timing": {"s": 9},
                                  "summary": {"x": [1.5, 2.0]}}) == []
    found = differences(recorded, {"recorded_at": "a", "summary": {"x": [1.5, 2.5]}})
    assert found == ["summary.x[1]: recorded 2.0, fresh 2.5"]
    assert differences({"v": 1}, {"v": 1.0}) == ["v: recorded 1, fresh 1.0"]
