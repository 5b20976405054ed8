#!/usr/bin/env bash
# A step's kernel_ms (the GPU's own activity records, CUPTI; docs/measuring.md) beside Nsight
# Compute's gpu__time_duration of the same kernels: the independent check of the timing.
#
#   scripts/kernel_time_vs_ncu.sh STEP [-- step flags]      e.g. sgemm/11_shape_classes -- --m 1 --n 4096 --k 4096
#   scripts/kernel_time_vs_ncu.sh --help
#
# 1. The step runs as usual (--json --no-ceiling --no-verify --reps 20): kernel_ms's median.
# 2. ncu runs it with --no-ceiling --no-verify --warmup 2 --reps 8 (a checked run, 2 warm-up and
#    8 timed repetitions: 11 identical ones), --clock-control none and --cache-control none (the
#    clocks and the caches as the step left them), and reads gpu__time_duration of every kernel it
#    launched. Per kernel name: its median duration × its launches per repetition; the sum over the
#    names is one repetition. The median drops the first, cold launch (module load, cold TLB and
#    L2), as the step's own median does. ncu runs kernels one at a time, so for a step on one stream
#    this sum is what the union of their intervals measures.
# Prints one line: the two times and their ratio. Environment: BUILD_DIR (default build/).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
case "${1:-}" in --help|-h|"") sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
step=$1; shift
[ "${1:-}" = "--" ] && shift
exe="$build/bin/${step/\//_}"
[ -x "$exe" ] || { echo "error: no executable $exe (build first)" >&2; exit 2; }
command -v ncu >/dev/null 2>&1 || { echo "error: ncu is not on PATH (Nsight Compute ships with the CUDA Toolkit)" >&2; exit 127; }
json=$("$exe" --json --no-ceiling --no-verify --reps 20 "$@" | tail -n 1)
rep=$(mktemp -d)/run
ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum -f -o "$rep" \
    "$exe" --no-ceiling --no-verify --warmup 2 --reps 8 "$@" >/dev/null 2>&1 || { echo "error: ncu failed" >&2; exit 1; }
csv=$(ncu --import "$rep.ncu-rep" --csv --page raw --metrics gpu__time_duration.sum)
rm -rf "$(dirname "$rep")"
python3 - "$json" "$csv" "$step $*" <<'PY'
import csv, io, json, statistics, sys
record, table, what = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3]
rows = list(csv.reader(io.StringIO(table)))
head = rows[0]
col, name_col = head.index("gpu__time_duration.sum"), head.index("Kernel Name")
scale = {"nsecond": 1e-6, "ns": 1e-6, "usecond": 1e-3, "us": 1e-3, "msecond": 1.0, "ms": 1.0,
         "second": 1e3, "s": 1e3}[rows[1][col]]
runs = 1 + 2 + 8  # the checked run, the warm-up and the timed repetitions, all identical
by_name = {}
for r in rows[2:]:
    if len(r) > col and r[col]:
        by_name.setdefault(r[name_col], []).append(float(r[col].replace(",", "")) * scale)
ncu_ms = sum(statistics.median(d) * max(1, round(len(d) / runs)) for d in by_name.values())
k = record["kernel_ms"]["median"]
print(f"{what}: kernel_ms {k:.4f} ms ({record['kernel_ms_source']}), ncu {ncu_ms:.4f} ms per repetition, "
      f"ratio {k / ncu_ms:.3f}")
PY
