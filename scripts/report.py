#!/usr/bin/env python3
"""Ladder tables from the steps' JSON records (standard library only; matplotlib optional).

  report.py RESULTS_DIR          print one table per folder, write RESULTS_DIR/report.md and, when
                                 matplotlib is importable, RESULTS_DIR/<folder>.png
  report.py --one-line FILE      a one-line summary of one record (run_all.sh's progress lines)

Columns: step, kernel time, end-to-end time (steps that own transfers), metric, % of the ceiling
measured in the same process, speedup over the previous step and over step 01 (kernel time), and
whether the step verified.
"""
import json
import math
import os
import sys


def load(path):
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                return json.loads(line)
    raise ValueError(f"{path}: no JSON record")


def fmt_ms(v):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return f"{v:.3f}" if v < 100 else f"{v:.0f}"


def pct(r):
    p = r.get("pct_of_ceiling")
    return "-" if p is None else f"{p:.1f}%"


def verified(r):
    v = r.get("verified")
    return "skipped" if v is None else ("yes" if v else "NO")


def one_line(r):
    total = r.get("total_ms")
    t = f" total {fmt_ms(total['median'])} ms" if total else ""
    return (f"{fmt_ms(r['kernel_ms']['median'])} ms{t}  {r['metric']['value']:.1f} {r['metric']['unit']}"
            f"  {pct(r)} of ceiling  verified: {verified(r)}")


def ladders(records):
    """{(folder, series): [records sorted by index]}"""
    out = {}
    for r in records:
        out.setdefault((r["folder"], r.get("series", "main")), []).append(r)
    for v in out.values():
        v.sort(key=lambda r: r["index"])
    return dict(sorted(out.items()))


def table(rows):
    base = next((r for r in rows if r["index"] == 1), None)
    lines = ["| step | kernel ms | end-to-end ms | metric | % of ceiling | vs previous | vs step 01 | verified |",
             "|---|---:|---:|---:|---:|---:|---:|---|"]
    prev = None
    for r in rows:
        k = r["kernel_ms"]["median"]
        total = r.get("total_ms")
        vs_prev = f"{prev / k:.2f}x" if prev and k else "-"
        vs_base = f"{base['kernel_ms']['median'] / k:.1f}x" if base and k and r["index"] >= 1 else "-"
        lines.append(f"| {r['step'].split('/', 1)[1]} | {fmt_ms(k)} | {fmt_ms(total['median']) if total else '-'} | "
                     f"{r['metric']['value']:.1f} {r['metric']['unit']} | {pct(r)} | {vs_prev} | {vs_base} | {verified(r)} |")
        if r["index"] >= 1:
            prev = k
    by_name = {}
    for r in rows:
        if r.get("ceiling"):
            c = r["ceiling"]
            by_name.setdefault((c["name"], c["unit"]), []).append(c["value"])
    ceilings = [f"{name} {min(v):.0f}" + (f"-{max(v):.0f}" if max(v) - min(v) >= 0.5 else "") + f" {unit}"
                for (name, unit), v in sorted(by_name.items())]
    return "\n".join(lines), ceilings


def chart(folder, series, rows, out_dir):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    names = [r["step"].split("/", 1)[1] for r in rows]
    vals = [r["metric"]["value"] for r in rows]
    fig, ax = plt.subplots(figsize=(max(6, 0.8 * len(rows) + 2), 4))
    ax.bar(names, vals, color="#4a7")
    ceil = [r["ceiling"]["value"] for r in rows if r.get("ceiling")]
    if ceil:
        ax.axhline(max(ceil), color="#c33", linestyle="--", label="ceiling (same process)")
        ax.legend()
    ax.set_ylabel(rows[0]["metric"]["unit"])
    ax.set_title(f"{folder} ({series}) on {rows[0]['device']}")
    ax.tick_params(axis="x", rotation=45)
    fig.tight_layout()
    path = os.path.join(out_dir, f"{folder}{'' if series == 'main' else '_' + series}.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main(argv):
    if len(argv) == 3 and argv[1] == "--one-line":
        print(one_line(load(argv[2])))
        return 0
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out_dir = argv[1]
    records = [load(os.path.join(out_dir, f)) for f in sorted(os.listdir(out_dir)) if f.endswith(".json")]
    if not records:
        print(f"no records in {out_dir}", file=sys.stderr)
        return 1
    md = [f"# Ladder report: {records[0]['device']}", ""]
    for (folder, series), rows in ladders(records).items():
        text, ceilings = table(rows)
        title = folder if series == "main" else f"{folder} ({series} side ladder)"
        print(f"\n## {title}\n{text}")
        if ceilings:
            print("ceiling: " + "; ".join(ceilings))
        md += [f"## {title}", "", text, ""]
        if ceilings:
            md += ["Ceiling measured in each step's process: " + "; ".join(ceilings) + ".", ""]
        png = chart(folder, series, rows, out_dir)
        if png:
            md += [f"![{title}]({os.path.basename(png)})", ""]
    with open(os.path.join(out_dir, "report.md"), "w") as f:
        f.write("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
