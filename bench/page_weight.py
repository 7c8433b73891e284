"""Bytes transferred for a question page with everything it loads, compressed as a browser
would receive it (Accept-Encoding: gzip, br), headers included.

    python bench/page_weight.py [--page /questions/ring-allreduce-bytes-per-rank]

Starts Ringside on a temporary SQLite database (as bench_load.py does), fetches the page,
then every script, stylesheet and image it references from our origin. Target: < 100 kB.
"""

from __future__ import annotations

import argparse
import http.client
import re
import sys
import tempfile
from urllib.parse import urlsplit

from bench_load import start

ASSET = re.compile(r'<(?:script[^>]*\ssrc|link[^>]*\shref|img[^>]*\ssrc)="(/[^"]+)"')


def fetch(base: str, path: str) -> tuple[int, int, str]:
    """(header bytes, body bytes on the wire, decoded text when it is HTML)."""
    parts = urlsplit(base)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    connection.request("GET", path, headers={"Accept-Encoding": "gzip, br"})
    response = connection.getresponse()
    body = response.read()
    status_line = f"HTTP/1.1 {response.status} {response.reason}\r\n"
    headers = len(status_line) + sum(len(f"{k}: {v}\r\n") for k, v in response.getheaders())
    text = ""
    if "text/html" in (response.getheader("content-type") or ""):
        import gzip

        raw = gzip.decompress(body) if response.getheader("content-encoding") == "gzip" else body
        text = raw.decode()
    connection.close()
    return headers, len(body), text


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--page", default="/questions/ring-allreduce-bytes-per-rank")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        server, base = start(f"sqlite:///{tmp}/weight.db", 1)
        try:
            headers, body, html = fetch(base, args.page)
            rows = [(args.page, headers, body)]
            for asset in dict.fromkeys(ASSET.findall(html)):
                asset_headers, asset_body, _ = fetch(base, asset)
                rows.append((asset, asset_headers, asset_body))
        finally:
            server.terminate()
            server.wait(timeout=15)
    print("| resource | headers B | body B (compressed) |\n|---|---|---|")
    for path, h, b in rows:
        print(f"| {path} | {h} | {b} |")
    total = sum(h + b for _, h, b in rows)
    print(f"| **total** | | **{total} B = {total / 1000:.1f} kB** (target < 100 kB) |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
