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
# 3. The same for a kernel that does almost nothing (transpose/01_naive_16x16 at 16 x 16: one
#    block): the difference of its two times is what ncu's duration adds to every kernel (about
#    1.1 us on an H100), and the step's ncu time less that offset per kernel is compared too.
# Prints one line: the times, the kernels per repetition, and both ratios. Environment: BUILD_DIR
# (default build/); REPEAT=N runs the comparison N times and ends with the median ratio less the
# offset and its range (the variation between processes is a few percent at 20-30 us kernels).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
case "${1:-}" in --help|-h|"") sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
step=$1; shift
[ "${1:-}" = "--" ] && shift
exe_of() { echo "$build/bin/${1/\//_}"; }
exe=$(exe_of "$step"); probe=$(exe_of transpose/01_naive_16x16)
for e in "$exe" "$probe"; do [ -x "$e" ] || { echo "error: no executable $e (build first)" >&2; exit 2; }; done
command -v ncu >/dev/null 2>&1 || { echo "error: ncu is not on PATH (Nsight Compute ships with the CUDA Toolkit)" >&2; exit 127; }
# kernel_ms's JSON record, then ncu's CSV of the same launches, of one executable and its flags
kernel_json() { "$1" --json --no-ceiling --no-verify --reps 20 "${@:2}" | tail -n 1; }
ncu_csv() {
  local rep; rep=$(mktemp -d)/run
  ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum -f -o "$rep" \
      "$1" --no-ceiling --no-verify --warmup 2 --reps 8 "${@:2}" >/dev/null 2>&1 || { echo "error: ncu failed on $1" >&2; return 1; }
  ncu --import "$rep.ncu-rep" --csv --page raw --metrics gpu__time_duration.sum
  rm -rf "$(dirname "$rep")"
}
compare_once() {
json=$(kernel_json "$exe" "$@"); csv=$(ncu_csv "$exe" "$@")
probe_json=$(kernel_json "$probe" --rows 16 --cols 16); probe_csv=$(ncu_csv "$probe" --rows 16 --cols 16)
python3 - "$json" "$csv" "$probe_json" "$probe_csv" "$step $*" <<'PY'
import csv, io, json, statistics, sys

RUNS = 1 + 2 + 8  # the checked run, the warm-up and the timed repetitions, all identical


def per_repetition(table):
    """(ms per repetition, kernels per repetition) from ncu's CSV: per kernel name, its median
    duration times its launches per repetition."""
    rows = list(csv.reader(io.StringIO(table)))
    head = rows[0]
    col, name_col = head.index("gpu__time_duration.sum"), head.index("Kernel Name")
    scale = {"nsecond": 1e-6, "ns": 1e-6, "usecond": 1e-3, "us": 1e-3, "msecond": 1.0, "ms": 1.0,
             "second": 1e3, "s": 1e3}[rows[1][col]]
    by_name = {}
    for r in rows[2:]:
        if len(r) > col and r[col]:
            by_name.setdefault(r[name_col], []).append(float(r[col].replace(",", "")) * scale)
    ms = kernels = 0
    for d in by_name.values():
        launches = max(1, round(len(d) / RUNS))
        ms += statistics.median(d) * launches
        kernels += launches
    return ms, kernels


record, table, probe_record, probe_table, what = sys.argv[1:6]
k = json.loads(record)["kernel_ms"]["median"]
source = json.loads(record)["kernel_ms_source"]
ncu_ms, kernels = per_repetition(table)
probe_ncu, _ = per_repetition(probe_table)
offset = probe_ncu - json.loads(probe_record)["kernel_ms"]["median"]  # ms ncu adds to one kernel
less = ncu_ms - kernels * offset
print(f"{what}: kernel_ms {k:.4f} ms ({source}), ncu {ncu_ms:.4f} ms per repetition ({kernels} kernel(s)), "
      f"ratio {k / ncu_ms:.3f}; less ncu's {offset * 1e3:.2f} us per kernel: {less:.4f} ms, ratio {k / less:.3f}")
PY
}

# REPEAT=N: the whole comparison N times (each a new process of the step, of ncu and of the probe),
# then the median of the N ratios less the offset, with their range.
lines=()
for ((i = 0; i < ${REPEAT:-1}; ++i)); do
  line=$(compare_once "$@") || exit 1
  echo "$line"
  lines+=("$line")
done
if [ "${REPEAT:-1}" -gt 1 ]; then
  printf '%s\n' "${lines[@]}" | python3 -c '
import re, statistics, sys
r = [float(re.findall(r"ratio ([0-9.]+)", l)[-1]) for l in sys.stdin if l.strip()]
print(f"median of {len(r)} runs: ratio less the offset {statistics.median(r):.3f} (range {min(r):.3f}-{max(r):.3f})")'
fi
