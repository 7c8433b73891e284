"""The format of one question file, as pydantic models.

Files are read with ``yaml.safe_load`` and validated here; ``ringside bank schema``
exports the JSON Schema of :class:`QuestionFile` for editors. Everything structural
(kinds, calculator calls, variants) is language-independent; every sentence lives
under ``translations.<lang>``.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    StringConstraints,
    Tag,
    model_validator,
)

LANGUAGES = ("en", "fr", "tr", "zh")
# Topic slugs; their display names (translated) are in app/web/labels.py.
TOPICS = ("collectives", "data-parallel", "bucketing", "memory", "zero-fsdp", "tensor-parallel",
          "pipeline-parallel", "long-context", "moe", "parallelism-strategy", "hardware",
          "low-precision", "efficiency", "fault-tolerance", "frameworks")
SENIORITIES = ("junior", "mid", "senior")
KINDS = ("single_choice", "multi_choice", "numeric", "open")

Slug = Annotated[str, StringConstraints(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$", max_length=80)]
Text = Annotated[str, StringConstraints(min_length=1, max_length=20_000)]
Scalar = int | float | str | bool
ParamValue = Scalar | list[Any]
PLACEHOLDER = re.compile(r"\{([a-z_][a-z0-9_]*)\}")


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CalculatorCall(Strict):
    """A calculator run whose ``output`` is a number: the answer, a mistake or a choice."""

    name: Slug
    output: Annotated[str, StringConstraints(pattern=r"^[a-z_]+(\[\d+\])?$")] = Field(
        description="an output name; a list output takes an index, e.g. synced_grad[0]")
    params: dict[str, ParamValue] = Field(default_factory=dict)
    factor: float = Field(default=1.0, description="multiplies the output (e.g. 0.5 for a "
                          "candidate who forgets a factor of two)")


class Tolerance(Strict):
    """Moodle's semantics.

    relative: |x−a| ≤ t·|a|; absolute: |x−a| ≤ t; geometric: a/(1+t) ≤ x ≤ a·(1+t).
    """

    type: Literal["relative", "absolute", "geometric"] = "relative"
    value: float = Field(default=0.01, ge=0)


class Mistake(Strict):
    """A named wrong answer, computed by the calculator, never typed."""

    id: Slug
    calculator: CalculatorCall


class NumericAnswer(Strict):
    calculator: CalculatorCall
    value: Scalar = Field(description="the expected value with its unit, e.g. '1.4 GB'; "
                          "a plain number for unitless outputs")
    unit: str | None = Field(default=None, max_length=20, description="the unit the prompt "
                             "asks for ('GB', 'ms', 'min'; '%' for a percentage); a bare "
                             "number is read in it. None for counts and plain numbers")
    tolerance: Tolerance = Tolerance()
    mistakes: list[Mistake] = Field(default_factory=list)


class ChoiceAnswer(Strict):
    """For a numeric choice question: the calculation the correct choice must equal."""

    calculator: CalculatorCall
    tolerance: Tolerance = Tolerance()


class Choice(Strict):
    key: Annotated[str, StringConstraints(pattern=r"^[a-z]$")]
    correct: bool = False
    value: Scalar | None = Field(default=None, description="the number a numeric choice "
                                 "stands for, with its unit")
    calculator: CalculatorCall | None = Field(default=None, description="how a numeric "
                                              "choice is computed (the misconception it models)")


class Evidence(Strict):
    """A value recorded by an experiment in question_bank/experiments/<experiment>.json."""

    experiment: Slug
    path: Annotated[str, StringConstraints(min_length=1, max_length=200)]
    value: Any


# English is the text the technical review reads; the other languages get their own.
REVIEW_SCOPES = ("technical", *LANGUAGES[1:])


class Review(Strict):
    """A reading whose only job was to find errors: the facts (``technical``) or one language."""

    by: Annotated[str, StringConstraints(min_length=1, max_length=200)]
    at: date
    scope: Literal[REVIEW_SCOPES] = "technical"  # type: ignore[valid-type]


class Guidance(Strict):
    why_asked: Text
    structure: list[Text] = Field(min_length=2)
    model_answer: Text


class SpokenFollowUp(Strict):
    """A follow-up the interviewer asks aloud, with what a good spoken answer says.

    ``points`` are the key points a candidate ticks (and the report shows) for it; every
    language has the same follow-ups with the same number of points, in the same order.
    """

    ask: Text
    answer: Text | None = Field(default=None, description="a short model answer")
    points: list[Text] = Field(default_factory=list, max_length=4,
                               description="2 to 4 key points of a good answer")

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, data: Any) -> Any:
        """A bare string is a follow-up still without its answer (an import, an old file);
        ``bank check`` asks for the answer and points."""
        return {"ask": data} if isinstance(data, str) else data


class Translation(Strict):
    title: Annotated[str, StringConstraints(min_length=1, max_length=160)]
    prompt: Text
    explanation: Text
    mistakes: dict[str, Text] = Field(default_factory=dict)
    choices: dict[str, Text] = Field(default_factory=dict)
    choice_feedback: dict[str, Text] = Field(default_factory=dict)
    rubric: dict[str, Text] = Field(default_factory=dict)
    follow_ups: list[SpokenFollowUp] = Field(min_length=2)
    guidance: Guidance


def _answer_model(answer: Any) -> str:
    """A numeric answer states a value; a choice question's answer only has a calculator."""
    if isinstance(answer, dict):
        return "NumericAnswer" if {"value", "mistakes"} & answer.keys() else "ChoiceAnswer"
    return type(answer).__name__


class QuestionFile(Strict):
    """One question: ``question_bank/questions/<topic>/<id>.yaml``."""

    id: Slug
    topic: Literal[TOPICS]  # type: ignore[valid-type]
    tags: list[Slug] = Field(default_factory=list)
    seniority: Literal[SENIORITIES]  # type: ignore[valid-type]
    difficulty: int = Field(ge=1, le=3)
    kind: Literal[KINDS]  # type: ignore[valid-type]
    answer: Annotated[
        Annotated[NumericAnswer, Tag("NumericAnswer")]
        | Annotated[ChoiceAnswer, Tag("ChoiceAnswer")],
        Discriminator(_answer_model),
    ] | None = None
    variants: dict[str, list[ParamValue]] = Field(default_factory=dict)
    choices: list[Choice] = Field(default_factory=list)
    rubric: list[Slug] = Field(default_factory=list)
    evidence: list[Evidence] = Field(default_factory=list)
    follow_ups: list[Slug] = Field(default_factory=list)
    sources: list[Annotated[str, StringConstraints(min_length=1, max_length=300)]] = Field(
        min_length=1)
    reviewed: list[Review] = Field(default_factory=list)
    translations: dict[str, Translation]

    @model_validator(mode="before")
    @classmethod
    def _normalise(cls, data: Any) -> Any:
        """Accept a single evidence or review object as well as a list."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        for field in ("evidence", "reviewed"):
            if isinstance(data.get(field), dict):
                data[field] = [data[field]]
            if field in data and data[field] is None:
                data.pop(field)
        return data

    @model_validator(mode="after")
    def _shape_matches_kind(self) -> QuestionFile:
        problems = []
        if self.kind == "numeric":
            if not isinstance(self.answer, NumericAnswer):
                problems.append("a numeric question needs answer: {calculator, value}")
            if self.choices or self.rubric:
                problems.append("a numeric question has no choices or rubric")
        elif self.kind in ("single_choice", "multi_choice"):
            if len(self.choices) < 2:
                problems.append("a choice question needs at least two choices")
            correct = sum(c.correct for c in self.choices)
            if self.kind == "single_choice" and correct != 1:
                problems.append(f"a single_choice question has exactly one correct choice, "
                                f"not {correct}")
            if self.kind == "multi_choice" and correct < 1:
                problems.append("a multi_choice question needs at least one correct choice")
            if len({c.key for c in self.choices}) != len(self.choices):
                problems.append("choice keys must be unique")
            if self.rubric:
                problems.append("a choice question has no rubric")
            if isinstance(self.answer, NumericAnswer):
                problems.append("a choice question's answer is only a calculator call; the "
                                "values go on the choices")
        elif self.kind == "open":
            if not 3 <= len(self.rubric) <= 6:
                problems.append(f"an open question has 3 to 6 rubric key points, not "
                                f"{len(self.rubric)}")
            if self.answer or self.choices:
                problems.append("an open question has no answer calculator or choices")
        if self.variants and not isinstance(self.answer, (NumericAnswer, ChoiceAnswer)):
            problems.append("variants need an answer calculator whose parameters they redraw")
        if self.id in self.follow_ups:
            problems.append("a question cannot be its own follow-up")
        if problems:
            raise ValueError("; ".join(problems))
        return self

    def calls(self) -> list[tuple[str, CalculatorCall]]:
        """Every calculator call in the file with the field path that holds it."""
        found: list[tuple[str, CalculatorCall]] = []
        if self.answer is not None:
            found.append(("answer.calculator", self.answer.calculator))
        if isinstance(self.answer, NumericAnswer):
            found += [(f"answer.mistakes[{m.id}].calculator", m.calculator)
                      for m in self.answer.mistakes]
        found += [(f"choices[{c.key}].calculator", c.calculator) for c in self.choices
                  if c.calculator is not None]
        return found


def json_schema() -> dict[str, Any]:
    """JSON Schema of a question file, for editors (``ringside bank schema``)."""
    schema = QuestionFile.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "Ringside question"
    return schema
