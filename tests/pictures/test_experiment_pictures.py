"""Pictures of the recordings: the measured side read from the recording, the calculator's
beside it, and the pages that draw them."""

from __future__ import annotations

import json

import pytest

from app.calculator import run
from app.config import ROOT
from app.pictures.experiments import for_experiment

DIRECTORY = ROOT / "question_bank" / "experiments"


def summary(name: str) -> dict:
    return json.loads((DIRECTORY / f"{name}.json").read_text())["summary"]


def test_broadcast_bars_are_the_measured_bytes_of_each_rank():
    broadcast, ops = for_experiment("collective-traffic", summary("collective-traffic"))
    size = 4 * 2**20
    measured = summary("collective-traffic")["bytes_by_rank_up_to_4_MiB"]["broadcast"]["8"]
    assert len(broadcast.body.bars) == 8
    # The root sends 3 copies, rank 1 two, ranks 2-3 one, ranks 4-7 only their notices.
    assert measured["sent"][0] == "3·S + 288"
    top = 3 * size + 288
    assert [round(b.value * top) for b in broadcast.body.bars][:4] == [
        3 * size + 288, 2 * size + 240, size + 144, size + 144]
    calculator = run("collective", op="broadcast", world_size=8, message_bytes=size,
                     algorithm="gloo")["bytes_sent_by_rank"]
    assert all("calculator" in bar.text for bar in broadcast.body.bars)
    assert calculator[0] == 3 * size
    assert [bar.label for bar in ops.body.bars] == ["all-reduce", "all-gather",
                                                     "reduce-scatter", "broadcast", "all-to-all"]


def test_memory_bars_read_the_recorded_bytes():
    even, uneven = for_experiment("zero-memory", summary("zero-memory"))
    recorded = summary("zero-memory")["world_size_4"]
    ddp = recorded["even/ddp/adam/fp32"]["total_unique_bytes"][0]
    top = max(bar.value for bar in even.body.bars)
    assert even.body.bars[0].label == "DDP" and top == 1.0
    assert round(even.body.bars[0].value * ddp) == ddp
    state = recorded["uneven/zero1/adam/fp32"]["state_bytes"]
    assert "3.53 × an even share" in uneven.body.bars[0].text and len(state) == 4


def test_pipeline_pictures_are_the_schedules_as_torch_ran_them():
    figures = for_experiment("pipeline-schedules", summary("pipeline-schedules"))
    assert [f.body.schedule for f in figures] == ["1f1b", "interleaved"]
    recorded = summary("pipeline-schedules")["1f1b_p4_m8"]
    idle_cells = sum(c.slots for c in figures[0].body.cells if c.kind == "bubble"
                     and c.y < figures[0].body.grid_top + 22)  # the first stage's row
    assert idle_cells == recorded["idle_slots_per_stage"][0]
    assert "As torch ran it" in figures[0].title


def test_ddp_bars_compare_with_the_ring():
    (figure,) = for_experiment("ddp-communication-volume", summary("ddp-communication-volume"))
    assert all("ring" in bar.text for bar in figure.body.bars)
    assert len(figure.body.bars) == 4


@pytest.mark.parametrize("name", ["collective-traffic", "zero-memory", "pipeline-schedules",
                                  "ddp-communication-volume"])
def test_experiment_pages_draw_their_pictures(client, name):
    page = client.get(f"/experiments/{name}?lang=fr")
    assert page.status_code == 200
    assert page.text.count('<svg class="picture') >= 1 and 'role="img"' in page.text
