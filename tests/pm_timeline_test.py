#!/usr/bin/env python3
"""scripts/pm_timeline.py on a made-up PM-sampling table: the step's own lines skipped, the clock
from the active cycles per sample, the slices and the steady state, the kernel and launch filters,
missing series, and the picture (or the reason there is none)."""
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOL = os.path.join(ROOT, "scripts", "pm_timeline.py")

# 20 samples of 2 us: idle, 10 samples at 3,000 active cycles (1,500 MHz) with the tensor pipe at 90%,
# 8 at 2,000 (1,000 MHz) at 50%, idle. A second kernel without a series.
ACTIVE = ["0", "0"] + ["3,000"] * 10 + ["2,000"] * 8
TENSOR = ["0", "0"] + ["90"] * 10 + ["50"] * 8
HEADER = ['ID', 'Kernel Name', 'TPC.TriageCompute.sm__cycles_active.avg',
          'TPC.TriageCompute.sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed',
          'profiler__pmsampler_interval_time']
TABLE = "\n".join([
    "== sgemm/tf32_04_wgmma_specialized ==",
    "kernel   2.8 ms median",
    ",".join(f'"{h}"' for h in HEADER),
    '"","","cycle","%","ns"',
    '"0","gemm_kernel","12,345 (' + "; ".join(ACTIVE) + ')","81 (' + "; ".join(TENSOR) + ')","2,000 (2,000)"',
    '"1","fill_kernel","0","0","2,000 (2,000)"',
]) + "\n"


def run(*args):
    return subprocess.run([sys.executable, TOOL, *args], capture_output=True, text=True)


def main():
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "t.csv")
        with open(path, "w") as f:
            f.write(TABLE)
        r = run("--slices", "2", path)
        out = r.stdout
        table = out.split("from us", 1)[-1]  # the rows after the column header
        lines = [line.split() for line in table.splitlines()]
        def row(first):
            return next((l for l in lines if l and l[0] == first), None)
        if r.returncode != 0:
            failures.append(f"exit {r.returncode}: {r.stderr}")
        if "18 samples of 2 us: 36.0 us with SMs active" not in out:
            failures.append("the active span (18 samples of 2 us) is not reported")
        # Slice 1: samples 2..10 (9 at 1,500 MHz, 90%); slice 2: 11..19 (1 at 1,500 and 8 at 1,000).
        if row("0") != ["0", "1500", "90.0"]:
            failures.append(f"first slice: {row('0')}")
        if row("18") != ["18", str(round((1500 + 8 * 1000) / 9)), f"{(90 + 8 * 50) / 9:.1f}"]:
            failures.append(f"second slice: {row('18')}")
        # Steady: the middle 80% of 18 samples, samples 3..17 (9 at 1,500, 6 at 1,000).
        if row("steady") != ["steady", str(round((9 * 1500 + 6 * 1000) / 15)), f"{(9 * 90 + 6 * 50) / 15:.1f}"]:
            failures.append(f"steady state: {row('steady')}")
        if "fill_kernel: no PM sampling series" not in out:
            failures.append("a kernel without a series is not reported as such")
        if "fma" in out.splitlines()[2]:
            failures.append("a column without its counter is printed")
        r = run("--kernel", "gemm", path)
        if r.returncode != 0 or "fill_kernel" in r.stdout or "gemm_kernel" not in r.stdout:
            failures.append("--kernel does not filter")
        r = run("--kernel", "nothing", path)
        if r.returncode == 0 or "no kernel matching 'nothing'" not in r.stderr:
            failures.append("an unmatched --kernel does not fail with its reason")
        r = run("--kernel", "gemm", "--launch", "2", path)
        if r.returncode == 0 or "(launch 2)" not in r.stderr:
            failures.append("--launch past the last matching kernel does not fail with its reason")
        picture = os.path.join(tmp, "t.png")
        r = run("--kernel", "gemm", "--launch", "1", "--out", picture, "--labels", "mine", path, path)
        if r.returncode != 0 or r.stdout.count("gemm_kernel") != 2:
            failures.append(f"two files, --launch 1: {r.returncode} {r.stderr}")
        elif "picture: " + picture in r.stdout:
            if not os.path.getsize(picture):
                failures.append("--out printed a picture that is empty")
        elif "matplotlib is not installed" not in r.stdout:
            failures.append("--out neither drew a picture nor said why not")
        bad = os.path.join(tmp, "bad.csv")
        with open(bad, "w") as f:
            f.write("kernel 1 ms\n")
        r = run(bad)
        if r.returncode == 0 or "no Nsight Compute table" not in r.stderr:
            failures.append("a file without a table does not fail with its reason")
    for f in failures:
        print("FAIL:", f)
    print("pm_timeline: %d checks failed" % len(failures) if failures else "pm_timeline: all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
