"""How fast a person labels a 10,000-row experiment in the UI: keystroke to next row
in an annotation queue (real Chromium), and saving one label (the form's POST).

Builds a store in a temporary folder (``bench/ui_first_page.py``'s data), serves it
with ``assay.ui.serve`` in a separate process, and prints, for both queue rules that
read the most (every row; a seeded random sample), the keystroke-to-next-row time, and
the save-label time as the server measured it (Server-Timing) and as the client waited.

    .venv/bin/python bench/ui_annotate.py [--rows 10000] [--repeat 20]
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from playwright.sync_api import sync_playwright
from ui_first_page import _wait, build, free_port, server_ms

from assay.store import open_store

NEXT_ROW_BUDGET_MS = 100.0
SAVE_BUDGET_MS = 50.0


def quantiles(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def keystrokes(url: str, repeat: int) -> list[float]:
    """Milliseconds from pressing 1 (label and save) until the next row's progress shows."""
    times = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium", args=["--headless", "--no-sandbox"]
        )
        page = browser.new_page()
        page.goto(url)
        for _ in range(repeat + 1):
            before = page.locator("#queue-count").inner_text()
            started = time.perf_counter()
            page.keyboard.press("1")
            page.wait_for_function(
                "text => document.querySelector('#queue-count')?.textContent !== text", arg=before
            )
            page.wait_for_load_state("domcontentloaded")
            times.append((time.perf_counter() - started) * 1000)
        browser.close()
    return times[1:]  # the first press warms the server's caches


def saves(client: httpx.Client, experiment: str, repeat: int) -> tuple[list[float], list[float]]:
    rows = client.get(f"/api/experiments/{experiment}/rows?per_page=100").json()["rows"]
    page = client.get(f"/experiments/{experiment}/rows/{rows[0]['run_id']}").text
    token = re.search(r'name="csrf" value="([0-9a-f]+)"', page)
    assert token is not None
    server, wall = [], []
    for i in range(repeat):
        run = rows[i % len(rows)]["run_id"]
        started = time.perf_counter()
        answer = client.post(
            f"/experiments/{experiment}/rows/{run}/feedback",
            data={"csrf": token.group(1), "annotator": "bench", "key.human": "up" if i % 2 else "down"},
            headers={"origin": str(client.base_url).rstrip("/")},
        )
        wall.append((time.perf_counter() - started) * 1000)
        assert answer.status_code == 303, answer.text
        server.append(server_ms(answer))
    return server, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bench.db"
        store = open_store(str(path))
        first, _ = build(store, args.rows)
        store.close()
        port = free_port()
        code = f"from assay.ui import serve; serve({f'sqlite:///{path}'!r}, port={port})"
        process = subprocess.Popen(
            [sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            _wait(port)
            base = f"http://127.0.0.1:{port}"
            print(f"{args.rows}-row experiment; {args.repeat} measured presses / saves each (ms)")
            print(f"{'':44} {'median':>8} {'p95':>8}   budget")
            for label, query in (
                ("keystroke to next row, queue of every row", "rule=all"),
                ("keystroke to next row, random 500 of them", "rule=random&n=500&seed=1"),
            ):
                times = keystrokes(f"{base}/queue?e={first}&annotator=kb-{query[5:8]}&{query}", args.repeat)
                median, p95 = quantiles(times)
                print(f"{label:44} {median:8.1f} {p95:8.1f}   {NEXT_ROW_BUDGET_MS:.0f}", flush=True)
            with httpx.Client(base_url=base, timeout=60) as client:
                server, wall = saves(client, first, args.repeat * 3)
            for label, values in (
                ("save a label: server time", server),
                ("save a label: client wall time", wall),
            ):
                median, p95 = quantiles(values)
                print(f"{label:44} {median:8.1f} {p95:8.1f}   {SAVE_BUDGET_MS:.0f}", flush=True)
        finally:
            process.terminate()
            process.wait(timeout=30)


if __name__ == "__main__":
    main()
