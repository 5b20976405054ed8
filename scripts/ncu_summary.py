#!/usr/bin/env python3
"""Print the few metrics a chapter cites from one or two Nsight Compute reports, side by side.

  ncu_summary.py --metrics m1,m2,... REPORT.ncu-rep [REPORT2.ncu-rep]

Reads each report with `ncu --import REPORT --page raw --csv --metrics ...` and keeps the last launch
of each kernel (the step's timed run; the checked run before it launches the same kernels). One
column per (report, kernel); a "sectors / request" row is added for each pair of metrics that differ
only by _sectors_ / _requests_ (e.g. global loads: 4 = one 128-byte line per warp request, coalesced).
"""
import csv
import io
import os
import subprocess
import sys


def read_report(path, metrics):
    out = subprocess.run(["ncu", "--import", path, "--page", "raw", "--csv", "--metrics", ",".join(metrics)],
                         check=True, capture_output=True, text=True).stdout
    rows = list(csv.reader(io.StringIO(out)))
    header = next(i for i, r in enumerate(rows) if "Kernel Name" in r)
    names = rows[header]
    kernels = {}
    for r in rows[header + 2:]:  # the row after the header holds the units
        if len(r) != len(names):
            continue
        rec = dict(zip(names, r))
        kernels[rec["Kernel Name"].split("(")[0]] = rec  # a later launch replaces an earlier one
    return kernels


def number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def main(argv):
    if len(argv) < 4 or argv[1] != "--metrics":
        print(__doc__, file=sys.stderr)
        return 2
    metrics = [m for m in argv[2].split(",") if m]
    columns = []  # (label, record)
    for path in argv[3:]:
        step = os.path.basename(path).replace(".ncu-rep", "")
        for kernel, rec in read_report(path, metrics).items():
            columns.append((f"{step}: {kernel}", rec))
    rows = [(m, [rec.get(m, "-") for _, rec in columns]) for m in metrics]
    for m in metrics:
        if "_sectors_" in m and m.replace("_sectors_", "_requests_") in metrics:
            q = m.replace("_sectors_", "_requests_")
            ratio = []
            for _, rec in columns:
                s, r = number(rec.get(m, "")), number(rec.get(q, ""))
                ratio.append(f"{s / r:.2f}" if s is not None and r else "-")
            rows.append((m.replace(".sum", "") + " per request", ratio))
    width = max(len(m) for m, _ in rows)
    col = max(16, *(len(label) for label, _ in columns))
    print(f"{'metric':<{width}}  " + "  ".join(f"{label:>{col}}" for label, _ in columns))
    for m, values in rows:
        print(f"{m:<{width}}  " + "  ".join(f"{v:>{col}}" for v in values))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
