#!/usr/bin/env python3
"""A step's trace (--trace FILE, from the GPU's own activity records) as a timeline picture and as
numbers: how long the GPU was busy, and for how much of that copies and kernels ran at the same time.

  plot_trace.py TRACE.json [--phase NAME] [--out PICTURE.png] [--last N]

--phase keeps the records inside the last host range of that name (e.g. "end-to-end: timed", one of
the step's NVTX phases) and --last N the last N repetitions of it (regions); the default is
everything. Prints one line of numbers; with matplotlib (optional) and --out, draws one row per
stream: copies host-to-device, kernels, copies device-to-host in three colours.
Standard library only (matplotlib optional).
"""
import argparse
import json
import os
import sys


def load(path):
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    gpu = [e for e in events if e.get("ph") == "X" and e.get("pid") == 2]
    host = [e for e in events if e.get("ph") == "X" and e.get("pid") == 1]
    return gpu, host


def union(intervals):
    total, end = 0.0, None
    start = None
    for a, b in sorted(intervals):
        if end is None or a > end:
            if end is not None:
                total += end - start
            start, end = a, b
        else:
            end = max(end, b)
    if end is not None:
        total += end - start
    return total


def intersect(a, b):
    """Length of the overlap of two interval sets (each merged first)."""
    def merged(v):
        out = []
        for x, y in sorted(v):
            if out and x <= out[-1][1]:
                out[-1][1] = max(out[-1][1], y)
            else:
                out.append([x, y])
        return out
    a, b = merged(a), merged(b)
    i = j = 0
    total = 0.0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if hi > lo:
            total += hi - lo
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


def select(gpu, host, phase, last):
    if phase:
        ranges = [h for h in host if h["name"] == phase]
        if not ranges:
            sys.exit(f"no host range named '{phase}' in the trace (names: {sorted({h['name'] for h in host})})")
        r = ranges[-1]
        gpu = [e for e in gpu if e["ts"] >= r["ts"] and e["ts"] + e["dur"] <= r["ts"] + r["dur"]]
    if last:
        regions = sorted({e["args"].get("region", 0) for e in gpu} - {0})[-last:]
        gpu = [e for e in gpu if e["args"].get("region", 0) in regions]
    return gpu


def numbers(gpu):
    spans = lambda es: [(e["ts"], e["ts"] + e["dur"]) for e in es]
    kernels = [e for e in gpu if e["cat"] == "kernel"]
    copies = [e for e in gpu if e["cat"] == "memcpy"]
    busy = union(spans(gpu))
    both = intersect(spans(kernels), spans(copies))
    first = min(e["ts"] for e in gpu)
    last = max(e["ts"] + e["dur"] for e in gpu)
    return {"span_us": last - first, "busy_us": busy, "kernels_us": union(spans(kernels)),
            "copies_us": union(spans(copies)), "overlap_us": both, "streams": len({e["tid"] for e in gpu})}


def draw(gpu, out, title):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no picture")
        return
    t0 = min(e["ts"] for e in gpu)
    streams = sorted({e["tid"] for e in gpu})
    colour = {"memcpy HtoD": "#0072B2", "memcpy DtoH": "#E69F00", "kernel": "#009E73", "memset": "#999999"}
    fig, ax = plt.subplots(figsize=(9, 0.55 * len(streams) + 1.4), dpi=110)
    for row, s in enumerate(streams):
        for e in (e for e in gpu if e["tid"] == s):
            key = e["name"] if e["cat"] == "memcpy" else e["cat"]
            ax.broken_barh([((e["ts"] - t0) / 1e3, e["dur"] / 1e3)], (row - 0.4, 0.8),
                           color=colour.get(key, "#CC79A7"), linewidth=0)
    ax.set_yticks(range(len(streams)), [f"stream {s}" for s in streams])
    ax.invert_yaxis()
    ax.set_xlabel("ms")
    ax.set_title(title, fontsize=10)
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in colour.values()]
    ax.legend(handles, ["copy host→device", "copy device→host", "kernel", "memset"], loc="upper center",
              bbox_to_anchor=(0.5, -0.18), fontsize=8, ncol=4, frameon=False)
    fig.tight_layout()
    fig.savefig(out, metadata={"Software": None})
    print(f"picture: {out}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    ap.add_argument("--phase", default="")
    ap.add_argument("--last", type=int, default=0)
    ap.add_argument("--out", default="")
    ap.add_argument("--title", default="")
    a = ap.parse_args()
    gpu, host = load(a.trace)
    gpu = select(gpu, host, a.phase, a.last)
    if not gpu:
        sys.exit("no GPU records selected")
    n = numbers(gpu)
    print(f"GPU records: {len(gpu)} on {n['streams']} streams; span {n['span_us'] / 1e3:.3f} ms, busy "
          f"{n['busy_us'] / 1e3:.3f} ms; copies {n['copies_us'] / 1e3:.3f} ms, kernels {n['kernels_us'] / 1e3:.3f} ms, "
          f"both at once {n['overlap_us'] / 1e3:.3f} ms ({100 * n['overlap_us'] / max(n['kernels_us'], 1e-9):.0f}% of the kernel time)")
    if a.out:
        draw(gpu, a.out, a.title or os.path.basename(a.trace))
    return 0


if __name__ == "__main__":
    sys.exit(main())
