#!/usr/bin/env python3
"""What a kernel did over the time of one launch, from Nsight Compute's PM sampling.

    scripts/pm_timeline.py [--slices N] [--kernel REGEX] [--launch I] [--out PICTURE.png]
                           [--labels A,B,...] FILE [FILE...]
    scripts/profile.sh --timeline STEP [-- step flags]     (runs Nsight Compute, then this)

Each FILE is what `ncu --section PmSampling --page raw --csv --print-metric-instances values` printed
(the step's own lines before the table are skipped). PM sampling reads a few counters every sampling
interval (1.5 us on an H100) while one launch runs, instead of one total for the launch. For each
kernel this prints the launch cut into N slices of equal time and then its steady state, the middle
80% of the time its SMs were active (the ramp at the start and the last wave left out):

    MHz      the average SM's active cycles per microsecond: the SM clock wherever every SM has
             work (lower where some SMs are idle, as in the last wave)
    tensor   tensor pipe busy, % of its peak        fma    FMA pipe instructions, % of peak
    issue    instructions issued, % of peak         L2     L2 throughput, % of peak
    DRAM     DRAM throughput, % of peak
Columns whose counter the GPU's sampling does not offer are left out. --kernel keeps the kernels whose
name matches, --launch I the I-th of them in each file (a step launches its kernel at least twice:
the checked run, then the timed ones). With matplotlib (optional) and --out, the kernels kept are
drawn over time, clock above and the busiest pipe below, each series averaged over 30 us, one line
per kernel, named by --labels in order (default: file and kernel).
"""
import argparse
import csv
import os
import re
import sys

# (column, counter name as it ends in Nsight Compute's PM sampling group). The clock column is the
# average SM's active cycles per sample over the sample's length; the others are % of peak as sampled.
CLOCK = "sm__cycles_active.avg"
PIPES = [
    ("tensor", "sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed"),
    ("fma", "sm__inst_executed_pipe_fma_realtime.avg.pct_of_peak_sustained_elapsed"),
]
COLUMNS = [("MHz", CLOCK)] + PIPES + [
    ("issue", "sm__inst_executed_realtime.avg.pct_of_peak_sustained_elapsed"),
    ("L2", "lts__throughput.avg.pct_of_peak_sustained_elapsed"),
    ("DRAM", "dramc__throughput.avg.pct_of_peak_sustained_elapsed"),
]
INTERVAL = "profiler__pmsampler_interval_time"


def number(text):
    return float(text.replace(",", "").strip() or 0)


def samples(cell):
    """'aggregate (v1; v2; ...)' or '(v1; ...)' -> [v1, v2, ...]; None where the cell has no series."""
    if "(" not in cell:
        return None
    inner = cell[cell.index("(") + 1:cell.rindex(")")]
    return [number(v) for v in inner.split(";")]


def kernels(path):
    """Each kernel row of the table: (name, {counter: [samples]}, interval in ns)."""
    with open(path, newline="") as f:
        lines = f.read().splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    if start is None:
        raise SystemExit(f"error: {path}: no Nsight Compute table (was it run with --page raw --csv?)")
    rows = list(csv.reader(lines[start:]))
    header = rows[0]
    for row in rows[1:]:
        if len(row) != len(header) or not row[0].strip().isdigit():
            continue  # the units row, or a stray line
        cells = dict(zip(header, row))
        series = {}
        for name, cell in cells.items():
            for _, counter in COLUMNS:
                if name.endswith(counter):
                    values = samples(cell)
                    if values:
                        series[counter] = values
        interval = number(cells.get(INTERVAL, "0").split("(")[0]) if INTERVAL in cells else 0.0
        yield cells.get("Kernel Name", "?"), series, interval


def mean(values):
    return sum(values) / len(values) if values else 0.0


def active_span(series):
    """[first, last) of the samples in which some SM was active; (0, 0) where none was."""
    busy = [i for i, v in enumerate(series.get(CLOCK) or []) if v > 0]
    return (busy[0], busy[-1] + 1) if busy else (0, 0)


def summarise(name, series, interval_ns, slices, out):
    if CLOCK not in series or interval_ns <= 0:
        print(f"{name}: no PM sampling series (the GPU or this Nsight Compute may not offer it)", file=out)
        return
    first, last = active_span(series)
    if last == first:
        print(f"{name}: no active samples", file=out)
        return
    us = interval_ns / 1000
    cols = [(label, counter) for label, counter in COLUMNS if counter in series]
    print(f"{name[:100]}", file=out)
    print(f"  {last - first} samples of {us:g} us: {(last - first) * us:,.1f} us with SMs active", file=out)
    print("  " + f"{'from us':>9}" + "".join(f"{label:>8}" for label, _ in cols), file=out)

    def row(label, lo, hi):
        cells = []
        for _, counter in cols:
            value = mean(series[counter][lo:hi])
            cells.append(f"{value / us:8.0f}" if counter == CLOCK else f"{value:8.1f}")
        print("  " + f"{label:>9}" + "".join(cells), file=out)

    n = last - first
    for s in range(slices):
        lo, hi = first + n * s // slices, first + n * (s + 1) // slices
        if hi > lo:
            row(f"{(lo - first) * us:,.0f}", lo, hi)
    lo, hi = first + n // 10, first + n * 9 // 10
    if hi > lo:
        row("steady", lo, hi)


def short_name(name):
    return re.split(r"[<(]", name, maxsplit=1)[0].replace("void ", "").strip()[:40]


def moving_average(values, window):
    """Each value averaged with the window - 1 before it (fewer at the start)."""
    out, total = [], 0.0
    for i, v in enumerate(values):
        total += v
        if i >= window:
            total -= values[i - window]
        out.append(total / min(i + 1, window))
    return out


def plot(kernels_kept, labels, out):
    """The clock and the busiest pipe of each kernel over time; False where matplotlib is missing."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 5), sharex=True)
    for (_, series, interval), label in zip(kernels_kept, labels):
        first, last = active_span(series)
        us = interval / 1000
        window = max(1, round(30 / us))  # samples in 30 us
        t = [(i - first) * us / 1000 for i in range(first, last)]  # ms from the first active sample
        clock = moving_average([v / us for v in series[CLOCK][first:last]], window)
        line, = top.plot(t, clock, label=label, linewidth=1.2)
        busiest = max((p for p in PIPES if p[1] in series), key=lambda p: mean(series[p[1]][first:last]), default=None)
        if busiest:
            pipe, counter = busiest
            bottom.plot(t, moving_average(series[counter][first:last], window), color=line.get_color(), linewidth=1.2,
                        label=f"{label}: {pipe} pipe")
    top.set_ylabel("SM clock while active (MHz)")
    top.legend(loc="lower left", fontsize=8)
    top.grid(alpha=0.3)
    bottom.set_ylabel("pipe busy (% of peak)")
    bottom.set_xlabel("time since the launch's first active sample (ms)")
    bottom.set_ylim(0, 105)
    bottom.legend(loc="lower left", fontsize=8)
    bottom.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    return True


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--slices", type=int, default=10, help="equal slices of the launch to print (default 10)")
    p.add_argument("--kernel", default="", help="only kernels whose name matches this regular expression")
    p.add_argument("--launch", type=int, default=0, help="only the I-th matching kernel of each file (from 1)")
    p.add_argument("--out", help="draw the kept kernels over time into this picture (needs matplotlib)")
    p.add_argument("--labels", default="", help="comma-separated names of the kept kernels, in order")
    a = p.parse_args(argv)
    if a.slices < 1:
        p.error("--slices must be at least 1")
    if a.launch < 0:
        p.error("--launch counts from 1")
    kept = []
    for path in a.files:
        matching = [k for k in kernels(path) if not a.kernel or re.search(a.kernel, k[0])]
        if a.launch:
            matching = matching[a.launch - 1:a.launch]
        if not matching:
            what = f" matching '{a.kernel}'" if a.kernel else ""
            raise SystemExit(f"error: {path}: no kernel{what}" + (f" (launch {a.launch})" if a.launch else ""))
        for name, series, interval in matching:
            summarise(name, series, interval, a.slices, sys.stdout)
            kept.append((name, series, interval, path))
    if a.out:
        drawable = [(n, s, i, f) for n, s, i, f in kept if CLOCK in s and i > 0]
        labels = [x.strip() for x in a.labels.split(",")] if a.labels else []
        labels += [f"{os.path.basename(f)}: {short_name(n)}" for n, _, _, f in drawable[len(labels):]]
        if not drawable:
            print("no PM sampling series to draw", file=sys.stderr)
        elif plot([(n, s, i) for n, s, i, _ in drawable], labels, a.out):
            print(f"picture: {a.out}")
        else:
            print("matplotlib is not installed: no picture (the numbers above are the same)")


if __name__ == "__main__":
    main()
