"""Which `dist.ReduceOp`s does the gloo backend accept for all_reduce, and what do they return?

Interview answers often assume every reduce op works everywhere. Here each op is run with
`dist.all_reduce` on a float32 and an int64 tensor over gloo, at 2 and 4 ranks, and the
result or the exact exception is recorded. PREMUL_SUM carries a factor, so it is built
with `dist._make_nccl_premul_sum(factor)`; the bare enum value is tried too.
Each op runs in a fresh process group with a short timeout, so that an op that fails on
one rank only would time out instead of blocking the ops after it.
"""

import datetime

import _harness as h
import torch
import torch.distributed as dist

NAME = "gloo-reduce-ops"
ASKS = ("Which ReduceOps does dist.all_reduce accept on the gloo backend for float32 and "
        "int64 tensors, and what does each return?")
OPS = ["SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR", "PREMUL_SUM",
       "PREMUL_SUM_enum"]
DTYPES = {"float32": torch.float32, "int64": torch.int64}
PREMUL_FACTOR = 2.0
GROUP_TIMEOUT = datetime.timedelta(seconds=10)


def rank_input(rank: int, dtype: torch.dtype) -> torch.Tensor:
    # Distinct per rank in every position; powers of two make the bitwise ops readable.
    return torch.tensor([rank + 1, 6, 2 ** rank], dtype=dtype)


def make_op(name: str) -> object:
    if name == "PREMUL_SUM":
        return dist._make_nccl_premul_sum(PREMUL_FACTOR)
    if name == "PREMUL_SUM_enum":
        return dist.ReduceOp.PREMUL_SUM
    return getattr(dist.ReduceOp, name)


def try_op(name: str, dtype: torch.dtype, rank: int) -> dict:
    group = dist.new_group(backend="gloo", timeout=GROUP_TIMEOUT)
    tensor = rank_input(rank, dtype)
    try:
        dist.all_reduce(tensor, op=make_op(name), group=group)
        outcome = {"result": h.tensor_data(tensor)}
    except Exception as exc:
        outcome = h.error_data(exc)
        outcome["tensor_after_error"] = h.tensor_data(tensor)
    dist.destroy_process_group(group)
    return outcome


def rank_fn(rank: int, world_size: int, config: dict) -> dict:
    return {
        "inputs": {d: h.tensor_data(rank_input(rank, t)) for d, t in DTYPES.items()},
        "premul_sum_op_built": h.attempt(lambda: str(make_op("PREMUL_SUM").op)),
        "ops": {op: {d: try_op(op, t, rank) for d, t in DTYPES.items()} for op in OPS},
    }


def outcome_text(outcome: dict) -> object:
    if "error" in outcome:
        return f"{outcome['error']['type']}: {outcome['error']['message']}"
    return outcome["result"]


def main() -> None:
    out = h.cli_out(NAME, __file__)
    runs, summary = [], {}
    for world_size in (2, 4):
        config = {"premul_factor": PREMUL_FACTOR, "input": "[rank + 1, 6, 2 ** rank]"}
        ranks = h.expect_ok(h.run(rank_fn, world_size, config))
        runs.append({"world_size": world_size, "config": config, "ranks": ranks})
        ops = ranks[0]["ops"]
        summary[f"world_size_{world_size}"] = {
            op: {d: outcome_text(ops[op][d]) for d in DTYPES} for op in OPS}
        summary[f"world_size_{world_size}"]["same_on_every_rank"] = all(
            outcome_text(r["ops"][op][d]) == outcome_text(ops[op][d])
            for r in ranks for op in OPS for d in DTYPES)
    summary["avg_int64_tensor_after_error"] = [
        r["ops"]["AVG"]["int64"].get("tensor_after_error") for r in runs[0]["ranks"]]
    summary["rejected"] = sorted(
        f"{op}/{d}" for op in OPS for d in DTYPES if "error" in runs[0]["ranks"][0]["ops"][op][d])
    h.record(NAME, ASKS, __file__, runs, summary, out)


if __name__ == "__main__":
    main()
