"""The registry: purity, descriptions, and bad input on every face."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from app.calculator import InputError, calculators, evaluate, get, run
from app.cli import main as cli_main

REQUIRED_API = {
    "collective": ({"op", "algorithm", "world_size", "message_bytes", "alpha_s",
                    "beta_s_per_byte", "gamma_s_per_byte"},
                   {"steps", "bytes_sent_per_rank", "bytes_received_per_rank", "busbw_factor",
                    "time_s"}),
    "model-memory": ({"params", "precision", "optimizer", "zero_stage", "dp", "fp32_grad_accum"},
                     {"param_bytes", "grad_bytes", "optimizer_bytes", "total_bytes"}),
    "activation-memory": ({"seq_len", "micro_batch", "hidden", "heads", "layers", "tp",
                           "sequence_parallel", "recompute"}, {"bytes_per_layer", "total_bytes"}),
    "pipeline-bubble": ({"stages", "microbatches", "schedule", "virtual_stages"},
                        {"bubble_over_ideal", "bubble_fraction_of_total"}),
    "training-flops": ({"params", "tokens", "gpus", "peak_flops_per_gpu", "mfu"},
                       {"flops", "time_s"}),
    "mfu": ({"params", "tokens_per_s", "gpus", "peak_flops_per_gpu", "layers", "heads",
             "head_dim", "seq_len"}, {"flops_per_token", "achieved_flops_per_s", "mfu"}),
    "zero-comm": ({"params", "zero_stage", "bytes_per_element"},
                  {"elements_per_step", "bytes_per_step"}),
    "tp-comm": ({"micro_batch", "seq_len", "hidden", "tp", "bytes_per_element"},
                {"allreduces_per_layer", "bytes_per_allreduce", "bytes_sent_per_rank_per_layer"}),
    "ddp-sync": ({"local_grads", "local_batch_sizes", "reduction"},
                 {"synced_grad", "pooled_mean_grad"}),
    "ddp-buckets": ({"param_bytes", "bucket_cap_mb", "find_unused_parameters"},
                    {"num_buckets", "buckets", "bucket_bytes"}),
    "checkpoint-interval": ({"checkpoint_cost_s", "mtbf_s", "node_mtbf_s", "nodes"},
                            {"cluster_mtbf_s", "young_interval_s", "daly_interval_s"}),
    "units": ({"value", "to_unit"}, {"value"}),
}

# One bad input per kind the issue names, with the parameter the error must name.
BAD_INPUTS = [
    ("collective", {"op": "all-reduce", "world_size": 0, "message_bytes": 1}, "world_size"),
    ("collective", {"op": "all-reduce", "world_size": 8, "message_bytes": -1}, "message_bytes"),
    ("model-memory", {"params": 1e9, "zero_stage": 5}, "zero_stage"),
    ("collective", {"op": "all-everything", "world_size": 8, "message_bytes": 1}, "op"),
    ("collective", {"op": "all-reduce", "world_size": 8, "message_bytes": "8 parsecs"},
     "message_bytes"),
    ("collective", {"op": "all-reduce", "world_size": "eight", "message_bytes": 1}, "world_size"),
    ("collective", {"op": "all-reduce", "world_size": 8, "message_bytes": "1e999 GB"},
     "message_bytes"),
    ("collective", {"op": "all-reduce", "world_size": 8, "message_bytes": "1.4 GB ** 1e9"},
     "message_bytes"),
    ("collective", {"op": "all-reduce", "world_size": 8, "message_bytes": "9" * 10_000},
     "message_bytes"),
    ("mfu", {"params": 1e9, "tokens_per_s": 1, "gpus": 1.5, "peak_flops_per_gpu": 1e12}, "gpus"),
    ("pipeline-bubble", {"stages": True, "microbatches": 4}, "stages"),
    ("collective", {"op": "all-reduce", "world_size": 8, "message_bytes": 1, "bogus": 1},
     "bogus"),
    ("ddp-sync", {"local_grads": "not a list"}, "local_grads"),
    ("units", {"value": 5, "to_unit": "GB"}, "value"),
]


def test_calculator_package_imports_no_web_or_database_code():
    code = ("import sys, app.calculator; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "{'fastapi', 'starlette', 'jinja2', 'sqlalchemy', 'uvicorn'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("name", sorted(REQUIRED_API))
def test_public_names_are_kept(name):
    params, outputs = REQUIRED_API[name]
    calc = get(name)
    assert params <= {p.name for p in calc.params}
    assert outputs <= {o.name for o in calc.outputs}


def test_every_calculator_documents_formula_and_source():
    assert {c.name for c in calculators()} >= set(REQUIRED_API)
    for calc in calculators():
        assert calc.formula and calc.sources and calc.function.__doc__, calc.name
        for param in calc.params:
            assert param.description, (calc.name, param.name)


@pytest.mark.parametrize(("name", "params", "param"), BAD_INPUTS)
def test_python_face_names_the_parameter(name, params, param):
    with pytest.raises(InputError) as info:
        evaluate(name, params)
    assert param in {p.param for p in info.value.problems}


@pytest.mark.parametrize(("name", "params", "param"), BAD_INPUTS)
def test_http_face_answers_422_naming_the_parameter(client, name, params, param):
    response = client.post(f"/api/v1/calculators/{name}", json=params)
    assert response.status_code == 422
    assert ["body", param] in [d["loc"] for d in response.json()["detail"]]


@pytest.mark.parametrize(("name", "params", "param"), BAD_INPUTS)
def test_cli_face_exits_2_with_one_line_per_problem(capsys, name, params, param):
    args = [f"{k}={json.dumps(v) if not isinstance(v, str) else v}" for k, v in params.items()]
    assert cli_main(["calc", name, *args, "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert any(line.startswith(f"error: {param}:") for line in lines)
    assert "Traceback" not in captured.err


def test_cli_json_prints_exactly_the_outputs(capsys):
    assert cli_main(["calc", "collective", "op=all-reduce", "world_size=8",
                     "message_bytes=800MB", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out == {"steps": 14, "bytes_sent_per_rank": 1.4e9, "bytes_received_per_rank": 1.4e9,
                   "bytes_sent_by_rank": [1.4e9] * 8, "busbw_factor": 1.75}


def test_cli_readable_output_shows_the_worked_formula(capsys):
    assert cli_main(["calc", "collective", "op=all-reduce", "world_size=8",
                     "message_bytes=800MB"]) == 0
    out = capsys.readouterr().out
    assert "1.4 GB" in out and "2(p−1)/p · S" in out


def test_cli_lists_calculators(capsys):
    assert cli_main(["calc", "--list"]) == 0
    out = capsys.readouterr().out
    assert all(c.name in out for c in calculators())


def test_cli_unknown_calculator(capsys):
    assert cli_main(["calc", "teleport"]) == 2
    assert "unknown calculator 'teleport'" in capsys.readouterr().err


def test_cli_malformed_assignment(capsys):
    assert cli_main(["calc", "collective", "world_size"]) == 2
    assert "key=value" in capsys.readouterr().err


def test_console_script_runs():
    out = subprocess.run([sys.executable, "-m", "app.cli", "calc", "collective",
                          "op=all-reduce", "world_size=8", "message_bytes=800MB", "--json"],
                         capture_output=True, text=True, check=True)
    assert json.loads(out.stdout)["bytes_sent_per_rank"] == 1.4e9


def test_run_returns_outputs_dict():
    assert run("collective", op="all-reduce", world_size=8, message_bytes=800e6)["steps"] == 14
