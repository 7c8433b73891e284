"""The structured authoring form's conversion (app/admin/form.py): every bank question
survives a round trip through the form, and what cannot be read is named per field."""

from __future__ import annotations

import pytest
import yaml

from app.admin import form
from app.bank.checks import check_bank, parse_question
from app.bank.loader import canonical
from app.bank.schema import LANGUAGES, QuestionFile
from app.calculator.registry import value_from_text
from app.config import ROOT

FILES = check_bank(ROOT / "question_bank").files
BY_ID = {f.question.id: f.question for f in FILES}


@pytest.fixture(autouse=True)
def restore_the_bank() -> None:
    """Pure functions: no database to put back (overrides tests/admin/conftest.py)."""


def posted(question: QuestionFile) -> list[tuple[str, str]]:
    return form.to_pairs(form.form_from_data(canonical(question)))


@pytest.mark.parametrize("kind", ["numeric", "single_choice", "multi_choice", "open"])
def test_every_bank_question_of_each_kind_round_trips(kind):
    questions = [f.question for f in FILES if f.question.kind == kind]
    assert questions
    for question in questions:
        data = form.data_from_form(posted(question))
        assert canonical(QuestionFile.model_validate(data)) == canonical(question), question.id


def test_the_round_trip_covers_every_feature_of_the_format():
    ring = canonical(BY_ID["ring-allreduce-bytes-per-rank"])
    assert ring["variants"] and len(ring["answer"]["mistakes"]) == 3 and ring["reviewed"]
    steps = canonical(BY_ID["ring-allreduce-steps"])
    assert any("calculator" in c for c in steps["choices"]) and "answer" in steps
    assert any(f.question.evidence for f in FILES)
    assert any(f.question.kind == "open" and f.question.rubric for f in FILES)


def test_text_through_form_to_text_is_the_same_question():
    question = BY_ID["ring-allreduce-bytes-per-rank"]
    parsed, problems = parse_question(form.form_to_text(posted(question)), "(form)")
    assert problems == [] and canonical(parsed) == canonical(question)


def test_the_context_shows_what_an_editor_reads():
    context = form.form_from_data(canonical(BY_ID["ring-allreduce-bytes-per-rank"]))
    assert context["answer"]["calculator"] == "collective"
    assert context["answer"]["params"] == {"op": "all-reduce", "world_size": "8",
                                           "message_bytes": "800 MB"}
    assert context["answer"]["value"] == "1.4 GB"
    assert context["answer"]["tolerance_value"] == "0.02"
    assert "world_size = 4, 8, 16, 64" in context["variants"]
    bits = next(m for m in context["mistakes"] if m["id"] == "bits-for-bytes")
    assert bits["params"] == "" and bits["factor"] == "8.0"  # same params as the answer
    scatter = next(m for m in context["mistakes"] if m["id"] == "reduce-scatter-only")
    assert scatter["params"] == "op=reduce-scatter"  # only what differs
    assert set(scatter["text"]) == set(LANGUAGES) and scatter["text"]["fr"]


@pytest.mark.parametrize("value", ["8", "800 MB", 8, 8.0, 0.5, True, [1, 2], "a, b", " x",
                                   '"quoted"', "null", None, "ring"])
def test_a_typed_value_reads_back_unchanged(value):
    assert value_from_text(form.render_scalar(value)) == value
    assert type(value_from_text(form.render_scalar(value))) is type(value)


def test_variant_values_split_outside_quotes_and_brackets():
    assert form.split_items('4, "a, b", [1, 2], 800 MB,') == ["4", '"a, b"', "[1, 2]",
                                                              "800 MB"]


def base_pairs() -> list[tuple[str, str]]:
    return posted(BY_ID["ring-allreduce-bytes-per-rank"])


def with_field(pairs, name, value):
    return [(k, value if k == name else v) for k, v in pairs]


def test_mistake_overrides_add_change_and_drop_parameters():
    pairs = base_pairs()
    row = next(k for k, v in pairs if k.endswith(".id") and v == "whole-buffer-once")
    prefix = row.removesuffix(".id")
    pairs = with_field(pairs, f"{prefix}.params", "op=broadcast\r\nworld_size=\nalgorithm=ring")
    data = form.data_from_form(pairs)
    mistake = next(m for m in data["answer"]["mistakes"] if m["id"] == "whole-buffer-once")
    assert mistake["calculator"]["params"] == {"op": "broadcast", "message_bytes": "800 MB",
                                               "algorithm": "ring"}


def test_unreadable_fields_are_named_never_guessed():
    pairs = base_pairs()
    row = next(k for k, v in pairs if k.endswith(".id") and v == "bits-for-bytes")
    pairs = with_field(pairs, row.replace(".id", ".params"), "world_size 8")
    pairs = with_field(pairs, "variants", "world_size: 4, 8")
    pairs = with_field(pairs, "extra", "reviewed: [unclosed")
    pairs = with_field(pairs, "answer.other_params", "=3")
    with pytest.raises(form.FormProblems) as caught:
        form.data_from_form(pairs)
    fields = [p.field for p in caught.value.problems]
    assert fields == ["answer.calculator.params", "answer.mistakes[bits-for-bytes].params",
                      "variants", "extra"]
    assert "'world_size 8' is not key=value" in str(caught.value)


def test_a_non_numeric_difficulty_is_a_schema_problem_on_its_field():
    data = form.data_from_form(with_field(base_pairs(), "difficulty", "hard"))
    question, problems = parse_question(form.dump(data), "(form)")
    assert question is None and [p.field for p in problems] == ["difficulty"]


def test_extra_takes_only_reviews_and_evidence():
    with pytest.raises(form.FormProblems, match="holds only evidence"):
        form.data_from_form(with_field(base_pairs(), "extra", "kind: open"))


def test_empty_rows_and_languages_are_left_out():
    pairs = [*base_pairs(), ("mistake.new1.id", ""), ("mistake.new1.text.en", ""),
             ("follow_up", " ")]
    pairs = [(k, "" if k.startswith("t.tr.") or k.endswith(".tr") else v)
             for k, v in pairs]
    data = form.data_from_form(pairs)
    assert "tr" not in data["translations"] and len(data["answer"]["mistakes"]) == 3
    assert "" not in data["follow_ups"]


def test_line_endings_from_a_browser_are_normalised():
    pairs = with_field(base_pairs(), "t.en.prompt", "line one\r\nline two\r\n")
    assert form.data_from_form(pairs)["translations"]["en"]["prompt"] == "line one\nline two\n"


def test_fields_of_other_kinds_are_ignored():
    pairs = with_field(base_pairs(), "kind", "open")
    pairs += [("rubric.r1.id", "one"), ("rubric.r1.text.en", "The first point")]
    data = form.data_from_form(pairs)
    assert "answer" not in data and data["rubric"] == ["one"]
    assert data["translations"]["en"]["rubric"] == {"one": "The first point"}
    assert "mistakes" not in data["translations"]["en"]


def test_new_question_form_dumps_to_yaml():
    context = form.new_question()
    data = form.data_from_form(form.to_pairs(context))
    assert yaml.safe_load(form.dump(data))["kind"] == "numeric" and "answer" not in data
    assert set(context["t"]) == set(LANGUAGES)


def test_a_new_mistake_left_empty_uses_the_answer_calculator_and_output():
    pairs = [*base_pairs(), ("mistake.new1.id", "half"), ("mistake.new1.factor", "0.5")]
    mistake = form.data_from_form(pairs)["answer"]["mistakes"][-1]
    assert mistake == {"id": "half", "calculator": {
        "name": "collective", "output": "bytes_sent_per_rank", "factor": 0.5,
        "params": {"op": "all-reduce", "world_size": 8, "message_bytes": "800 MB"}}}
