"""Requests per second of Ringside's pages against the framework's ceiling.

Starts, one after the other on loopback with one uvicorn worker each:
  * Ringside itself, on a SQLite database with the real bank loaded;
  * a minimal FastAPI app that renders a Jinja template of the same size as the page
    (the HTML Ringside produced, as a template with a few variables), no database.
Then measures each with wrk (keep-alive, 2 threads, 32 connections, 10 s) and prints
requests per second, latency and the ratio Ringside / ceiling.

    python bench/bench_pages.py [--duration 10] [--connections 32]

Run on demand (make bench); it reports figures and is not a test.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = ["/questions/ring-allreduce-bytes-per-rank", "/questions"]


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


def wrk(url: str, duration: int, connections: int) -> tuple[float, str]:
    out = subprocess.run(["wrk", "-t2", f"-c{connections}", f"-d{duration}s", "--latency", url],
                         capture_output=True, text=True, check=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    distribution = out.split("Latency Distribution", 1)[1]
    p50 = re.search(r"50%\s+(\S+)", distribution).group(1)
    p99 = re.search(r"99%\s+(\S+)", distribution).group(1)
    return rps, f"p50 {p50}, p99 {p99}"


CEILING_APP = textwrap.dedent('''
    from fastapi import FastAPI, Request
    from fastapi.templating import Jinja2Templates

    app = FastAPI()
    templates = Jinja2Templates(directory="templates")

    @app.get("/page/{name}")
    def page(request: Request, name: str):
        return templates.TemplateResponse(request, name + ".html",
                                          {"title": "Ringside", "lang": "en", "n": 1})
''')


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=10)
    parser.add_argument("--connections", type=int, default=32)
    args = parser.parse_args()
    if not shutil.which("wrk"):
        print("wrk is needed: apt-get install wrk", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="ringside-bench-"))
    env = {**os.environ, "RINGSIDE_DATABASE_URL": f"sqlite:///{work / 'bench.db'}",
           "RINGSIDE_ENV": "development"}
    ringside = [sys.executable, "-m", "app.cli"]
    subprocess.run([*ringside, "db", "upgrade"], env=env, cwd=ROOT, check=True,
                   capture_output=True)
    subprocess.run([*ringside, "bank", "load"], env=env, cwd=ROOT, check=True,
                   capture_output=True)

    port = free_port()
    server = serve("app.main:app", port, env, ROOT)
    results: dict[str, tuple[float, str]] = {}
    try:
        wait_up(f"http://127.0.0.1:{port}/")
        (work / "ceiling" / "templates").mkdir(parents=True)
        for i, page in enumerate(PAGES):
            html = urllib.request.urlopen(f"http://127.0.0.1:{port}{page}").read().decode()
            # The same bytes as a template, with a variable to render in the title.
            head, _, tail = html.partition("<title>")
            template = (f"{{% raw %}}{head}<title>{{% endraw %}}{{{{ title }}}} "
                        f"{{% raw %}}{tail}{{% endraw %}}")
            (work / "ceiling" / "templates" / f"p{i}.html").write_text(template)
            results[page] = wrk(f"http://127.0.0.1:{port}{page}", args.duration,
                                args.connections)
    finally:
        server.terminate()
        server.wait()

    (work / "ceiling" / "ceiling.py").write_text(CEILING_APP)
    port = free_port()
    ceiling = serve("ceiling:app", port, {**os.environ, "PYTHONPATH": str(work / "ceiling")},
                    work / "ceiling")
    try:
        wait_up(f"http://127.0.0.1:{port}/page/p0")
        print(f"{'page':<45} {'ringside req/s':>15} {'ceiling req/s':>14} {'ratio':>6}")
        for i, page in enumerate(PAGES):
            ceil_rps, ceil_lat = wrk(f"http://127.0.0.1:{port}/page/p{i}", args.duration,
                                     args.connections)
            rps, latency = results[page]
            print(f"{page:<45} {rps:>15.0f} {ceil_rps:>14.0f} {rps / ceil_rps:>6.2f}")
            print(f"{'':<45} {latency:>30} | ceiling {ceil_lat}")
    finally:
        ceiling.terminate()
        ceiling.wait()
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
