"""Load figures: candidates browsing, answering and running mock interviews (locust).

For each configuration, on loopback only:
  * SQLite, one uvicorn worker;
  * PostgreSQL, four workers (a database of its own, created and dropped here);
starts Ringside in production mode the way docker-compose.yml does (db upgrade, bank
load, ringside serve --workers N), then runs bench/locustfile.py headless at 50 and 200
concurrent users for a bounded time and prints requests per second, p50/p95/p99 latency
and errors. Statistics start once every user has started (locust --reset-stats): the
figures are for that many users at once, not for the load generator's ramp-up.

    python bench/bench_load.py [--duration 30] [--users 50 200] [--postgres URL]

Needs the bench extra (pip install -e '.[bench]'; make bench-load does it). The load
generator shares the machine's cores with the server, so the figures are a floor.
"""

from __future__ import annotations

import argparse
import csv
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from sqlalchemy import create_engine, make_url, text

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
DEFAULT_PG = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def postgres_database(url: str, name: str, *, drop_only: bool = False) -> str:
    base = make_url(url)
    admin = create_engine(base.set(database="postgres"), isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        if not drop_only:
            connection.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return base.set(database=name).render_as_string(hide_password=False)


def start(database_url: str, workers: int) -> tuple[subprocess.Popen[bytes], str]:
    env = {**os.environ, "RINGSIDE_ENV": "production", "RINGSIDE_SECRET_KEY": "b" * 48,
           "RINGSIDE_DATABASE_URL": database_url,
           "RINGSIDE_ALLOWED_HOSTS": '["127.0.0.1"]'}
    for command in (["db", "upgrade"], ["bank", "load"]):
        subprocess.run([BIN / "ringside", *command], env=env, cwd=ROOT, check=True,
                       capture_output=True)
    port = free_port()
    server = subprocess.Popen([BIN / "ringside", "serve", "--port", str(port), "--workers",
                               str(workers)], env=env, cwd=ROOT, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if urllib.request.urlopen(f"{url}/readyz", timeout=2).status == 200:
                return server, url
        except OSError:
            time.sleep(0.3)
    server.kill()
    raise RuntimeError("the server did not become ready")


TICK = os.sysconf("SC_CLK_TCK")


def _cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:  # gone meanwhile
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICK


def _tree(root: int) -> list[int]:
    """``root`` and its descendants (the uvicorn supervisor and its workers)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
            children.setdefault(parent, []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += children.get(pid, [])
    return found


def _postgres_cpu() -> float:
    total = 0.0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_text().strip() == "postgres":
                    total += _cpu_seconds(int(entry.name))
            except OSError:
                continue
    return total


def cpu_snapshot(server: subprocess.Popen[bytes]) -> tuple[float, float, float]:
    """CPU seconds so far: the server's processes, finished children (locust), PostgreSQL."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (sum(_cpu_seconds(pid) for pid in _tree(server.pid)),
            children.ru_utime + children.ru_stime, _postgres_cpu())


def locust(url: str, users: int, duration: int, workdir: Path) -> dict[str, float]:
    workdir.mkdir(parents=True, exist_ok=True)
    prefix = workdir / f"u{users}"
    rate = max(10, users // 4)
    ramp = -(-users // rate) + 2  # the statistics start after it (--reset-stats)
    subprocess.run([BIN / "locust", "-f", str(ROOT / "bench" / "locustfile.py"), "--headless",
                    "-u", str(users), "-r", str(rate), "-t", f"{duration + ramp}s",
                    "--host", url, "--csv", str(prefix), "--only-summary", "--reset-stats",
                    "--stop-timeout", "5"], cwd=ROOT, check=False,
                   stdout=subprocess.DEVNULL, stderr=(workdir / f"u{users}.log").open("w"))
    with open(f"{prefix}_stats.csv", newline="") as handle:
        (total,) = [row for row in csv.DictReader(handle) if row["Name"] == "Aggregated"]
    return {"requests": int(total["Request Count"]), "errors": int(total["Failure Count"]),
            "rps": float(total["Requests/s"]), "p50": float(total["50%"]),
            "p95": float(total["95%"]), "p99": float(total["99%"])}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=30, help="seconds per run")
    parser.add_argument("--users", type=int, nargs="+", default=[50, 200])
    parser.add_argument("--postgres", default=os.environ.get("RINGSIDE_BENCH_DATABASE_URL",
                                                              DEFAULT_PG))
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        configs = [("SQLite, 1 worker", f"sqlite:///{tmp}/bench.db", 1),
                   ("PostgreSQL, 4 workers",
                    postgres_database(args.postgres, "ringside_bench"), 4)]
        for label, url, workers in configs:
            server, base = start(url, workers)
            try:
                # Each worker compiles its templates and warms its caches on first use:
                # a short unmeasured run, so the figures describe a server in service.
                locust(base, 10, 10, Path(tmp) / "warm-up")
                for users in args.users:
                    before = cpu_snapshot(server)
                    result = locust(base, users, args.duration, Path(tmp))
                    after = cpu_snapshot(server)
                    # Over the whole run (ramp-up too): where the two cores went.
                    result["cpu"] = [b - a for a, b in zip(before, after, strict=True)]
                    rows.append((label, users, result))
            finally:
                server.terminate()
                try:
                    server.wait(timeout=15)
                except subprocess.TimeoutExpired:  # keep-alive connections left by locust
                    server.kill()
        postgres_database(args.postgres, "ringside_bench", drop_only=True)
    print(f"\n{args.duration} s per run, loopback, {os.cpu_count()} cores shared with locust\n")
    print("| configuration | users | requests | req/s | p50 ms | p95 ms | p99 ms | errors "
          "| CPU s: server / locust / PostgreSQL |")
    print("|---|---|---|---|---|---|---|---|---|")
    for label, users, r in rows:
        server_s, locust_s, postgres_s = r["cpu"]
        print(f"| {label} | {users} | {r['requests']} | {r['rps']:.0f} | {r['p50']:.0f} "
              f"| {r['p95']:.0f} | {r['p99']:.0f} | {r['errors']} "
              f"| {server_s:.1f} / {locust_s:.1f} / {postgres_s:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
