#!/usr/bin/env python3
"""Ladder tables, charts and chapter numbers from the steps' JSON records.

Standard library only; matplotlib is optional (charts), with a plain-text chart as the fallback.

  report.py RUN_DIR                 print one table per ladder and a summary; write RUN_DIR/report.md
                                    and, with matplotlib, RUN_DIR/<folder>[_<series>].png
  report.py --one-line FILE         a one-line summary of one record (run_all.sh's progress lines)
  report.py --chapters [--only F1,F2] RUN_DIR... [LABEL=DIR...]
                                    rewrite the generated blocks of README.md and of each folder's
                                    README.md from the records of these runs (a later run wins for a
                                    step that is in several); copies the charts to <folder>/img/.
                                    LABEL=DIR names a run of other sizes (scripts/shape_sweep.sh --out
                                    DIR, or run_all.sh with size flags): its records are reached as
                                    LABEL:STEP_ID in value markers and by ladder-sweep blocks

  report.py --gpu-matrix DIR         the tables of scripts/profile_matrix.sh: per folder, what each step
                                    does under each device profile

A RUN_DIR is what scripts/run_all.sh writes: one <folder>_<step>.json record per step that finished,
failures.tsv for the ones that did not.

The generated blocks of a chapter (everything between the markers is replaced):
  <!-- ladder-table FOLDER SERIES -->...<!-- /ladder-table -->     the ladder's table
  <!-- ladder-table FOLDER SERIES LABEL -->                         the same from a labelled run (another
                                                                   GPU's: LABEL=DIR of a run_all.sh run);
                                                                   ladder-run FOLDER LABEL and
                                                                   ladder-summary LABEL likewise
  <!-- ladder-chart FOLDER SERIES -->...<!-- /ladder-chart -->     the ladder's chart
  <!-- ladder-roofline FOLDER SERIES -->...<!-- /ladder-roofline --> the ladder's roofline (every step a
                                                                   point, the measured ceilings and the
                                                                   spec peaks as lines)
  <!-- ladder-run FOLDER -->...<!-- /ladder-run -->                GPU, CUDA version and date
  <!-- ladder-summary -->...<!-- /ladder-summary -->               best step per folder vs its bar
  <!-- ladder-sweep FOLDER LABEL -->...<!-- /ladder-sweep -->      % of ceiling, sizes x steps, of
                                                                   the labelled run
  <!-- ladder-gpus FOLDER LABEL -->...<!-- /ladder-gpus -->        what each step does on each GPU, from
                                                                   a scripts/profile_matrix.sh --out DIR
                                                                   passed as LABEL=DIR
  <!-- ladder-gpus-summary LABEL -->...<!-- /ladder-gpus-summary --> the same, one line per folder
  <!-- v STEP_ID FIELD -->...<!-- /v -->                           one number from one record
                                                                   (LABEL:STEP_ID for a labelled run)
FIELD: kernel_ms, call_ms, total_ms, metric, pct_of_ceiling, ceiling, speedup:OTHER_STEP (kernel
time of OTHER over this step's), extra.KEY, pct_of_spec_dram / pct_of_spec_fp32 / pct_of_spec_tf32,
spec.KEY, work.KEY.
"""
import glob
import json
import math
import os
import re
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Each ladder's bar (docs/ladders.md): what the best step of the main series must reach.
#   pct: its pct_of_ceiling;  floor: kernel_ms at most `value` x the record's extra.floor_ms.
BARS = {
# The summary judges the default size only; the bars at other sizes are in each chapter.
    "vector_add": {"kind": "pct", "value": 95.0, "text": ">= 95% of the copy ceiling (kernel only)"},
    "transpose": {"kind": "pct", "value": 90.0, "text": ">= 90% of the copy ceiling at 8192²"},
    "sgemm": {"kind": "pct", "value": 90.0, "text": ">= 90% of cuBLAS fp32 (pedantic) at 4096³"},
    "reduction": {"kind": "pct", "value": 95.0, "text": ">= 95% of CUB's bandwidth"},
    "avg_matvec": {"kind": "floor", "value": 1.15, "text": "within 15% of the floor (input bytes / copy bandwidth)"},
    "separable_conv": {"kind": "pct", "value": 40.0, "text": ">= 40% of its roofline (the single-pass floor) at 8192², K 17"},
    # A side ladder with a bar of its own: "folder/series".
    "sgemm/tf32": {"kind": "pct", "value": 90.0, "text": ">= 90% of cuBLAS TF32 at 4096³"},
}


def load(path):
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                return json.loads(line)
    raise ValueError(f"{path}: no JSON record")


def load_run(run_dir):
    """The run's records (a file without one, from a run that failed, is skipped: failures.tsv lists
    those) and its failures. A scripts/shape_sweep.sh directory keeps its manifest's order."""
    paths = sorted(glob.glob(os.path.join(run_dir, "*.json")))
    manifest = os.path.join(run_dir, "manifest.tsv")
    if os.path.exists(manifest):
        with open(manifest) as f:
            order = [line.rstrip("\n").split("\t")[-1] for line in f if line.strip()]
        # by file name: the directory may have been copied since the sweep wrote its manifest
        rank = {os.path.basename(p): i for i, p in enumerate(order)}
        paths.sort(key=lambda p: rank.get(os.path.basename(p), len(rank)))
    records = []
    for p in paths:
        try:
            records.append(load(p))
        except (ValueError, OSError):
            pass
    failures = []
    path = os.path.join(run_dir, "failures.tsv")
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                parts = line.rstrip("\n").split("\t")
                if len(parts) >= 2 and parts[0]:
                    failures.append({"step": parts[0], "exit": parts[1], "tail": parts[2] if len(parts) > 2 else ""})
    return records, failures


def is_num(v):
    return isinstance(v, (int, float)) and not (isinstance(v, float) and math.isnan(v))


def fmt_ms(v):
    if not is_num(v):
        return "-"
    if v >= 100:
        return f"{v:.0f}"
    if v >= 1:
        return f"{v:.2f}"
    return f"{v:.3g}" if v >= 0.001 else f"{v:.2e}"


def fmt_num(v):
    if not is_num(v):
        return "-"
    a = abs(v)
    if a >= 1000:
        return f"{v:,.0f}"
    if a >= 100:
        return f"{v:.0f}"
    if a >= 10:
        return f"{v:.1f}"
    return f"{v:.3g}"


def fmt_range(values):
    """The smallest and largest of `values` as "3,010-3,017", or once ("377") where both print alike."""
    lo, hi = fmt_num(min(values)), fmt_num(max(values))
    return lo if lo == hi else f"{lo}-{hi}"


def pct_text(r):
    p = r.get("pct_of_ceiling")
    if not is_num(p):
        return "-"
    return pct_label(p) + (" (total)" if r.get("metric_from") == "total_ms" else "")


def verified(r):
    v = r.get("verified")
    return "skipped" if v is None else ("yes" if v else "NO")


def step_name(r):
    return r["step"].split("/", 1)[1]


def one_line(r):
    total = r.get("total_ms")
    t = f" total {fmt_ms(total['median'])} ms" if total else ""
    return (f"{fmt_ms(r['kernel_ms']['median'])} ms{t}  {fmt_num(r['metric']['value'])} {r['metric']['unit']}"
            f"  {pct_text(r)} of ceiling  verified: {verified(r)}")


def ladders(records):
    """{(folder, series): [records sorted by index]}"""
    out = {}
    for r in records:
        out.setdefault((r["folder"], r.get("series", "main")), []).append(r)
    for v in out.values():
        v.sort(key=lambda r: r["index"])
    return dict(sorted(out.items()))


def basis_ms(r):
    """The time the record's metric comes from: the kernel time, or the total where it says so."""
    if r.get("metric_from") == "total_ms" and r.get("total_ms"):
        return r["total_ms"]["median"]
    return r["kernel_ms"]["median"]


def pct_label(p):
    return "" if not is_num(p) else ("<0.1%" if 0 < p < 0.05 else f"{p:.1f}%")


def table(rows):
    """The ladder's Markdown table and a line naming its ceilings. The speedup columns compare the
    times the metrics come from (the kernel time, or the total where the record says so)."""
    base = next((r for r in rows if r["index"] == 1), None)
    any_total = any(r.get("total_ms") for r in rows)
    head = "| step | kernel ms |" + (" total ms |" if any_total else "") + \
           " metric | % of ceiling | vs previous | vs step 01 | verified |"
    lines = [head, "|---|---:|" + ("---:|" if any_total else "") + "---:|---:|---:|---:|---|"]
    prev = None
    for r in rows:
        k = basis_ms(r)
        total = r.get("total_ms")
        vs_prev = f"{prev / k:.2f}x" if prev and k else "-"
        vs_base = f"{basis_ms(base) / k:.1f}x" if base and k and r["index"] >= 1 else "-"
        cells = [step_name(r), fmt_ms(r["kernel_ms"]["median"])]
        if any_total:
            cells.append(fmt_ms(total["median"]) if total else "-")
        cells += [f"{fmt_num(r['metric']['value'])} {r['metric']['unit']}", pct_text(r), vs_prev, vs_base, verified(r)]
        lines.append("| " + " | ".join(cells) + " |")
        if r["index"] >= 1:
            prev = k
    by_name = {}
    for r in rows:
        if r.get("ceiling"):
            c = r["ceiling"]
            by_name.setdefault((c["name"], c["unit"]), []).append(c["value"])
    ceilings = [f"{name} {fmt_range(v)} {unit}" for (name, unit), v in sorted(by_name.items())]
    note = ""
    if ceilings:
        note = "Ceiling measured in each step's own process: " + "; ".join(ceilings) + "."
    if any(r.get("metric_from") == "total_ms" for r in rows):
        note += (" \"(total)\": the metric and the % of ceiling come from the total time, the time until"
                 " the answer exists, as the ceiling's own time does.")
    return "\n".join(lines), note.strip()


def run_line(rows):
    r = rows[0]
    dates = sorted({x.get("date", "?") for x in rows})
    return f"{r['device']}, CUDA {r.get('cuda', '?')}, {', '.join(dates)}"


def best_of(folder, rows, series="main"):
    """The series' step closest to (or past) its bar, and whether it meets it."""
    bar = BARS.get(folder if series == "main" else f"{folder}/{series}")
    gpu_rows = [r for r in rows if r["index"] >= 1 and r.get("verified")]
    if not gpu_rows or not bar:
        return None
    if bar["kind"] == "floor":
        scored = [(r["extra"].get("floor_ms", float("nan")) / r["kernel_ms"]["median"], r) for r in gpu_rows
                  if is_num(r.get("extra", {}).get("floor_ms"))]
        if not scored:
            return None
        ratio, r = max(scored, key=lambda x: x[0])
        met = r["kernel_ms"]["median"] <= bar["value"] * r["extra"]["floor_ms"]
        return r, f"{1 / ratio:.2f}x the floor", met
    scored = [(r.get("pct_of_ceiling"), r) for r in gpu_rows if is_num(r.get("pct_of_ceiling"))]
    if not scored:
        return None
    p, r = max(scored, key=lambda x: x[0])
    return r, f"{p:.1f}% of ceiling", p >= bar["value"]


def summary(groups):
    lines = ["| ladder | best step | metric | against its ceiling | bar at the default size | met |",
             "|---|---|---:|---:|---|---|"]
    for (folder, series), rows in sorted(groups.items()):
        key = folder if series == "main" else f"{folder}/{series}"
        if key not in BARS:
            continue
        b = best_of(folder, rows, series)
        if not b:
            continue
        r, where, met = b
        lines.append(f"| {key} | {step_name(r)} | {fmt_num(r['metric']['value'])} {r['metric']['unit']} | "
                     f"{where} | {BARS[key]['text']} | {'yes' if met else 'NO'} |")
    return "\n".join(lines)


def chart(folder, series, rows, out_dir):
    """Time per step on a log axis, % of ceiling on each bar, the reference step apart (grey),
    end-to-end time beside kernel time where a step owns transfers. None without matplotlib."""
    if os.environ.get("LADDER_NO_MATPLOTLIB"):  # the fallback, on purpose (tests)
        return None
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    names = [step_name(r) for r in rows][::-1]
    kernel = [r["kernel_ms"]["median"] for r in rows][::-1]
    total = [(r.get("total_ms") or {}).get("median") for r in rows][::-1]
    refs = [r["index"] == 0 for r in rows][::-1]
    pcts = [pct_text(r) if is_num(r.get("pct_of_ceiling")) else "" for r in rows][::-1]
    has_total = any(t for t in total)
    height = 0.45 * len(rows) + 1.4 + (0.3 if has_total else 0)
    fig, ax = plt.subplots(figsize=(9, height))
    h = 0.38 if has_total else 0.7
    ys = list(range(len(rows)))
    colors = ["#9a9a9a" if ref else "#3a7dc9" for ref in refs]
    ax.barh([y + (h / 2 if has_total else 0) for y in ys], kernel, height=h, color=colors, label="kernel")
    if has_total:
        ax.barh([y - h / 2 for y in ys], [t or 0 for t in total], height=h, color="#f0a94a", label="end-to-end / total")
    ax.set_xscale("log")
    lo = min(v for v in kernel + [t for t in total if t] if v and v > 0)
    hi = max(kernel + [t for t in total if t])
    ax.set_xlim(lo / 2, hi * 8)
    n_refs = sum(refs)
    if 0 < n_refs < len(rows):  # the reference steps (index 0) sit at the top, apart from the ladder
        ax.axhline(len(rows) - n_refs - 0.5, color="#666", linestyle="--", linewidth=0.8)
    for y, k, label, t in zip(ys, kernel, pcts, total):
        x = max(k, t or 0)
        ax.text(x * 1.15, y, f"{fmt_ms(k)} ms  {label}", va="center", fontsize=8)
    ax.set_yticks(ys)
    ax.set_yticklabels(names, fontsize=9)
    ax.set_xlabel("median time, ms (log scale); label: kernel time and % of the ceiling"
                  + (" (total: of the total time)" if any("(total)" in p for p in pcts) else ""))
    unit = rows[0]["metric"]["unit"]
    ax.set_title(f"{folder}{'' if series == 'main' else ' (' + series + ')'}: {rows[0]['device']} "
                 f"(grey: reference step; metric {unit})", fontsize=10)
    ax.grid(axis="x", which="major", alpha=0.3)
    if has_total:  # in a strip of its own under the axis label, where no bar or label is
        fig.legend(*ax.get_legend_handles_labels(), loc="lower center", ncol=2, fontsize=8, frameon=False)
        fig.tight_layout(rect=(0, 0.3 / height, 1, 1))
    else:
        fig.tight_layout()
    path = os.path.join(out_dir, f"{folder}{'' if series == 'main' else '_' + series}.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def roofs(rows):
    """The roofline's lines for a ladder, from its records: the measured bandwidth ceiling (GB/s) and
    compute ceilings (GFLOP/s), each (label, value, measured?)."""
    r = next((x for x in rows if x.get("spec")), rows[0])
    spec = r.get("spec") or {}
    bw, compute = [], []
    copy = [x["ceiling"]["value"] for x in rows if x.get("ceiling") and x["ceiling"]["unit"] == "GB/s"]
    copy += [x["extra"]["copy_ceiling_gbps"] for x in rows if "copy_ceiling_gbps" in x.get("extra", {})]
    if copy:
        bw.append(("bandwidth ceiling (measured)", statistics.median(copy), True))
    if spec.get("dram_gbps"):
        bw.append(("DRAM (spec)", spec["dram_gbps"], False))
    blas = [x["ceiling"]["value"] for x in rows if x.get("ceiling") and x["ceiling"]["unit"] == "GFLOP/s"]
    if blas:
        compute.append((rows[0]["ceiling"]["name"] + " (measured)", statistics.median(blas), True))
    fma = [x["extra"]["fma_ceiling_gflops"] for x in rows if "fma_ceiling_gflops" in x.get("extra", {})]
    if fma:
        compute.append(("FP32 FMA (measured)", statistics.median(fma), True))
    key = "tf32_gflops" if any(x.get("pct_of_spec_tf32") is not None for x in rows) else "fp32_gflops"
    if spec.get(key):
        compute.append((("TF32" if key == "tf32_gflops" else "FP32") + " peak (spec)", spec[key], False))
    return bw, compute


def roofline(folder, series, rows, out_dir):
    """Every step of a ladder as a point on its roofline: arithmetic intensity (the problem's FLOPs
    over its fewest bytes) across, achieved GFLOP/s up; the measured ceilings as solid lines, the
    spec peaks dashed. A problem without arithmetic (transpose) is drawn as achieved GB/s against
    the bandwidth lines. None without matplotlib."""
    if os.environ.get("LADDER_NO_MATPLOTLIB"):
        return None
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    pts = [x for x in rows if x.get("work") and x["work"].get("min_bytes") and x.get("kernel_ms") and x.get("spec")]
    if not pts:
        return None
    bw, compute = roofs(pts)
    fig, ax = plt.subplots(figsize=(8, 4.6), dpi=110)
    flops = pts[0]["work"].get("flops") or 0
    colours = plt.get_cmap("viridis")
    if flops <= 0:  # bandwidth only: GB/s per step, the bandwidth roofs as lines
        names = [step_name(x) for x in pts]
        gb = [x["work"]["min_bytes"] / (x["kernel_ms"]["median"] * 1e6) for x in pts]
        ax.bar(range(len(pts)), gb, color=[colours(i / max(1, len(pts) - 1)) for i in range(len(pts))])
        for label, v, measured in bw:
            ax.axhline(v, color="black", linestyle="-" if measured else "--", linewidth=1)
            ax.text(len(pts) - 0.5, v, f" {label}: {v:,.0f} GB/s", va="bottom", ha="right", fontsize=8)
        ax.set_xticks(range(len(pts)), names, rotation=35, ha="right", fontsize=8)
        ax.set_ylabel("GB/s (fewest bytes / kernel time)")
    else:
        ai = [x["work"]["flops"] / x["work"]["min_bytes"] for x in pts]
        perf = [x["work"]["flops"] / (x["kernel_ms"]["median"] * 1e6) for x in pts]
        top = max([v for _, v, _ in compute] + perf)
        ridges = [c / b for _, b, _ in bw for _, c, _ in compute] or [min(ai)]
        lo, hi = min(min(ai), min(ridges)) / 8, max(max(ai), max(ridges)) * 8
        xs = [lo * (hi / lo) ** (i / 200) for i in range(201)]
        ax.set_ylim(min(perf) / 3, top * 2.5)
        # Each roof in two parts: the slope (bandwidth × intensity) styled by its bandwidth, the flat
        # part by its compute peak (solid: measured, dashed: spec). The slopes' labels alternate above
        # and below their lines, so that two close bandwidths stay readable.
        style = lambda measured: dict(color="black" if measured else "grey", linestyle="-" if measured else "--",
                                      linewidth=1)
        for j, (label, b, measured) in enumerate(sorted(bw, key=lambda t: -t[1])):
            for cl, c, cm in compute or [("", top * 2, True)]:
                ridge = c / b
                slope = [x for x in xs if x <= ridge] + [ridge]
                ax.plot(slope, [b * x for x in slope], **style(measured))
                ax.plot([ridge, hi], [c, c], **style(cm))
            above = j % 2 == 0
            ax.text(lo * 1.3, b * lo * 1.3 * (1.25 if above else 0.8), f"{label} {b:,.0f} GB/s", fontsize=7,
                    rotation=28, rotation_mode="anchor", va="bottom" if above else "top")
        for j, (label, c, measured) in enumerate(sorted(compute, key=lambda t: -t[1])):
            ax.text(hi / 1.5, c * (1.06 if j % 2 == 0 else 0.8), f"{label} {c:,.0f} GFLOP/s", fontsize=7, ha="right")
        for i, (x, y, r) in enumerate(zip(ai, perf, pts)):
            ax.scatter([x], [y], color=colours(i / max(1, len(pts) - 1)), s=28, zorder=3,
                       label=f"{step_name(r)}: {y:,.0f}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(lo, hi)
        ax.set_xlabel("arithmetic intensity, FLOP per byte (the problem's fewest bytes)")
        ax.set_ylabel("GFLOP/s")
        ax.legend(fontsize=6.5, loc="lower right", ncol=2)
    ax.set_title(f"{folder}{'' if series == 'main' else ' (' + series + ')'} roofline: {pts[0]['device']} "
                 f"(solid: measured ceilings, dashed: spec)", fontsize=9)
    ax.grid(alpha=0.3, which="both")
    fig.tight_layout()
    path = os.path.join(out_dir, f"{folder}{'' if series == 'main' else '_' + series}_roofline.png")
    fig.savefig(path, metadata={"Software": None})
    plt.close(fig)
    return path


def text_chart(rows):
    """The fallback: one line per step, a bar of '#' on a log scale of the kernel time."""
    times = [r["kernel_ms"]["median"] for r in rows if r["kernel_ms"]["median"] > 0]
    if not times:
        return ""
    lo, hi = math.log10(min(times)), math.log10(max(times))
    span = max(hi - lo, 1e-9)
    width = max(len(step_name(r)) for r in rows)
    out = []
    for r in rows:
        k = r["kernel_ms"]["median"]
        n = 1 + int(round(40 * (math.log10(k) - lo) / span)) if k > 0 else 0
        p = r.get("pct_of_ceiling")
        out.append(f"{step_name(r):<{width}} {'#' * n:<41} {fmt_ms(k)} ms  {pct_label(p)}".rstrip())
    return "\n".join(out)


def load_skipped(run_dir):
    """The steps this GPU cannot run (run_all.sh's skipped.tsv: step, reason)."""
    path = os.path.join(run_dir, "skipped.tsv")
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [dict(zip(("step", "reason"), line.rstrip("\n").split("\t", 1))) for line in f if line.strip()]


def report(run_dir):
    records, failures = load_run(run_dir)
    skipped = load_skipped(run_dir)
    if not records and not failures:
        print(f"no records in {run_dir}", file=sys.stderr)
        return 1
    groups = ladders(records)
    device = records[0]["device"] if records else "?"
    md = [f"# Ladder report: {device}", ""]
    if records:
        md += [f"Run: {run_line(records)}.", "", "## Summary", "", summary(groups), ""]
    if skipped:
        md += ["## Not run on this GPU", "", "| step | why |", "|---|---|"]
        md += [f"| {k['step']} | {k.get('reason', '')} |" for k in skipped]
        md.append("")
    if failures:
        md += ["## Failures", "", "| step | exit | last lines |", "|---|---:|---|"]
        md += [f"| {f['step']} | {f['exit']} | {f['tail'][:200]} |" for f in failures]
        md.append("")
    print("\n" + summary(groups))
    for (folder, series), rows in groups.items():
        text, note = table(rows)
        title = folder if series == "main" else f"{folder} ({series} side ladder)"
        print(f"\n## {title}\n{text}")
        if note:
            print(note)
        md += [f"## {title}", "", text, ""]
        if note:
            md += [note, ""]
        png = chart(folder, series, rows, run_dir)
        if png:
            md += [f"![{title}]({os.path.basename(png)})", ""]
        else:
            md += ["```", text_chart(rows), "```", ""]
        roof = roofline(folder, series, rows, run_dir)
        if roof:
            md += [f"![{title} roofline]({os.path.basename(roof)})", ""]
    if skipped:
        print(f"\n{len(skipped)} step(s) not run on this GPU: " + "; ".join(f"{k['step']} ({k.get('reason', '')})" for k in skipped))
    if failures:
        print(f"\n{len(failures)} step(s) failed: " + ", ".join(f"{f['step']} (exit {f['exit']})" for f in failures))
    with open(os.path.join(run_dir, "report.md"), "w") as f:
        f.write("\n".join(md))
    return 0


# ---- chapters -----------------------------------------------------------------------------------

BLOCK = re.compile(r"(<!-- (ladder-table|ladder-chart|ladder-roofline|ladder-run|ladder-summary|ladder-sweep|ladder-gpus|ladder-gpus-summary)([^>]*?) -->)(.*?)(<!-- /\2 -->)", re.S)
VALUE = re.compile(r"(<!-- v (\S+) (\S+) -->)(.*?)(<!-- /v -->)", re.S)


def field_value(by_id, step_id, field):
    r = by_id.get(step_id)
    if r is None:
        raise KeyError(f"no record for {step_id}")
    if field == "kernel_ms":
        return f"{fmt_ms(r['kernel_ms']['median'])} ms"
    if field == "total_ms":
        return f"{fmt_ms(r['total_ms']['median'])} ms"
    if field == "metric":
        return f"{fmt_num(r['metric']['value'])} {r['metric']['unit']}"
    if field == "pct_of_ceiling":
        return f"{r['pct_of_ceiling']:.1f}%"
    if field == "ceiling":
        return f"{fmt_num(r['ceiling']['value'])} {r['ceiling']['unit']}"
    if field.startswith("speedup:"):
        label = step_id.split(":", 1)[0] + ":" if ":" in step_id else ""
        other = by_id.get(f"{label}{r['folder']}/{field.split(':', 1)[1]}")
        if other is None:
            raise KeyError(f"no record for {field}")
        return f"{other['kernel_ms']['median'] / r['kernel_ms']['median']:.2f}x"
    if field == "call_ms":
        return f"{fmt_ms(r['call_ms']['median'])} ms"
    if field.startswith("extra."):
        return fmt_num(r["extra"][field.split(".", 1)[1]])
    if field.startswith("pct_of_spec_"):
        return f"{r[field]:.1f}%"
    if field.startswith(("spec.", "work.")):
        group, key = field.split(".", 1)
        return fmt_num(r[group][key])
    raise KeyError(f"unknown field {field}")


def size_text(r):
    return " x ".join(str(v) for v in r["size"].values())


def sweep_table(records):
    """% of ceiling, one row per size, one column per step (median over repeats), then each size's
    ceiling range."""
    steps, sizes, cells, ceil = [], [], {}, {}
    for r in sorted(records, key=lambda r: r["index"]):
        name, size = step_name(r), size_text(r)
        if name not in steps:
            steps.append(name)
        if size not in sizes:
            sizes.append(size)
        if r.get("verified") and is_num(r.get("pct_of_ceiling")):
            cells.setdefault((size, name), []).append(r["pct_of_ceiling"])
        if r.get("ceiling"):
            ceil.setdefault(size, []).append(r["ceiling"]["value"])
    unit = next((r["ceiling"]["unit"] for r in records if r.get("ceiling")), "")
    lines = ["| size | " + " | ".join(steps) + " | ceiling |", "|---|" + "---:|" * (len(steps) + 1)]
    for size in sizes:
        row = []
        for name in steps:
            v = sorted(cells.get((size, name), []))
            row.append(f"{v[len(v) // 2]:.1f}%" if v else "-")
        c = ceil.get(size, [])
        row.append(f"{fmt_range(c)} {unit}" if c else "-")
        lines.append(f"| {size} | " + " | ".join(row) + " |")
    return "\n".join(lines)


# ---- which GPU runs what (scripts/profile_matrix.sh) ---------------------------------------------

# The device profiles in the order of the tables (docs/contract.md): key, column title, compute capability.
PROFILES = [("v100", "V100", 70), ("t4", "T4", 75), ("a100", "A100", 80), ("rtx3060", "RTX 3060", 86),
            ("l4", "L4", 89), ("rtx4090", "RTX 4090", 89), ("rtx5090", "RTX 5090", 120)]


def is_matrix(d):
    return os.path.isdir(os.path.join(d, "none"))


def load_matrix(d):
    """{step_id: {profile: ("runs", record) | ("exit 2", reason)}}, plus the static shared memory
    of each step's executable, from a scripts/profile_matrix.sh --out directory."""
    steps, static_smem = {}, {}
    # File names are <folder>_<step>; folders have underscores too (vector_add), so the step id of a
    # name comes from the records ("step") where there is one, else from the folder names they show.
    ids = {}
    for path in glob.glob(os.path.join(d, "*", "*.json")):
        try:
            step = load(path)["step"]
        except (ValueError, OSError, KeyError):
            continue
        ids[step.replace("/", "_")] = step
    folders = sorted({i.split("/")[0] for i in ids.values()}, key=len, reverse=True)

    def step_of(name):
        if name in ids:
            return ids[name]
        folder = next((f for f in folders if name.startswith(f + "_")), name.split("_")[0])
        return f"{folder}/{name[len(folder) + 1:]}"

    for profile in ["none"] + [p[0] for p in PROFILES]:
        pdir = os.path.join(d, profile)
        for path in sorted(glob.glob(os.path.join(pdir, "*.json"))):
            try:
                r = load(path)
            except (ValueError, OSError):
                continue
            steps.setdefault(r["step"], {})[profile] = ("runs", r)
        for path in sorted(glob.glob(os.path.join(pdir, "*.err"))) + sorted(glob.glob(os.path.join(pdir, "*.bug"))):
            step_id = step_of(os.path.basename(path).rsplit(".", 1)[0])
            with open(path) as f:
                text = f.read().strip()
            kind = "exit 2" if path.endswith(".err") else "FAILS"
            steps.setdefault(step_id, {})[profile] = (kind, text)
        for path in glob.glob(os.path.join(pdir, "*.static_smem")):
            with open(path) as f:
                v = f.read().strip()
            if v.isdigit():
                static_smem[step_of(os.path.basename(path).rsplit(".", 1)[0])] = int(v)
    return steps, static_smem


def short_reason(text):
    """'the strip pass needs 70000 bytes of shared memory per block; this GPU ...' -> the part before ';'."""
    return text.split(";")[0].replace("|", "/")


def choice_name(r):
    c = r.get("choice") or ""
    return c.split(":")[0].split(" (")[0].strip()


def reference_record(outcomes):
    """The step's record on the real GPU (no profile), or {}."""
    ref = outcomes.get("none")
    return ref[1] if ref and ref[0] == "runs" else {}


def gpu_cell(outcome, reference):
    kind, v = outcome
    if kind == "runs":
        c = choice_name(v)
        return f"adapts: {c}" if c and c != choice_name(reference) else "runs"
    if kind == "exit 2":
        return f"exit 2: {short_reason(v)}"
    return "**FAILS**"


def gpu_table(folder, steps, static_smem):
    cols = [p for p in PROFILES]
    lines = ["| step | oldest GPU | shared memory per block | H100 (sm_90) | " +
             " | ".join(f"{title} (sm_{cc})" for _, title, cc in cols) + " |",
             "|---|---|---:|---|" + "---|" * len(cols)]
    for step_id in sorted(s for s in steps if s.split("/")[0] == folder):
        outcomes = steps[step_id]
        ref = outcomes.get("none")
        ref_rec = reference_record(outcomes)
        runs_on = [cc for key, _, cc in cols if outcomes.get(key, ("", ""))[0] == "runs"]
        profiled = any(key in outcomes for key, _, _ in cols)
        oldest = (f"sm_{min(runs_on)}" if runs_on else
                  "sm_90 only" if ref_rec and profiled else "not profiled")
        smem = max(static_smem.get(step_id, 0),
                   int((ref_rec.get("extra") or {}).get("smem_per_block_bytes", 0)))
        smem_text = f"{smem / 1024:.1f} KB" if smem else "none"
        h100 = (f"runs: {choice_name(ref_rec)}" if choice_name(ref_rec) else "runs") if ref_rec else \
            (gpu_cell(ref, {}) if ref else "-")
        cells = [gpu_cell(outcomes[key], ref_rec) if key in outcomes else "-" for key, _, _ in cols]
        lines.append(f"| {step_id.split('/', 1)[1]} | {oldest} | {smem_text} | {h100} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def gpu_summary(steps):
    folders = sorted({s.split("/")[0] for s in steps})
    lines = ["| folder | steps | " + " | ".join(f"{title} (sm_{cc})" for _, title, cc in PROFILES) + " |",
             "|---|---:|" + "---|" * len(PROFILES)]
    for folder in folders:
        ids = [s for s in steps if s.split("/")[0] == folder]
        cells = []
        for key, _, _ in PROFILES:
            out = [steps[s].get(key, ("-", "")) for s in ids]
            runs = sum(1 for o in out if o[0] == "runs")
            adapts = sum(1 for s, o in zip(ids, out)
                         if o[0] == "runs" and gpu_cell(o, reference_record(steps[s])).startswith("adapts"))
            refused = sum(1 for o in out if o[0] == "exit 2")
            bad = sum(1 for o in out if o[0] == "FAILS")
            text = f"{runs} run" + (f" ({adapts} adapt)" if adapts else "")
            if refused:
                text += f", {refused} exit 2"
            if bad:
                text += f", **{bad} FAIL**"
            cells.append(text)
        lines.append(f"| [{folder}]({folder}/README.md) | {len(ids)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def gpu_matrix(d):
    steps, static_smem = load_matrix(d)
    if not steps:
        print(f"{d}: no records", file=sys.stderr)
        return 1
    for folder in sorted({s.split("/")[0] for s in steps}):
        print(f"\n## {folder}\n\n{gpu_table(folder, steps, static_smem)}")
    print(f"\n## all folders\n\n{gpu_summary(steps)}")
    return 1 if any(o[0] == "FAILS" for v in steps.values() for o in v.values()) else 0


def rewrite(text, groups, by_id, charts, problems, where, labelled=None, matrices=None):
    labelled = labelled or {}
    matrices = matrices or {}

    def block(m):
        kind, args = m.group(2), m.group(3).split()
        if kind == "ladder-summary":  # ladder-summary [LABEL]: the labelled run's, e.g. another GPU's
            source = ladders(labelled.get(args[0], [])) if args else groups
            if not source:
                problems.append(f"{where}: no records for the summary {' '.join(args)}")
                return m.group(0)
            return f"{m.group(1)}\n{summary(source)}\n{m.group(5)}"
        if kind in ("ladder-gpus", "ladder-gpus-summary"):
            folder, label = (args + ["", ""])[:2] if kind == "ladder-gpus" else ("", (args + [""])[0])
            if label not in matrices:
                problems.append(f"{where}: no profile matrix labelled {label!r}")
                return m.group(0)
            steps, static_smem = matrices[label]
            any_step = next(r for o in steps.values() for k, r in o.values() if k == "runs")
            line = (f"One run per step at its default size under each device profile on "
                    f"{any_step['device'].split(' (profile')[0]}, CUDA {any_step['cuda']}, {any_step['date']} "
                    f"(`scripts/profile_matrix.sh`).")
            if kind == "ladder-gpus-summary":
                return f"{m.group(1)}\n{gpu_summary(steps)}\n\n{line}\n{m.group(5)}"
            return f"{m.group(1)}\n{gpu_table(folder, steps, static_smem)}\n\n{line}\n{m.group(5)}"
        if kind == "ladder-sweep":
            folder, label = (args + ["", ""])[:2]
            records = [r for r in labelled.get(label, []) if r["folder"] == folder]
            if not records:
                problems.append(f"{where}: no records for the sweep {folder} {label}")
                return m.group(0)
            return (f"{m.group(1)}\n{sweep_table(records)}\n\nMeasured on {run_line(records)}, each "
                    f"run against the ceiling measured in its own process.\n{m.group(5)}")
        folder = args[0] if args else ""
        series = args[1] if len(args) > 1 else "main"
        label = args[2] if len(args) > 2 else ""
        if kind == "ladder-run" and len(args) == 2:  # ladder-run FOLDER LABEL
            series, label = "main", args[1]
        rows = (ladders(labelled.get(label, [])) if label else groups).get((folder, series))
        if not rows:
            problems.append(f"{where}: no records for {folder} {series} {label}".rstrip())
            return m.group(0)
        if kind == "ladder-chart" and label:
            return f"{m.group(1)}\n```\n{text_chart(rows)}\n```\n{m.group(5)}"
        if kind == "ladder-table":
            t, note = table(rows)
            return f"{m.group(1)}\n{t}\n\n{note}\n{m.group(5)}"
        if kind == "ladder-run":
            return f"{m.group(1)}{run_line(rows)}{m.group(5)}"
        if kind == "ladder-roofline":
            png = charts.get((folder, series, "roofline"))
            if not png:
                return f"{m.group(1)}\n(the roofline needs matplotlib: `pip install matplotlib`, then rerun)\n{m.group(5)}"
            return f"{m.group(1)}\n![{folder} {series} roofline](img/{os.path.basename(png)})\n{m.group(5)}"
        png = charts.get((folder, series))
        if not png:
            return f"{m.group(1)}\n```\n{text_chart(rows)}\n```\n{m.group(5)}"
        return f"{m.group(1)}\n![{folder} {series}](img/{os.path.basename(png)})\n{m.group(5)}"

    def value(m):
        try:
            return f"{m.group(1)}{field_value(by_id, m.group(2), m.group(3))}{m.group(5)}"
        except (KeyError, TypeError) as e:
            problems.append(f"{where}: {m.group(2)} {m.group(3)}: {e}")
            return m.group(0)

    return VALUE.sub(value, BLOCK.sub(block, text))


def chapters(run_dirs, only=None):
    by_id, labelled, matrices = {}, {}, {}
    for arg in run_dirs:
        label, d = arg.split("=", 1) if "=" in arg else ("", arg)
        if label and is_matrix(d):
            matrices[label] = load_matrix(d)
            continue
        for r in load_run(d)[0]:
            if label:
                labelled.setdefault(label, []).append(r)
                by_id[f"{label}:{r['step']}"] = r
            else:
                by_id[r["step"]] = r
    if not by_id:
        print("no records", file=sys.stderr)
        return 1
    groups = ladders([r for k, r in by_id.items() if ":" not in k])
    charts = {}
    for (folder, series), rows in groups.items():
        img = os.path.join(ROOT, folder, "img")
        os.makedirs(img, exist_ok=True)
        png = chart(folder, series, rows, img)
        if png:
            charts[(folder, series)] = png
        png = roofline(folder, series, rows, img)
        if png:
            charts[(folder, series, "roofline")] = png
    problems = []
    paths = [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "*", "*.md")))
    if only:  # folder names; "." is the top-level README.md
        paths = [p for p in paths
                 if (os.path.relpath(os.path.dirname(p), ROOT) in only)]
    for path in paths:
        with open(path) as f:
            text = f.read()
        where = os.path.relpath(path, ROOT)
        for n, line in enumerate(text.splitlines(), 1):
            if line.startswith("<!-- v "):  # CommonMark starts an HTML block there: the paragraph breaks
                problems.append(f"{where}:{n}: a value marker starts the line; move a word in front of it")
        new = rewrite(text, groups, by_id, charts, problems, where, labelled, matrices)
        if new != text:
            with open(path, "w") as f:
                f.write(new)
            print(f"rewrote {os.path.relpath(path, ROOT)}")
    for p in problems:
        print(f"warning: {p}", file=sys.stderr)
    return 1 if problems else 0


def main(argv):
    if len(argv) == 3 and argv[1] == "--one-line":
        print(one_line(load(argv[2])))
        return 0
    if len(argv) == 3 and argv[1] == "--gpu-matrix":
        return gpu_matrix(argv[2])
    if len(argv) >= 3 and argv[1] == "--chapters":
        if len(argv) >= 5 and argv[2] == "--only":  # --only vector_add,.: these chapters ("." README.md)
            return chapters(argv[4:], set(argv[3].split(",")))
        return chapters(argv[2:])
    if len(argv) != 2 or argv[1].startswith("-"):
        print(__doc__, file=sys.stderr)
        return 0 if len(argv) == 2 and argv[1] in ("-h", "--help") else 2
    return report(argv[1])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
