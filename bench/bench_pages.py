"""Requests per second of Ringside's pages against the framework's ceiling.

Starts, on loopback with one uvicorn worker each and both running side by side:
  * Ringside itself in production mode, on a SQLite database with the real bank loaded;
  * a minimal FastAPI app that renders a Jinja template of the same bytes as each of
    Ringside's responses (the HTML Ringside produced, as a template with a variable), no
    database, no middleware.
Then measures each request with wrk (keep-alive, 2 threads, 32 connections), Ringside and
the ceiling one after the other, in three rounds, and prints the median requests per
second of each with the spread (min-max) and the ratio of the medians:

  * the question page and the browse page (target: ratio >= 0.5);
  * a calculator page and a graded answer (POST, htmx; target: ratio >= 0.3).

    python bench/bench_pages.py [--duration 8] [--connections 32] [--rounds 3]

Run on demand (make bench); it reports figures and is not a test.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
QUESTION = "/questions/ring-allreduce-bytes-per-rank"
# (label, method, path, form body): the answer is a wrong number, graded and stored.
REQUESTS = [
    ("question page", "GET", QUESTION, None),
    ("browse page", "GET", "/questions", None),
    ("calculator page", "GET", "/calculators/collective?op=all-reduce&world_size=8"
                               "&message_bytes=800MB", None),
    ("graded answer (POST)", "POST", QUESTION + "/answer", "answer=700+MB"),
]
TARGETS = {"question page": 0.5, "browse page": 0.5, "calculator page": 0.3,
           "graded answer (POST)": 0.3}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_up(url: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url, timeout=1).read()
            return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer")


def serve(app: str, port: int, env: dict[str, str], cwd: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "uvicorn", app, "--host", "127.0.0.1", "--port", str(port),
         "--workers", "1", "--log-level", "warning", "--no-access-log"],
        env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)


def wrk(url: str, duration: int, connections: int, script: Path | None = None
        ) -> tuple[float, str]:
    command = ["wrk", "-t2", f"-c{connections}", f"-d{duration}s", "--latency"]
    if script is not None:
        command += ["-s", str(script)]
    out = subprocess.run([*command, url], capture_output=True, text=True, check=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    distribution = out.split("Latency Distribution", 1)[1]
    p50 = re.search(r"50%\s+(\S+)", distribution).group(1)
    p99 = re.search(r"99%\s+(\S+)", distribution).group(1)
    return rps, f"p50 {p50}, p99 {p99}"


def post_script(work: Path, name: str, body: str, cookie: str, token: str) -> Path:
    """A wrk script for an htmx POST with the CSRF cookie and token of one browser."""
    script = work / f"{name}.lua"
    script.write_text(textwrap.dedent(f"""
        wrk.method = "POST"
        wrk.body = "{body}&csrf_token={token}"
        wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
        wrk.headers["Cookie"] = "csrftoken={cookie}"
        wrk.headers["HX-Request"] = "true"
        wrk.headers["Sec-Fetch-Site"] = "same-origin"
    """))
    return script


CEILING_APP = textwrap.dedent('''
    from fastapi import FastAPI, Request
    from fastapi.templating import Jinja2Templates

    app = FastAPI()
    templates = Jinja2Templates(directory="templates")

    @app.get("/page/{name}")
    @app.post("/page/{name}")
    def page(request: Request, name: str):
        return templates.TemplateResponse(request, name + ".html",
                                          {"title": "Ringside", "lang": "en", "n": 1})
''')


def as_template(html: str) -> str:
    """The same bytes as a Jinja template, with one variable to render."""
    head, _, tail = html.partition("<title>")
    if not tail:  # a fragment: the variable goes first
        return f"{{{{ title }}}}{{% raw %}}{html}{{% endraw %}}"
    return (f"{{% raw %}}{head}<title>{{% endraw %}}{{{{ title }}}} "
            f"{{% raw %}}{tail}{{% endraw %}}")


def summary(values: list[float]) -> str:
    return f"{statistics.median(values):>6.0f} ({min(values):.0f}-{max(values):.0f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=8)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if not shutil.which("wrk"):
        print("wrk is needed: apt-get install wrk", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="ringside-bench-"))
    env = {**os.environ, "RINGSIDE_DATABASE_URL": f"sqlite:///{work / 'bench.db'}",
           "RINGSIDE_ENV": "production", "RINGSIDE_SECRET_KEY": "b" * 64,
           "RINGSIDE_ALLOWED_HOSTS": '["127.0.0.1"]'}
    ringside = [sys.executable, "-m", "app.cli"]
    subprocess.run([*ringside, "db", "upgrade"], env=env, cwd=ROOT, check=True,
                   capture_output=True)
    subprocess.run([*ringside, "bank", "load"], env=env, cwd=ROOT, check=True,
                   capture_output=True)
    port, ceiling_port = free_port(), free_port()
    server = serve("app.main:app", port, env, ROOT)
    (work / "ceiling" / "templates").mkdir(parents=True)
    (work / "ceiling" / "ceiling.py").write_text(CEILING_APP)
    ceiling = serve("ceiling:app", ceiling_port,
                    {**os.environ, "PYTHONPATH": str(work / "ceiling")}, work / "ceiling")
    targets: dict[str, tuple[str, Path | None]] = {}
    try:
        wait_up(f"http://127.0.0.1:{port}/", timeout=120)  # production warms up first
        first = urllib.request.urlopen(f"http://127.0.0.1:{port}/")
        cookie = re.search(r"csrftoken=([^;]+)", first.headers["set-cookie"]).group(1)
        for i, (label, method, path, body) in enumerate(REQUESTS):
            script = None
            if method == "POST":  # one candidate: its first answer makes its profile
                request = urllib.request.Request(
                    f"http://127.0.0.1:{port}{path}", method="POST",
                    data=f"{body}&csrf_token={cookie}".encode(),
                    headers={"Cookie": f"csrftoken={cookie}", "HX-Request": "true",
                             "Sec-Fetch-Site": "same-origin",
                             "Content-Type": "application/x-www-form-urlencoded"})
                answered = urllib.request.urlopen(request)
                profile = re.search(r"ringside_profile=([^;]+)",
                                    answered.headers.get("set-cookie", "")).group(1)
                html = answered.read().decode()
                script = post_script(work, f"p{i}", body or "",
                                     f"{cookie}; ringside_profile={profile}", cookie)
            else:
                html = urllib.request.urlopen(f"http://127.0.0.1:{port}{path}").read().decode()
            (work / "ceiling" / "templates" / f"p{i}.html").write_text(as_template(html))
            targets[label] = (f"http://127.0.0.1:{port}{path}", script)
        wait_up(f"http://127.0.0.1:{ceiling_port}/page/p0")
        ours: dict[str, list[float]] = {label: [] for label in targets}
        theirs: dict[str, list[float]] = {label: [] for label in targets}
        latency: dict[str, str] = {}
        for _round in range(args.rounds):
            for i, (label, (url, script)) in enumerate(targets.items()):
                rps, latency[label] = wrk(url, args.duration, args.connections, script)
                ours[label].append(rps)
                ceiling_script = None
                if script is not None:
                    ceiling_script = work / f"c{i}.lua"
                    ceiling_script.write_text('wrk.method = "POST"\n')
                rps, _ = wrk(f"http://127.0.0.1:{ceiling_port}/page/p{i}", args.duration,
                             args.connections, ceiling_script)
                theirs[label].append(rps)
    finally:
        for process in (server, ceiling):
            process.terminate()
            process.wait()
        shutil.rmtree(work, ignore_errors=True)
    print(f"{args.rounds} rounds, median (min-max) requests/s, wrk {args.connections} "
          f"connections, {args.duration} s each")
    print(f"{'request':<22} {'Ringside':>18} {'ceiling':>18} {'ratio':>6} {'target':>7}")
    for label in targets:
        ratio = statistics.median(ours[label]) / statistics.median(theirs[label])
        print(f"{label:<22} {summary(ours[label]):>18} {summary(theirs[label]):>18} "
              f"{ratio:>6.2f} {TARGETS[label]:>7.1f}   last run {latency[label]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
