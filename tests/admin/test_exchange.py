"""Zip export and import of the bank from /admin, with a preview before anything changes."""

from __future__ import annotations

import io
import re
import zipfile

import yaml

from app.config import ROOT
from tests.accounts.test_accounts import browser, make_user, sign_in

BANK = ROOT / "question_bank" / "questions"


def editor(web_engine):
    client = browser()
    sign_in(client, make_user(web_engine, role="editor"))
    return client


def zipped(files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return buffer.getvalue()


def test_export_is_the_published_bank_in_canonical_files(client, web_engine):
    admin = editor(web_engine)
    response = admin.get("/admin/export.zip?topic=memory")
    assert response.headers["content-type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(response.content))
    names = sorted(archive.namelist())
    expected = sorted(f"questions/memory/{p.name}" for p in (BANK / "memory").glob("*.yaml"))
    assert names == expected
    for name in names:
        assert archive.read(name).decode() == (ROOT / "question_bank" / name).read_text()


def test_import_previews_then_applies_only_what_passes(client, web_engine):
    admin = editor(web_engine)
    ring = yaml.safe_load((BANK / "collectives/ring-allreduce-steps.yaml").read_text())
    changed = dict(ring, difficulty=3 if ring["difficulty"] != 3 else 2)
    added = dict(ring, id="imported-steps-question")
    broken = dict(ring, id="imported-broken", seniority="wizard")
    unchanged = (BANK / "memory/max-model-on-gpu.yaml").read_text()
    payload = zipped({
        "questions/collectives/ring-allreduce-steps.yaml": yaml.safe_dump(changed),
        "questions/collectives/imported-steps-question.yaml": yaml.safe_dump(added),
        "questions/collectives/imported-broken.yaml": yaml.safe_dump(broken),
        "questions/memory/max-model-on-gpu.yaml": unchanged,
    })
    token = admin.cookies.get("csrftoken")
    preview = admin.post("/admin/import", data={"csrf_token": token, "action": "preview"},
                         files={"file": ("bank.zip", payload, "application/zip")})
    assert preview.status_code == 200
    text = preview.text
    assert "imported-steps-question" in text and "ring-allreduce-steps" in text
    assert "imported-broken.yaml" in text and "seniority" in text
    assert client.get("/questions/imported-steps-question").status_code == 404  # not yet
    carried = re.search(r'name="payload" value="([^"]+)"', text).group(1)
    applied = admin.post("/admin/import", data={"csrf_token": token, "action": "apply",
                                                "payload": carried})
    assert applied.status_code == 200
    assert client.get("/questions/imported-steps-question").status_code == 200
    assert client.get("/questions/imported-broken").status_code == 404
    edit = admin.get("/admin/questions/ring-allreduce-steps?editor=yaml").text
    assert f"difficulty: {changed['difficulty']}" in edit


def test_import_refuses_what_is_not_a_bank_zip(client, web_engine):
    admin = editor(web_engine)
    token = admin.cookies.get("csrftoken")
    response = admin.post("/admin/import", data={"csrf_token": token, "action": "preview"},
                          files={"file": ("x.zip", b"not a zip", "application/zip")})
    assert "is not a zip archive" in response.text
    damaged = admin.post("/admin/import", data={"csrf_token": token, "action": "apply",
                                                "payload": "%%%"})
    assert damaged.status_code == 422
