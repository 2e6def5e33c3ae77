"""The HTML report on 5 000 images / 80 classes (issue #28): write time against ``--plots``,
file size, opening time in headless Chromium, the gallery paging through one class's FPs.

Data: ``ioukit.synthetic.make_detections(5000, 80, seed=0)`` (about 36 000 ground truths and
320 000 predictions) as COCO JSON files. ``ioukit eval --html`` and ``ioukit eval --plots``
run in fresh processes, alternating, ``--repeat`` times each; the medians (wall and CPU of the
child) and their ratio are printed (goal: ``--html`` within 1.5x of ``--plots``). Then the
report opens ``--repeat`` times in Chromium (``chromium`` on PATH, driven by playwright): the
time from navigation to the page's ready flag (goal: 2 s), the CPU time of the page's main
thread meanwhile (from a trace: the open time of an idle machine, which a loaded one inflates
in wall time), and the main-thread time to show the false positives of the most frequent class
and of each further page of 60 of them.

With ``--bootstrap N`` a third child writes the report with ``--html-bootstrap N`` (the
intervals of the trust layer; off by default in ``--html``), timed the same way.

Usage: ``python benchmarks/bench_report.py [--repeat 3] [--images N] [--bootstrap N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ioukit.synthetic import make_detections

_PAGING = """() => {
  const times = [], t0 = performance.now();
  const c = document.getElementById("gallery-class");
  c.value = "0"; c.dispatchEvent(new Event("change"));
  const o = document.getElementById("gallery-outcome");
  o.value = "FP"; o.dispatchEvent(new Event("change"));
  document.body.offsetHeight;
  times.push(performance.now() - t0);
  for (let i = 0; i < 9; i++) {
    const t = performance.now();
    document.getElementById("gallery-more").click();
    document.body.offsetHeight;
    times.push(performance.now() - t);
  }
  return times;
}"""


_TRACE = ["devtools.timeline", "disabled-by-default-devtools.timeline", "v8", "blink"]


def _main_thread_cpu(trace: Path) -> float:
    """CPU seconds of the renderer's main thread in a Chromium trace: the thread CPU
    (``tdur``) of its tasks, summed (the busiest thread's; load on the machine does not
    inflate it as it does the wall time)."""
    busy: dict[tuple[int, int], float] = {}
    for event in json.loads(trace.read_text())["traceEvents"]:
        if event.get("ph") == "X" and event.get("name") == "RunTask":
            key = (event["pid"], event["tid"])
            busy[key] = busy.get(key, 0.0) + event.get("tdur", 0) / 1e6
    return max(busy.values(), default=float("nan"))


def _child(args: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of one ``ioukit eval`` process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "ioukit", "eval", *args], check=True, stdout=subprocess.DEVNULL
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--images", type=int, default=5000)
    parser.add_argument("--bootstrap", type=int, default=0, help="also time --html-bootstrap N")
    opts = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench_report_"))
    gt, results = make_detections(num_images=opts.images, num_classes=80, seed=0)
    (folder / "gt.json").write_text(json.dumps(gt))
    (folder / "pred.json").write_text(json.dumps(results))
    common = ["--gt", str(folder / "gt.json"), "--pred", str(folder / "pred.json"), "--quiet"]
    html, plots, boot = [], [], []
    report = folder / "report.html"
    for _ in range(opts.repeat):
        report.unlink(missing_ok=True)
        html.append(_child([*common, "--html", str(report)]))
        shutil.rmtree(folder / "plots", ignore_errors=True)
        plots.append(_child([*common, "--plots", str(folder / "plots")]))
        if opts.bootstrap:
            target = folder / "report_bootstrap.html"
            target.unlink(missing_ok=True)
            n = str(opts.bootstrap)
            boot.append(_child([*common, "--html", str(target), "--html-bootstrap", n]))
    runs_by_name = [("--html", html), ("--plots", plots)]
    if boot:
        runs_by_name.append((f"--html --html-bootstrap {opts.bootstrap}", boot))
    for name, runs in runs_by_name:
        wall = statistics.median(r[0] for r in runs)
        cpu = statistics.median(r[1] for r in runs)
        print(f"ioukit eval {name:8s} wall {wall:6.2f} s  cpu {cpu:6.2f} s")
    for name, runs in runs_by_name[::2]:
        ratio_wall = statistics.median(h[0] / p[0] for h, p in zip(runs, plots, strict=True))
        ratio_cpu = statistics.median(h[1] / p[1] for h, p in zip(runs, plots, strict=True))
        print(f"{name} / --plots: wall {ratio_wall:.2f}x  cpu {ratio_cpu:.2f}x  (goal <= 1.5x)")
    print(f"report size {report.stat().st_size / 1e6:.1f} MB")
    chromium = shutil.which("chromium")
    if chromium is None:
        print("no chromium on PATH: opening time not measured")
        return
    from playwright.sync_api import sync_playwright

    opened, paging, cpu = [], [], []
    trace = folder / "trace.json"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        for _ in range(opts.repeat):
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            browser.start_tracing(page=page, path=str(trace), categories=_TRACE)
            start = time.perf_counter()
            page.goto(report.as_uri())
            page.wait_for_selector("body[data-ready='1']", timeout=60_000)
            opened.append(time.perf_counter() - start)
            page.wait_for_timeout(300)  # the first frame after the ready flag
            browser.stop_tracing()
            cpu.append(_main_thread_cpu(trace))
            # main-thread time (script + layout) of choosing the FPs of the most frequent
            # class, then of each further page of 60 items: what a user waits for
            paging.append(page.evaluate(_PAGING))
            page.close()
        browser.close()
    print(
        f"open in headless Chromium: median {statistics.median(opened):.2f} s "
        f"(runs {', '.join(f'{t:.2f}' for t in opened)}; goal <= 2 s)"
    )
    print(
        f"main-thread CPU of opening (trace): median {statistics.median(cpu):.2f} s "
        f"(runs {', '.join(f'{t:.2f}' for t in cpu)}): the open time without waiting for the "
        "CPU, about the open time of an idle machine"
    )
    first = statistics.median(p[0] for p in paging)
    worst = statistics.median(max(p[1:]) for p in paging)
    print(f"FPs of class 0: first 60 shown in {first:.0f} ms, each next 60 in <= {worst:.0f} ms")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
