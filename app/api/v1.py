"""JSON API: list the calculators and run them. The only routes in the OpenAPI schema."""

from __future__ import annotations

import json
import math
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import JSONResponse

from app.calculator import Calculator, InputError, calculators, get
from app.calculator.registry import UnknownCalculator

router = APIRouter(prefix="/api/v1", tags=["calculators"])

MAX_BODY_BYTES = 256 * 1024

_ERROR_SCHEMA = {
    "type": "object",
    "properties": {"detail": {"type": "array", "items": {
        "type": "object",
        "properties": {"loc": {"type": "array", "items": {"type": "string"}},
                       "msg": {"type": "string"}, "type": {"type": "string"}},
    }}},
}


def problems_response(problems: list[tuple[list[str], str]]) -> JSONResponse:
    """422 in FastAPI's usual shape, one entry per bad parameter."""
    return JSONResponse(
        {"detail": [{"loc": loc, "msg": msg, "type": "value_error"} for loc, msg in problems]},
        status_code=422,
    )


@router.get("/calculators", summary="List every calculator with its parameters and outputs")
def list_calculators() -> dict[str, Any]:
    return {"calculators": [c.describe() for c in calculators()]}


@router.get("/calculators/{name}", summary="Describe one calculator",
            responses={404: {"description": "Unknown calculator"}})
def describe_calculator(name: str) -> dict[str, Any]:
    try:
        return get(name).describe()
    except UnknownCalculator as exc:
        raise HTTPException(404, str(exc)) from None


async def _run(calculator: Calculator, request: Request) -> JSONResponse:
    body = await request.body()
    if len(body) > MAX_BODY_BYTES:
        return problems_response([(["body"], f"is larger than {MAX_BODY_BYTES} bytes")])
    try:
        raw = json.loads(body or b"{}", parse_constant=lambda c: math.nan)
    except (ValueError, RecursionError):
        return problems_response([(["body"], "is not valid JSON")])
    if not isinstance(raw, dict):
        return problems_response([(["body"], "must be a JSON object of parameters")])
    try:
        evaluation = calculator.evaluate(raw)
    except InputError as exc:
        return problems_response([(["body", p.param], p.message) for p in exc.problems])
    return JSONResponse(evaluation.outputs)


def _add_run_route(calculator: Calculator) -> None:
    async def run_calculator(request: Request) -> JSONResponse:
        return await _run(calculator, request)

    router.add_api_route(
        f"/calculators/{calculator.name}",
        run_calculator,
        methods=["POST"],
        name=f"run_{calculator.name.replace('-', '_')}",
        summary=calculator.title,
        description=f"{calculator.summary}\n\nFormula: {calculator.formula}\n\n"
                    f"Sources: {'; '.join(calculator.sources)}",
        openapi_extra={
            "requestBody": {"required": True, "content": {
                "application/json": {"schema": calculator.input_schema()}}},
        },
        responses={
            200: {"description": "The outputs",
                  "content": {"application/json": {"schema": calculator.output_schema()}}},
            422: {"description": "A parameter is missing, unknown or out of range",
                  "content": {"application/json": {"schema": _ERROR_SCHEMA}}},
        },
    )


for _calculator in calculators():
    _add_run_route(_calculator)


@router.post("/calculators/{name}", include_in_schema=False)
def unknown_calculator(name: str) -> None:
    raise HTTPException(404, str(UnknownCalculator(name)))
