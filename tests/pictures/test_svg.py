"""Each picture's SVG: its structure, and that the numbers written on it are the calculator's.

Figures are drawn with the same template the pages use and parsed with xml.etree, so
they must be well-formed XML; presentation attributes only (the CSP forbids inline
style); a <title> and a <desc> the SVG's aria-labelledby names.
"""

from __future__ import annotations

import math

import pytest

from app.calculator import get, run
from app.calculator.collectives import SUPPORTED
from app.pictures import collective, for_call, for_evaluation, topic_bars, trend
from app.pictures.common import quantity, short_bytes
from tests.pictures.conftest import by_class, draw, svg_of, texts

RING = {"op": "all-reduce", "world_size": 8, "message_bytes": "800MB"}


def figure(name, params, kind, **extra):
    figs = for_evaluation(get(name).evaluate(params), "t", extra)
    return next(f for f in figs if f.kind == kind)


def assert_accessible(svg, fig):
    assert svg.get("role") == "img"
    assert svg.get("viewBox") == f"0 0 {round(fig.width, 1)} {round(fig.height, 1)}"
    # Its own size makes the smallest label (10 units, 8 in pipelines) 11 px unstretched.
    scale = 1.375 if fig.kind == "pipeline" else 1.1
    assert float(svg.get("width")) == pytest.approx(fig.width * scale, abs=0.1)
    title, desc = svg.find("title"), svg.find("desc")
    assert title is not None and title.text == fig.title
    assert desc is not None and desc.text.strip()
    assert svg.get("aria-labelledby") == f"{title.get('id')} {desc.get('id')}"
    assert all(e.get("style") is None for e in svg.iter())
    assert all(e.tag != "style" and e.tag != "script" for e in svg.iter())


@pytest.mark.parametrize("n", range(2, 9))
def test_ring_steps_small_multiples(n):
    params = {**RING, "world_size": n}
    outputs = run("collective", **params)
    fig = figure("collective", params, "steps")
    svg = svg_of(fig)
    assert_accessible(svg, fig)
    steps = by_class(svg, "step")
    assert len(steps) == 2 * (n - 1) == outputs["steps"]
    assert [s.get("data-phase") for s in steps] == (["reduce-scatter"] * (n - 1)
                                                   + ["all-gather"] * (n - 1))
    for step in steps:
        assert len(by_class(step, "rank")) == n
        transfers = by_class(step, "transfer")
        assert len(transfers) == n  # every rank sends one chunk per step
        assert {t.get("data-chunk") for t in transfers} == set("ABCDEFGH"[:n])
        assert math.isclose(float(step.get("data-bytes")), 800e6 / n)
        assert short_bytes(800e6 / n) in texts(step)
    total = next(e for e in by_class(svg, "line") if e.get("data-value"))
    assert math.isclose(float(total.get("data-value")), outputs["bytes_sent_per_rank"])
    assert quantity(outputs["bytes_sent_per_rank"], "B") in total.text


def test_ring_beyond_eight_ranks_is_a_summary_with_the_calculators_numbers():
    params = {**RING, "world_size": 64}
    outputs = run("collective", **params)
    svg = svg_of(figure("collective", params, "steps"))
    body = by_class(svg, "steps-body")[0]
    assert body.get("data-summary") == "true" and body.get("data-world-size") == "64"
    assert len(by_class(svg, "step")) == 1 and len(by_class(svg, "rank")) == 7
    values = [float(e.get("data-value")) for e in by_class(svg, "line") if e.get("data-value")]
    assert values == [800e6 / 64, outputs["bytes_sent_per_rank"]]
    assert any(f"{outputs['steps']} steps" in t for t in texts(svg))


@pytest.mark.parametrize(("algorithm", "n", "steps"), [("tree", 6, 6), ("tree", 8, 6),
                                                       ("recursive-doubling", 8, 3)])
def test_tree_and_recursive_doubling_steps(algorithm, n, steps):
    params = {**RING, "algorithm": algorithm, "world_size": n}
    svg = svg_of(figure("collective", params, "steps"))
    drawn = by_class(svg, "step")
    assert len(drawn) == steps == run("collective", **params)["steps"]
    assert all(len(by_class(s, "rank")) == n for s in drawn)
    if algorithm == "recursive-doubling":  # n/2 pairs, each an arrow with two heads
        assert all(len(by_class(s, "transfer")) == n // 2 for s in drawn)
        assert all(len(t.findall("polygon")) == 2 for s in drawn for t in by_class(s, "transfer"))


@pytest.mark.parametrize("op", ["all-reduce", "all-gather", "broadcast"])
def test_algorithms_compared_with_the_calculators_numbers(op):
    params = {"op": op, "world_size": 8, "message_bytes": "1GB", "alpha_s": "5us",
              "bandwidth_bytes_per_s": "100Gbit/s"}
    fig = figure("collective", params, "compare")
    svg = svg_of(fig)
    assert_accessible(svg, fig)
    groups = by_class(svg, "group")
    assert [g.get("data-metric") for g in groups] == ["steps", "bytes_sent_per_rank", "time_s"]
    for group in groups:
        bars = by_class(group, "bar")
        assert [b.get("data-algorithm") for b in bars] == list(SUPPORTED[op])
        for bar in bars:
            expected = run("collective", **{**params, "algorithm": bar.get("data-algorithm")})
            assert math.isclose(float(bar.get("data-value")), expected[group.get("data-metric")])
        assert [b.get("data-chosen") for b in bars].count("true") == 1
    ring = by_class(groups[0], "bar")[0]
    assert len(ring.findall("rect")) == run("collective", **params)["steps"]  # one per step


def test_power_of_two_algorithms_say_why_they_are_missing():
    svg = svg_of(figure("collective", {**RING, "world_size": 6}, "compare"))
    missing = [b for b in by_class(svg, "bar") if b.get("data-value") is None]
    assert {b.get("data-algorithm") for b in missing} == {"recursive-doubling", "rabenseifner"}
    assert all("power-of-two" in "".join(b.itertext()) for b in missing)


def test_traffic_and_time_against_world_size():
    params = {**RING, "message_bytes": "8B", "alpha_s": "5us",
              "bandwidth_bytes_per_s": "100Gbit/s"}
    fig = figure("collective", params, "scaling")
    svg = svg_of(fig)
    assert_accessible(svg, fig)
    sizes = collective.world_sizes(8)
    plots = by_class(svg, "plot")
    assert [p.get("data-metric") for p in plots] == ["bytes_sent_per_rank", "time_s"]
    for plot in plots:
        series = by_class(plot, "series")
        assert [s.get("data-algorithm") for s in series] == list(SUPPORTED["all-reduce"])
        for s in series:
            points = by_class(s, "point")
            assert [int(p.get("data-p")) for p in points] == sizes
            for point in points[::3]:
                expected = run("collective", **{**params, "algorithm": s.get("data-algorithm"),
                                                "world_size": int(point.get("data-p"))})
                assert math.isclose(float(point.get("data-value")),
                                    expected[plot.get("data-metric")])
        assert len(by_class(plot, "current")) == 1
    # A tiny message is latency-bound: tree beats ring from some size on, and it is said.
    ring = run("collective", **{**params, "world_size": 1024})["time_s"]
    tree = run("collective", **{**params, "algorithm": "tree", "world_size": 1024})["time_s"]
    assert tree < ring
    assert any(t.startswith("Fastest:") for t in texts(svg))
    assert any(t.startswith("Fewest bytes: ring for p = 2–1024") for t in texts(svg))


def test_times_are_drawn_with_assumed_alpha_beta_and_say_so():
    fig = figure("collective", RING, "scaling")
    assert fig.notes and "not given" in fig.notes[0]
    assert any("not given" in t for t in texts(svg_of(fig)))


@pytest.mark.parametrize("stage", [0, 1, 2, 3])
def test_memory_bars_for_zero_stages(stage):
    params = {"params": "7.5e9", "zero_stage": stage, "dp": 64, "device_bytes": "80GB"}
    fig = figure("model-memory", params, "stacked-bars")
    svg = svg_of(fig)
    assert_accessible(svg, fig)
    bars = by_class(svg, "bar")
    assert [b.get("data-key") for b in bars] == ["0", "1", "2", "3"]
    assert [b.get("data-chosen") for b in bars] == [str(s == stage).lower() for s in range(4)]
    for s, bar in enumerate(bars):
        outputs = run("model-memory", **{**params, "zero_stage": s})
        segments = by_class(bar, "segment")
        assert [g.get("data-part") for g in segments] == ["param_bytes", "grad_bytes",
                                                          "optimizer_bytes"]
        for segment in segments:
            assert math.isclose(float(segment.get("data-value")),
                                outputs[segment.get("data-part")])
        total = by_class(bar, "total")[0]
        assert math.isclose(float(total.get("data-value")), outputs["total_bytes"])
        assert " GB / " in total.text and total.text.endswith(" GiB")
    marker = by_class(svg, "marker")[0]
    assert float(marker.get("data-value")) == 80e9


def test_memory_bars_stack_activations_when_given():
    svg = svg_of(figure("model-memory", {"params": "7e9", "dp": 8}, "stacked-bars",
                        activation_bytes=10e9))
    for bar in by_class(svg, "bar"):
        parts = by_class(bar, "segment")
        assert parts[-1].get("data-part") == "activation_bytes"
        assert float(parts[-1].get("data-value")) == 10e9
    assert len(by_class(svg, "legend")) == 4


def test_activation_bars_by_recomputation():
    params = {"seq_len": 2048, "micro_batch": 1, "hidden": 12288, "heads": 96, "tp": 8,
              "sequence_parallel": True, "recompute": "selective"}
    svg = svg_of(figure("activation-memory", params, "stacked-bars"))
    bars = by_class(svg, "bar")
    assert [b.get("data-key") for b in bars] == ["none", "selective", "full"]
    assert [b.get("data-chosen") for b in bars] == ["false", "true", "false"]
    for bar in bars:
        expected = run("activation-memory", **{**params, "recompute": bar.get("data-key")})
        assert math.isclose(float(bar.get("data-total")), expected["total_bytes"])


@pytest.mark.parametrize(("p", "m", "schedule", "v"), [
    (4, 8, "gpipe", 1), (4, 8, "1f1b", 1), (4, 8, "interleaved", 2), (2, 4, "1f1b", 1)])
def test_pipeline_timeline_cells(p, m, schedule, v):
    params = {"stages": p, "microbatches": m, "schedule": schedule, "virtual_stages": v}
    outputs = run("pipeline-bubble", **params)
    fig = figure("pipeline-bubble", params, "pipeline")
    svg = svg_of(fig)
    assert_accessible(svg, fig)
    body = by_class(svg, "pipeline-body")[0]
    assert body.get("data-summary") == "false" and not by_class(svg, "cut")
    cells = [c for c in by_class(svg, "cell") if "legend" not in (c.get("class") or "")]
    forward = [c for c in cells if "forward" in c.get("class")]
    backward = [c for c in cells if "backward" in c.get("class")]
    bubbles = [c for c in cells if "bubble" in c.get("class")]
    assert len(forward) == len(backward) == p * m * v
    assert sum(int(b.get("data-slots")) for b in bubbles) == p * 2 * (p - 1)
    assert len(by_class(svg, "stage")) == p
    slots = int(body.get("data-slots"))
    idle = int(body.get("data-idle"))
    assert math.isclose(idle / slots, outputs["bubble_fraction_of_total"])
    written = [float(e.get("data-value")) for e in by_class(svg, "line") if e.get("data-value")]
    assert written == [outputs["bubble_fraction_of_total"], outputs["bubble_over_ideal"],
                       outputs["inflight_microbatches"]]
    assert any(t.startswith("Bubble: ") and "%" in t for t in texts(svg))


def test_pipeline_cuts_the_busy_middle_and_counts_what_it_cut():
    p, m, v = 8, 32, 2
    svg = svg_of(figure("pipeline-bubble", {"stages": p, "microbatches": m,
                                            "schedule": "interleaved", "virtual_stages": v},
                        "pipeline"))
    cuts = by_class(svg, "cut")
    assert cuts
    cells = by_class(svg, "cell")
    forward = sum(1 for c in cells if c.get("class") == "cell forward")
    backward = sum(1 for c in cells if c.get("class") == "cell backward")
    assert forward + sum(int(c.get("data-forward")) for c in cuts) == p * m * v
    assert backward + sum(int(c.get("data-backward")) for c in cuts) == p * m * v


def test_pipeline_too_large_is_drawn_as_totals():
    svg = svg_of(figure("pipeline-bubble", {"stages": 64, "microbatches": 128}, "pipeline"))
    assert by_class(svg, "pipeline-body")[0].get("data-summary") == "true"
    cells = {c.get("class"): int(c.get("data-slots")) for c in by_class(svg, "cell")}
    assert cells == {"cell forward": 128, "cell backward": 128, "cell bubble": 126}


def test_progress_bars_and_trend():
    bars = topic_bars([("Collectives", 0.75, 4), ("ZeRO", 0.5, 2)], "acc", "Accuracy by topic")
    svg = svg_of(bars)
    assert_accessible(svg, bars)
    assert [float(b.get("data-value")) for b in by_class(svg, "bar")] == [0.75, 0.5]
    assert "75% · 4 answers" in texts(svg)
    days = [{"day": "2025-01-01", "accuracy": 0.5, "answers": 2},
            {"day": "2025-01-08", "accuracy": 1.0, "answers": 1}]
    line = trend(days, "trend", "Accuracy over time")
    svg = svg_of(line)
    assert_accessible(svg, line)
    points = by_class(svg, "point")
    assert [float(p.get("data-value")) for p in points] == [0.5, 1.0]
    assert "Jan 1, 2025" in texts(svg)


def test_text_alternative_is_a_table_of_the_same_numbers():
    html = draw(figure("model-memory", {"params": "7.5e9", "dp": 64}, "stacked-bars"))
    assert '<details class="picture-data">' in html and "<table" in html
    assert "120 GB / 111.8 GiB" in html  # stage 0, in the SVG and in the table
    assert html.count("120 GB / 111.8 GiB") >= 3  # bar label, desc, table


@pytest.mark.parametrize(("lang_code", "label"), [("fr", "Étape 1"), ("tr", "Adım 1"),
                                                  ("zh", "第 1 步")])
def test_labels_are_translated(lang, lang_code, label):
    lang(lang_code)
    assert label in texts(svg_of(figure("collective", RING, "steps")))


def test_numbers_follow_the_locale(lang):
    lang("fr")
    svg = svg_of(figure("pipeline-bubble", {"stages": 4, "microbatches": 8}, "pipeline"))
    assert any("27,3" in t for t in texts(svg))


def test_calculators_without_pictures_and_bad_input_draw_nothing():
    assert for_call("mfu", {}) == []
    assert for_call("collective", {"op": "all-reduce", "world_size": 0,
                                   "message_bytes": 1}) == []


def test_drawn_markup_is_the_figures_of_that_call_in_that_language(lang):
    """Pages use the cached markup of ``drawn``; it must be what drawing the call's
    figures gives, and never another language's (the cache key holds the language)."""
    from app.web.templating import drawn, templates

    macro = templates.env.get_template("pictures/figure.html").module.figures
    for code, label in (("en", "Step 1"), ("fr", "Étape 1"), ("zh", "第 1 步")):
        lang(code)
        markup = drawn("collective", RING, "calc", "Pictures")
        assert markup == macro(for_call("collective", RING, "calc"), "Pictures")
        assert label in markup
    assert drawn("mfu", {}, "x") == ""


@pytest.mark.parametrize("lang", ["en", "fr", "tr", "zh"])
def test_topic_labels_fit_inside_the_picture(lang):
    """Every topic's name is drawn whole: the left end of its text stays in the picture."""
    from app.i18n import current_language
    from app.pictures.common import text_width
    from app.web.labels import translated

    token = current_language.set(lang)
    try:
        names = list(translated(lang)["topic"].values())
        bars = topic_bars([(name, 0.5, 3) for name in names], "t", "Accuracy by topic")
    finally:
        current_language.reset(token)
    left = bars.body.x0 - 8  # labels are right-aligned there
    assert all(left - text_width(name, 12) >= 0 for name in names)
    assert bars.width >= bars.body.x0 + bars.body.full + 100
