"""Server CPU per request, page by page: what each kind of request costs the app itself.

Starts Ringside in production mode with one worker (SQLite by default, or --database),
then, for each kind of request the load scenario makes, sends them one after the other on
one keep-alive connection (gzip accepted, cookies kept, as a browser) and reads the
server process's CPU time from /proc before and after:

    python bench/cpu_per_request.py [--requests 200] [--database URL]

Linux only (/proc). Run on demand (make bench-cpu); it reports figures and is not a test.
"""

from __future__ import annotations

import argparse
import gzip
import http.client
import json
import os
import random
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Callable
from pathlib import Path

from bench_load import start  # the sibling script (bench/ is on sys.path)

TICK_MS = 1000 / os.sysconf("SC_CLK_TCK")
TOPICS = ["collectives", "data-parallel", "bucketing", "memory", "zero-fsdp"]


def cpu_ms(pid: int) -> float:
    """User + system CPU time of a process, in milliseconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * TICK_MS


class Browser:
    """One keep-alive connection with cookies, as a candidate's browser."""

    def __init__(self, port: int) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        self.cookies: dict[str, str] = {}

    def request(self, method: str, path: str, form: dict | None = None,
                htmx: bool = False) -> tuple[int, dict[str, str], bytes]:
        headers = {"Accept-Encoding": "gzip",
                   "Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())}
        body = None
        if form is not None:
            body = urllib.parse.urlencode(form, doseq=True)
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        if htmx:
            headers["HX-Request"] = "true"
        self.connection.request(method, path, body=body, headers=headers)
        response = self.connection.getresponse()
        data = response.read()
        if response.getheader("content-encoding") == "gzip":
            data = gzip.decompress(data)
        for name, value in response.getheaders():
            if name.lower() == "set-cookie":
                key, _, rest = value.partition("=")
                self.cookies[key] = rest.split(";")[0]
        return response.status, {k.lower(): v for k, v in response.getheaders()}, data


def scenarios(browser: Browser) -> dict[str, Callable[[], int]]:
    browser.request("GET", "/")
    token = browser.cookies["csrftoken"]
    questions, page, pages = [], 1, 1
    while page <= pages:
        body = json.loads(browser.request("GET", f"/api/v1/questions?page={page}")[2])
        questions += [(q["id"], q["kind"]) for q in body["items"]]
        pages, page = body["pages"], page + 1

    def answer() -> int:
        slug, kind = random.choice(questions)
        form = ({"answer": f"{random.randint(1, 2000)} MB"} if kind == "numeric" else
                {"answer": "All-reduce, overlapped", "step": "assess"} if kind == "open" else
                {"answer": "a"})
        return browser.request("POST", f"/questions/{slug}/answer",
                               {"csrf_token": token, **form}, htmx=True)[0]

    def start_mock() -> int:
        return browser.request("POST", "/mock", {
            "csrf_token": token, "seniority": random.choice(["junior", "mid", "senior"]),
            "lang": random.choice(["en", "fr", "tr", "zh"]), "length": "3",
            "seconds": "0"})[0]

    interview = browser.request("POST", "/mock", {
        "csrf_token": token, "seniority": "mid", "lang": "en", "length": "3",
        "seconds": "0"})[1]["location"].split("?")[0]
    return {
        "home": lambda: browser.request("GET", "/")[0],
        "browse": lambda: browser.request("GET", "/questions")[0],
        "browse by topic": lambda: browser.request(
            "GET", f"/questions?topic={random.choice(TOPICS)}")[0],
        "question page": lambda: browser.request(
            "GET", f"/questions/{random.choice(questions)[0]}")[0],
        "graded answer": answer,
        "calculator page": lambda: browser.request(
            "GET", "/calculators/collective?op=all-reduce&message_bytes=800MB&world_size="
            f"{random.choice([2, 4, 8, 16, 64])}")[0],
        "mock interview start": start_mock,
        "mock interview step": lambda: browser.request("GET", interview)[0],
        "healthz": lambda: browser.request("GET", "/healthz")[0],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200, help="requests per kind")
    parser.add_argument("--database", help="SQLAlchemy URL (default: a new SQLite file)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = args.database or f"sqlite:///{tmp}/cpu.db"
        server, base = start(url, workers=1)  # one process: its CPU is the app's
        try:
            browser = Browser(int(base.rsplit(":", 1)[1]))
            print(f"| request ({'SQLite' if url.startswith('sqlite') else 'PostgreSQL'}, "
                  "1 worker) | CPU ms per request | wall ms per request |")
            print("|---|---|---|")
            for name, send in scenarios(browser).items():
                for _ in range(10):  # this kind's caches, as in a server in service
                    send()
                before, started = cpu_ms(server.pid), time.perf_counter()
                statuses = {send() for _ in range(args.requests)}
                cpu = (cpu_ms(server.pid) - before) / args.requests
                wall = (time.perf_counter() - started) * 1000 / args.requests
                assert statuses <= {200, 303, 422}, (name, statuses)
                print(f"| {name} | {cpu:.1f} | {wall:.1f} |")
        finally:
            server.terminate()
            server.wait(timeout=15)
    return 0


if __name__ == "__main__":
    sys.exit(main())
