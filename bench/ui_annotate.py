"""How fast a person labels a 10,000-row experiment in the UI: keystroke to next row
in an annotation queue (real Chromium), and saving one label (the form's POST).

Builds a store in a temporary folder (``bench/ui_first_page.py``'s data), serves it
with ``assay.ui.serve`` in a separate process, and prints, for both queue rules that
read the most (every row; a seeded random sample), the keystroke-to-next-row time, and
the save-label time as the server measured it (Server-Timing) and as the client waited.

The keystroke time is the browser's own: from the ``keydown`` event to the first frame
in which the next row's progress shows (an init script records both, across page loads).
With ``--before SRC`` (another checkout's ``src``, e.g. ``/work/main/src``) a second server
runs that code on a copy of the store and the two are pressed alternately, in one run.

    .venv/bin/python bench/ui_annotate.py [--rows 10000] [--repeat 20] [--before SRC]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

import httpx
from playwright.sync_api import Page, sync_playwright
from ui_first_page import build, served, server_ms

from assay.store import open_store

NEXT_ROW_BUDGET_MS = 100.0
SAVE_BUDGET_MS = 50.0

#: in every document of the tab: when a key went down, and the first frame after it in
#: which the queue's progress text differs (sessionStorage carries both across page loads)
WATCH = """
addEventListener("keydown", (event) => {
  const node = document.querySelector("#queue-count");
  sessionStorage.setItem("before", node ? node.textContent : "");
  sessionStorage.setItem("pressed", String(performance.timeOrigin + event.timeStamp));
  sessionStorage.removeItem("shown");
}, true);
const watch = (frame) => {
  const node = document.querySelector("#queue-count");
  if (node && sessionStorage.getItem("pressed") && !sessionStorage.getItem("shown")
      && node.textContent !== sessionStorage.getItem("before")) {
    sessionStorage.setItem("shown", String(performance.timeOrigin + frame));
  }
  requestAnimationFrame(watch);
};
requestAnimationFrame(watch);
"""
SHOWN = "() => sessionStorage.getItem('shown') !== null"
ELAPSED = "() => Number(sessionStorage.getItem('shown')) - Number(sessionStorage.getItem('pressed'))"


def quantiles(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def press(page: Page) -> float:
    """Milliseconds, by the browser's clock, from pressing 1 (label and save) to the next row."""
    page.keyboard.press("1")
    page.wait_for_function(SHOWN)
    page.wait_for_load_state("domcontentloaded")
    return float(page.evaluate(ELAPSED))


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


def keystrokes(bases: dict[str, str], experiment: str, repeat: int) -> None:
    """Each side's queues pressed alternately, one press at a time, in one browser."""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium", args=["--headless", "--no-sandbox"]
        )
        for label, query in (
            ("every row", "rule=all"),
            ("random 500 of them", "rule=random&n=500&seed=1"),
        ):
            pages = {}
            for side, base in bases.items():
                page = browser.new_page()
                page.add_init_script(WATCH)
                page.goto(f"{base}/queue?e={experiment}&annotator=kb-{query[5:8]}&{query}")
                press(page)  # the first press warms the server's caches
                pages[side] = page
            times: dict[str, list[float]] = {side: [] for side in bases}
            for _ in range(repeat):
                for side, page in pages.items():
                    times[side].append(press(page))
            for side, values in times.items():
                median, p95 = quantiles(values)
                name = f"keystroke to next row, {label} ({side})"
                print(f"{name:52} {median:8.1f} {p95:8.1f}   {NEXT_ROW_BUDGET_MS:.0f}", flush=True)
            for page in pages.values():
                page.close()
        browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--before", help="another checkout's src folder, pressed alternately")
    parser.add_argument("--build-only", help=argparse.SUPPRESS)  # PATH: build with this process's code
    args = parser.parse_args()
    if args.build_only:
        store = open_store(args.build_only)
        build(store, args.rows)
        store.close()
        return
    with tempfile.TemporaryDirectory() as folder, ExitStack() as stack:
        sources = {"this code": None, **({"before": args.before} if args.before else {})}
        bases = {}
        for side, source in sources.items():  # each side's store written by its own code
            path = Path(folder) / f"{side.replace(' ', '-')}.db"
            env = {**os.environ, "PYTHONPATH": source} if source else None
            command = [sys.executable, __file__, "--build-only", str(path), "--rows", str(args.rows)]
            subprocess.run(command, check=True, env=env)
            bases[side] = stack.enter_context(served(path, source))
        print(f"{args.rows}-row experiment; {args.repeat} measured presses / saves each (ms)")
        print(f"{'':52} {'median':>8} {'p95':>8}   budget")
        keystrokes(bases, "bench-a", args.repeat)
        with httpx.Client(base_url=bases["this code"], timeout=60) as client:
            server, wall = saves(client, "bench-a", args.repeat * 3)
        for label, values in (
            ("save a label: server time", server),
            ("save a label: client wall time", wall),
        ):
            median, p95 = quantiles(values)
            print(f"{label:52} {median:8.1f} {p95:8.1f}   {SAVE_BUDGET_MS:.0f}", flush=True)


if __name__ == "__main__":
    main()
