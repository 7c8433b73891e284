"""The JSON API: listing, running, errors and the OpenAPI schema."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.calculator import calculators


def test_list_has_every_calculator_with_params_and_outputs(client):
    body = client.get("/api/v1/calculators").json()
    names = [c["name"] for c in body["calculators"]]
    assert sorted(names) == sorted(c.name for c in calculators())
    collective = next(c for c in body["calculators"] if c["name"] == "collective")
    world = next(p for p in collective["params"] if p["name"] == "world_size")
    assert world == {"name": "world_size", "type": "integer", "unit": None, "required": True,
                     "default": None, "minimum": 1, "exclusive_minimum": False,
                     "maximum": 1_000_000, "choices": None, "description": world["description"]}
    size = next(p for p in collective["params"] if p["name"] == "message_bytes")
    assert size["unit"] == "B"
    assert "bytes_sent_per_rank" in [o["name"] for o in collective["outputs"]]


def test_run(client):
    response = client.post("/api/v1/calculators/collective",
                           json={"op": "all-reduce", "world_size": 8, "message_bytes": "800MB"})
    assert response.status_code == 200
    assert response.json()["bytes_sent_per_rank"] == 1.4e9


def test_unknown_calculator_is_404(client):
    response = client.post("/api/v1/calculators/teleport", json={})
    assert response.status_code == 404
    assert "unknown calculator 'teleport'" in response.json()["detail"]
    assert client.get("/api/v1/calculators/teleport").status_code == 404


@pytest.mark.parametrize("body", [b"{not json", b"[1, 2]", b"\"text\"", b"NaN"])
def test_body_must_be_a_json_object(client, body):
    response = client.post("/api/v1/calculators/collective", content=body,
                           headers={"content-type": "application/json"})
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body"]


def test_missing_parameters_are_each_named(client):
    response = client.post("/api/v1/calculators/collective", json={})
    locs = [d["loc"] for d in response.json()["detail"]]
    assert ["body", "op"] in locs and ["body", "world_size"] in locs


def test_openapi_documents_each_calculator_and_nothing_else(client):
    schema = client.get("/api/v1/openapi.json").json()
    assert all(path.startswith("/api/v1/") for path in schema["paths"])
    for calc in calculators():
        post = schema["paths"][f"/api/v1/calculators/{calc.name}"]["post"]
        body = post["requestBody"]["content"]["application/json"]["schema"]
        assert set(body["properties"]) == {p.name for p in calc.params}
        assert "422" in post["responses"]


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8),
                                                                      children, max_size=3),
    max_leaves=8,
)


@pytest.mark.parametrize("name", [c.name for c in calculators()])
@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_arbitrary_json_never_gives_a_server_error(client, name, data):
    calc = next(c for c in calculators() if c.name == name)
    keys = [p.name for p in calc.params] + ["extra"]
    body = data.draw(st.dictionaries(st.sampled_from(keys), _json, max_size=len(keys)))
    response = client.post(f"/api/v1/calculators/{name}", json=body)
    assert response.status_code in (200, 422), response.text
