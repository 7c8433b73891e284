"""Candidates using Ringside: browsing, answering questions, running mock interviews.

Run through bench/bench_load.py (which starts the server and reports the figures), or
by hand against a running server on loopback. Users are FastHttpUser (geventhttpclient):
the generator shares the server's cores, and the requests-based HttpUser spends several
times more CPU per request, which the server's figures would pay for.

    locust -f bench/locustfile.py --headless -u 50 -r 25 -t 30s --host http://127.0.0.1:8000
"""

from __future__ import annotations

import random
import re

from locust import FastHttpUser, between, events, task

SLUGS: list[dict] = []
TOPICS = ["collectives", "data-parallel", "bucketing", "memory", "zero-fsdp",
          "tensor-parallel", "pipeline-parallel", "parallelism-strategy", "efficiency"]
STEP_FORM = re.compile(r'name="slug" value="([^"]+)".*?name="number" value="(\d+)"', re.S)


@events.test_start.add_listener
def load_question_list(environment, **_kwargs) -> None:
    """The question ids, once, from the JSON API (every page of it)."""
    import json
    import urllib.request

    page, pages = 1, 1
    while page <= pages:
        with urllib.request.urlopen(f"{environment.host}/api/v1/questions?page={page}") as r:
            body = json.load(r)
        SLUGS.extend({"id": q["id"], "kind": q["kind"]} for q in body["items"])
        pages, page = body["pages"], page + 1


class Candidate(FastHttpUser):
    wait_time = between(0.5, 2)

    def on_start(self) -> None:
        self.client.get("/", name="/ (first visit)")
        self.token = next((c.value for c in self.client.cookiejar if c.name == "csrftoken"), "")

    def _answer_for(self, kind: str) -> dict:
        if kind == "numeric":
            return {"answer": f"{random.randint(1, 2000)} MB"}
        if kind == "open":
            return {"answer": "All-reduce of the gradients, overlapped with backward.",
                    "step": "assess", "rubric": []}
        return {"answer": "a"}  # every choice question has a choice a

    @task(1)
    def home(self) -> None:
        self.client.get("/", name="/")

    @task(4)
    def browse(self) -> None:
        query = f"?topic={random.choice(TOPICS)}" if random.random() < 0.6 else ""
        self.client.get(f"/questions{query}", name="/questions")

    @task(4)
    def read_question(self) -> None:
        question = random.choice(SLUGS)
        self.client.get(f"/questions/{question['id']}", name="/questions/[id]")

    def _post_answer(self, url: str, data: dict, name: str) -> None:
        """A 422 is the app naming what is wrong with a malformed answer (a number in the
        wrong unit, say): an expected outcome for a candidate, not an error."""
        with self.client.post(url, data=data, headers={"HX-Request": "true"}, name=name,
                              catch_response=True) as response:
            if response.status_code in (200, 422):
                response.success()

    @task(3)
    def answer_question(self) -> None:
        question = random.choice(SLUGS)
        self._post_answer(f"/questions/{question['id']}/answer",
                          {"csrf_token": self.token, **self._answer_for(question["kind"])},
                          "/questions/[id]/answer")

    @task(1)
    def calculator(self) -> None:
        world = random.choice([2, 4, 8, 16, 64])
        self.client.get(f"/calculators/collective?op=all-reduce&world_size={world}"
                        "&message_bytes=800MB", name="/calculators/collective?...")

    @task(1)
    def mock_interview(self) -> None:
        started = self.client.post("/mock", data={
            "csrf_token": self.token, "seniority": random.choice(["junior", "mid", "senior"]),
            "lang": random.choice(["en", "fr", "tr", "zh"]), "length": "3", "seconds": "0"},
            name="/mock (start)", allow_redirects=False)
        url = (started.headers.get("location") or "").split("?")[0]
        if not url:
            return
        for _ in range(2):
            page = self.client.get(url, name="/mock/[id]")
            found = STEP_FORM.search(page.text)
            if not found:
                return
            slug, number = found.groups()
            kind = ("open" if "<textarea" in page.text else
                    "choice" if 'name="answer" value="a"' in page.text else "numeric")
            self._post_answer(f"{url}/answer", {
                "csrf_token": self.token, "slug": slug, "number": number, "paused_ms": "0",
                **self._answer_for(kind)}, "/mock/[id]/answer")
