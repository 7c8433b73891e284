"""In which order do torch's pipeline schedules really run forwards and backwards, and how
much of each stage's time is idle?

`torch.distributed.pipelining` ships GPipe, 1F1B and interleaved 1F1B. The textbook
describes their order and their bubble (p−1)/(v·m); this experiment runs them on a stack
of eight `nn.Linear` layers split by hand into one `PipelineStage` per rank (two per rank
for the interleaved schedule), at 2 and 4 ranks and 4 and 8 micro-batches, and records
each forward and backward a stage actually executes, in the order it ran, by wrapping the
stage's `forward_one_chunk` and `backward_one_chunk` (the submodule's own forward and
backward hooks confirm the wrapped calls are where the computation happens). The plan the
schedule exposes as `pipeline_order` is recorded next to it.

The timeline is then derived from the executed orders, not from a formula: every forward
and every backward of one micro-batch on one stage takes one slot (the convention of
`app/calculator/pipeline.py` and `app/pictures/pipeline.py`), each rank keeps the order it
ran, and an action starts as soon as its rank is free and its input exists (the forward of
the previous stage, the backward of the next stage, or the same micro-batch's forward on
the last stage). The idle slots of each rank in that timeline are the bubble. Two more
configurations probe the schedules' limits: 1F1B with fewer micro-batches than stages,
and interleaved 1F1B with a micro-batch count that is not a multiple of the number of
ranks. Wall-clock timestamps (each action also sleeps a fixed time so that it dominates the
communication) are kept under `timing`, since they vary from run to run.
"""

import time
import warnings

import _harness as h
import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.pipelining import (
    PipelineStage,
    Schedule1F1B,
    ScheduleGPipe,
    ScheduleInterleaved1F1B,
)

NAME = "pipeline-schedules"
ASKS = ("In which order do torch's ScheduleGPipe, Schedule1F1B and ScheduleInterleaved1F1B "
        "(2 stages per rank) run forwards and backwards on each stage, at 2 and 4 ranks and "
        "4 and 8 micro-batches, and how many slots is each stage idle when a forward and a "
        "backward take one slot each?")
WIDTH = 8
LAYERS = 8  # nn.Linear(WIDTH, WIDTH) layers, split evenly over the (virtual) stages
MICROBATCH_SIZE = 2
INTERLEAVED_CHUNKS = 2  # stages per rank for ScheduleInterleaved1F1B
STEPS = 2  # the first step also sets the stages up (P2P warm-up); both orders are recorded
SLOT_SECONDS = 0.01  # sleep per action, for the wall-clock timing only
# (schedule, ranks, micro-batches): the grid, then two runs at the schedules' limits.
CONFIGS = [(s, p, m) for p in (2, 4) for m in (4, 8) for s in ("gpipe", "1f1b", "interleaved")]
CONFIGS += [("1f1b", 4, 2), ("interleaved", 4, 6)]
# The first stage's input needs no gradient, so its full backward hook fires on the output
# gradients instead, which torch warns about; that is still inside the backward call.
warnings.filterwarnings("ignore", message="Full backward hook is firing")
SCHEDULES = {"gpipe": ScheduleGPipe, "1f1b": Schedule1F1B,
             "interleaved": ScheduleInterleaved1F1B}


def build_model() -> nn.Sequential:
    torch.manual_seed(0)
    return nn.Sequential(*(nn.Linear(WIDTH, WIDTH) for _ in range(LAYERS)))


def batch(microbatches: int) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(1)
    size = MICROBATCH_SIZE * microbatches
    return (torch.randn(size, WIDTH, generator=generator),
            torch.randn(size, WIDTH, generator=generator))


def loss_fn(output: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return nn.functional.mse_loss(output, target)


class Recorder:
    """Logs every forward and backward a rank's stages execute, in execution order."""

    def __init__(self) -> None:
        self.events: list[str] = []  # torch's notation: "2F1" = stage 2, forward, mb 1
        self.hooks: list[str] = []  # "2F" / "2B": the submodule's hooks, in firing order
        self.times: list[list[float]] = []
        self.stashed: list[int] = []  # chunks in the stages' fwd_cache after each call
        self.stages: list[PipelineStage] = []
        self.sleep = 0.0

    def wrap(self, stage: PipelineStage) -> None:
        forward, backward = stage.forward_one_chunk, stage.backward_one_chunk
        index = stage.stage_index
        self.stages.append(stage)

        def forward_one_chunk(mb: int, *args: object, **kwargs: object) -> object:
            return self.timed(f"{index}F{mb}", forward, mb, *args, **kwargs)

        def backward_one_chunk(mb: int, *args: object, **kwargs: object) -> object:
            return self.timed(f"{index}B{mb}", backward, mb, *args, **kwargs)

        stage.forward_one_chunk = forward_one_chunk
        stage.backward_one_chunk = backward_one_chunk
        stage.submod.register_forward_hook(lambda *_: self.hooks.append(f"{index}F"))
        stage.submod.register_full_backward_hook(lambda *_: self.hooks.append(f"{index}B"))

    def timed(self, name: str, call: object, *args: object, **kwargs: object) -> object:
        self.events.append(name)
        self.hooks.append(f"call {name}")
        start = time.monotonic()
        result = call(*args, **kwargs)
        # The forward's inputs and outputs wait in fwd_cache until its backward pops them.
        self.stashed.append(sum(len(s.fwd_cache) for s in self.stages))
        time.sleep(self.sleep)
        self.times.append([start, time.monotonic()])
        return result


def hooks_inside_calls(hooks: list[str]) -> bool:
    """Whether every call is followed by exactly its own stage's hook of the same kind."""
    calls = [i for i, e in enumerate(hooks) if e.startswith("call ")]
    for i in calls:
        kind = hooks[i][5:].rstrip("0123456789")  # "call 2F1" -> "2F"
        following = hooks[i + 1: next((c for c in calls if c > i), len(hooks))]
        if following != [kind]:
            return False
    return True


def action_text(action: object) -> str | None:
    return None if action is None else str(action)


def run_schedule(name: str, m: int, rank: int, world_size: int) -> dict:
    """One schedule, two steps: what this rank ran, its plan, and its gradients' check."""
    chunks = INTERLEAVED_CHUNKS if name == "interleaved" else 1
    total = world_size * chunks
    per_stage = LAYERS // total
    model = build_model()
    indices = [c * world_size + rank for c in range(chunks)]  # Megatron's placement
    # Shapes given up front (STATIC metadata): inferring them sends pickled objects between
    # ranks, which needs NumPy, absent from the experiments' environment. requires_grad
    # marks the activations whose gradients travel back (all but the model's input).
    def example(requires_grad: bool) -> torch.Tensor:
        return torch.empty(MICROBATCH_SIZE, WIDTH, requires_grad=requires_grad)

    stages = [PipelineStage(model[s * per_stage:(s + 1) * per_stage], s, total,
                            torch.device("cpu"), input_args=example(s > 0),
                            output_args=example(True))
              for s in indices]
    recorder = Recorder()
    for stage in stages:
        recorder.wrap(stage)
    cls = SCHEDULES[name]
    built = h.attempt(lambda: cls(stages if chunks > 1 else stages[0], m, loss_fn=loss_fn))
    if isinstance(built, dict):  # the schedule refused the configuration
        return built
    schedule = built
    x, target = batch(m)
    steps = []
    for step in range(STEPS):
        model.zero_grad()
        recorder.events, recorder.hooks, recorder.times, recorder.stashed = [], [], [], []
        recorder.sleep = SLOT_SECONDS if step == STEPS - 1 else 0.0
        dist.barrier()
        outcome = h.attempt(lambda: schedule.step(
            x if rank == 0 else None, target=target if rank == world_size - 1 else None))
        if isinstance(outcome, dict):
            return outcome
        steps.append({"executed": recorder.events, "hook_count": len(
            [e for e in recorder.hooks if not e.startswith("call ")]),
            "hooks_inside_calls": hooks_inside_calls(recorder.hooks),
            "max_stashed": max(recorder.stashed),
            **({"timing": {"actions": recorder.times}} if recorder.sleep else {})})
    # A reference run of the whole model on the whole batch: the mean of the micro-batch
    # losses equals the full-batch MSE, so the gradients must match.
    reference = build_model()
    loss_fn(reference(x), target).backward()
    own = [p for s in indices for layer in range(s * per_stage, (s + 1) * per_stage)
           for p in model[layer].parameters()]
    expected = [p for s in indices for layer in range(s * per_stage, (s + 1) * per_stage)
                for p in reference[layer].parameters()]
    order = schedule.pipeline_order
    return {
        "stage_indices": indices,
        "steps": steps,
        "pipeline_order": [action_text(a) for a in order[rank]],
        "grads_match_reference": all(torch.allclose(a.grad, b.grad, atol=1e-6)
                                     for a, b in zip(own, expected, strict=True)),
    }


def rank_fn(rank: int, world_size: int, config: dict) -> dict:
    # The schedules run one after the other in the same process group, each with fresh
    # stages: cheaper than one group per schedule, and the orders do not depend on it.
    return {name: run_schedule(name, config["microbatches"], rank, world_size)
            for name in config["schedules"]}


def parse(action: str) -> tuple[str, int, int]:
    """'2B1' -> ('B', 2, 1): kind, stage, micro-batch."""
    kind = "F" if "F" in action else "B"
    stage, mb = action.split(kind)
    return kind, int(stage), int(mb)


def derive_timeline(executed: list[list[str]], total: int) -> list[list[str | None]]:
    """Each rank's slots (its action or None) with one slot per action, as soon as possible.

    Every rank keeps the order it executed; an action waits for its rank and for its input:
    F(s, j) for F(s + 1, j), B(s + 1, j) for B(s, j), F(last, j) for B(last, j).
    """
    done: dict[tuple[str, int, int], int] = {}
    free = [0] * len(executed)
    nxt = [0] * len(executed)
    placed: list[list[tuple[int, str]]] = [[] for _ in executed]
    while any(n < len(o) for n, o in zip(nxt, executed, strict=True)):
        moved = False
        for rank, order in enumerate(executed):
            while nxt[rank] < len(order):
                kind, stage, mb = parse(order[nxt[rank]])
                if kind == "F":
                    dep = None if stage == 0 else ("F", stage - 1, mb)
                else:
                    dep = ("F", stage, mb) if stage == total - 1 else ("B", stage + 1, mb)
                if dep is not None and dep not in done:
                    break
                start = max(free[rank], done[dep] if dep else 0)
                done[(kind, stage, mb)] = free[rank] = start + 1
                placed[rank].append((start, order[nxt[rank]]))
                nxt[rank] += 1
                moved = True
        if not moved:
            raise RuntimeError(f"the executed orders deadlock: {executed}")
    grid: list[list[str | None]] = [[None] * max(free) for _ in executed]
    for rank, ops in enumerate(placed):
        for start, op in ops:
            grid[rank][start] = op
    return grid


def measured(ranks: list[dict]) -> dict:
    """Wall-clock busy and idle milliseconds per rank over the whole last step."""
    times = [r["steps"][-1]["timing"]["actions"] for r in ranks]
    start = min(t[0][0] for t in times)
    end = max(t[-1][1] for t in times)
    busy = [sum(b - a for a, b in t) for t in times]
    return {"step_ms": round(1000 * (end - start), 1),
            "busy_ms": [round(1000 * b, 1) for b in busy],
            "idle_fraction": [round(1 - b / (end - start), 3) for b in busy]}


def summarize(name: str, p: int, ranks: list[dict]) -> dict:
    """The recorded orders and plans side by side, and the timeline derived from the orders."""
    if any("error" in r for r in ranks):
        errors = [r.get("error") for r in ranks]
        return {"error": errors[0], "same_on_every_rank": all(e == errors[0] for e in errors)}
    chunks = INTERLEAVED_CHUNKS if name == "interleaved" else 1
    executed = [r["steps"][-1]["executed"] for r in ranks]
    grid = derive_timeline(executed, p * chunks)
    slots = len(grid[0])
    idle = [row.count(None) for row in grid]
    plans = [r["pipeline_order"] for r in ranks]
    return {
        "stages_per_rank": chunks,
        "executed_order": executed,
        "same_order_every_step": all(
            s["executed"] == r["steps"][0]["executed"] for r in ranks for s in r["steps"]),
        "hooks_inside_calls": all(s["hooks_inside_calls"] for r in ranks for s in r["steps"]),
        "hook_count_per_step": [[s["hook_count"] for s in r["steps"]] for r in ranks],
        "grads_match_reference": all(r["grads_match_reference"] for r in ranks),
        "pipeline_order": plans,
        "pipeline_order_compute_matches_executed": [
            [a for a in plan if a is not None and parse_compute(a)] == run
            for plan, run in zip(plans, executed, strict=True)],
        # torch's own plan: its length and its idle (None) steps, per rank.
        "pipeline_order_steps": [len(plan) for plan in plans],
        "pipeline_order_idle": [plan.count(None) for plan in plans],
        "max_stashed_chunks": [r["steps"][-1]["max_stashed"] for r in ranks],
        "timeline": grid,
        "slots_per_stage": slots,
        "idle_slots_per_stage": idle,
        "bubble_fraction_of_total": [i / slots for i in idle],
        "bubble_over_ideal": [i / (slots - i) for i in idle],
        "timing": measured(ranks),
    }


def parse_compute(action: str) -> bool:
    """Whether a plan entry such as '1F0', '1B3' or '1R' is a forward or a full backward."""
    body = action.lstrip("0123456789")
    return body[:1] in ("F", "B") and body[1:].isdigit()


def main() -> None:
    out = h.cli_out(NAME, __file__)
    runs, summary = [], {}
    groups: dict[tuple[int, int], list[str]] = {}
    for name, p, m in CONFIGS:
        groups.setdefault((p, m), []).append(name)
    for (p, m), names in groups.items():
        config = {"microbatches": m, "schedules": names}
        ranks = h.run(rank_fn, p, config)
        runs.append({"world_size": p, "config": config, "ranks": ranks})
        for name in names:
            summary[f"{name}_p{p}_m{m}"] = {
                "schedule": name, "stages": p, "microbatches": m,
                **summarize(name, p, [r.get(name, r) for r in ranks])}
    h.record(NAME, ASKS, __file__, runs, summary, out)


if __name__ == "__main__":
    main()
