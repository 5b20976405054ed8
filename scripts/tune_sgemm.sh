#!/usr/bin/env bash
# Sweep the tile candidates of a tunable sgemm step over the shapes that matter, on this GPU, and
# say which one it would pick per shape (the fastest that verified, by kernel time) and what the
# step's own default picks there (its "choice": the rule computed from the device, with its reason).
# Use it to check a step's rule on a new GPU (default_choice in sgemm/09_pipelined.cu,
# default_split_tiling in sgemm/10_split_k.cu, kDefaultTile in sgemm/06_2d_retuned.cu): where the
# fastest candidate differs from the choice by more than noise, the rule needs a new class or bound.
#
#   scripts/tune_sgemm.sh [--step 09_pipelined] [--shapes "MxNxK ..."] [--reps N] [-- step flags]
#   scripts/tune_sgemm.sh --step 06_2d_retuned --shapes 4096x4096x4096
#   scripts/tune_sgemm.sh --help
#
# Default shapes: 4096x4096x4096, 4000x3000x2000 and 4095x4097x1023 (the chapter's bars) and
# 1024x1024x8192 (few output tiles, long k: step 10 splits k there). Each run is the step's own
# process: verified against cuBLAS and the fp64 CPU rows/columns, timed against cuBLAS (pedantic
# fp32) measured in the same process. Records (one JSON line per run) go to
# results/tune/<step>-<UTC time>.jsonl. Environment: BUILD_DIR (default build/), RESULTS_DIR
# (default results/).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
results=${RESULTS_DIR:-$root/results}/tune
step=09_pipelined
shapes="4096x4096x4096 4000x3000x2000 4095x4097x1023 1024x1024x8192"
reps=10
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --help|-h) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --step) [ $# -ge 2 ] || { echo "error: --step needs a value" >&2; exit 2; }; step=$2; shift 2 ;;
    --shapes) [ $# -ge 2 ] || { echo "error: --shapes needs a value" >&2; exit 2; }; shapes=$2; shift 2 ;;
    --reps) [ $# -ge 2 ] || { echo "error: --reps needs a value" >&2; exit 2; }; reps=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "error: unknown option '$1'" >&2; exit 2 ;;
  esac
done
step=${step#sgemm/}
step=${step#sgemm_}
exe="$build/bin/sgemm_$step"
[ -x "$exe" ] || { echo "error: no $exe (build first: cmake -S . -B build && cmake --build build)" >&2; exit 2; }
for shape in $shapes; do
  [[ $shape =~ ^[0-9]+x[0-9]+x[0-9]+$ ]] || { echo "error: shape '$shape' is not MxNxK" >&2; exit 2; }
done

# The candidates: a tunable step lists them when asked for one it does not know.
names=$("$exe" --m 64 --n 64 --k 64 --tile '?' --no-verify --no-ceiling --reps 1 --warmup 0 2>&1 |
        sed -n 's/.*(known: \(.*\))$/\1/p' | head -n 1 | tr -d ',')
[ -n "$names" ] || { echo "error: $exe lists no --tile candidates (is it a tunable step? a GPU here?)" >&2; exit 2; }

mkdir -p "$results"
out="$results/${step}-$(date -u +%Y%m%dT%H%M%SZ).jsonl"
: > "$out"
# One run: its JSON record and its "choice" (what the default picked, and why), into $out.
run_one() {  # shape m n k tile-or-empty
  local shape=$1 m=$2 n=$3 k=$4 tile=$5 label=${5:-default} log rc line note
  printf '%-16s %-34s ' "$shape" "$label"
  log=$("$exe" --m "$m" --n "$n" --k "$k" ${tile:+--tile "$tile"} --reps "$reps" --json "${extra[@]}" 2>/dev/null)
  rc=$?
  line=$(printf '%s\n' "$log" | tail -n 1)
  note=""
  if [ "${line:0:1}" = "{" ]; then
    note=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1]).get("choice") or "")' "$line" 2>/dev/null |
           sed 's/\\/\\\\/g; s/"/\\"/g')
  fi
  if [ "$rc" -eq 0 ] && [ "${line:0:1}" = "{" ]; then
    echo "{\"tile\":\"$label\",\"shape\":\"$shape\",\"picked\":\"$note\",\"record\":$line}" >> "$out"
    python3 -c 'import json, sys; r = json.loads(sys.argv[1]); print("%9.3f ms  %6.1f%% of cuBLAS" % (r["kernel_ms"]["median"], r.get("pct_of_ceiling") or 0))' "$line"
  else
    echo "exit $rc"
    echo "{\"tile\":\"$label\",\"shape\":\"$shape\",\"exit\":$rc}" >> "$out"
  fi
}
for shape in $shapes; do
  IFS=x read -r m n k <<<"$shape"
  run_one "$shape" "$m" "$n" "$k" ""
  for name in $names; do run_one "$shape" "$m" "$n" "$k" "$name"; done
done

python3 - "$out" "$step" <<'EOF'
import json, sys
from collections import defaultdict
path, step = sys.argv[1], sys.argv[2]
runs = [json.loads(l) for l in open(path) if l.strip()]
by_shape = defaultdict(list)
for r in runs:
    by_shape[r["shape"]].append(r)
device = next((r["record"].get("device") for r in runs if "record" in r), "?")
if isinstance(device, dict):
    device = device.get("name", "?")
def pct(r):
    return r["record"].get("pct_of_ceiling") or 0
print(f"\n{step} on {device}: the fastest verified candidate per shape, and the step's default (records: {path})")
print(f"{'shape':16s} {'pick':30s} {'ms':>8s} {'%cuBLAS':>8s}   {'default picks':44s} {'%cuBLAS':>8s}  runner-up")
for shape, rs in by_shape.items():
    ok = [r for r in rs if "record" in r and r["record"].get("verified") and r["tile"] != "default"]
    ok.sort(key=lambda r: r["record"]["kernel_ms"]["median"])
    dflt = next((r for r in rs if r["tile"] == "default" and "record" in r and r["record"].get("verified")), None)
    dtxt = (dflt["picked"] or "?")[:44] if dflt else "(failed)"
    dpct = f"{pct(dflt):7.1f}%" if dflt else "       -"
    if not ok:
        print(f"{shape:16s} {'(no candidate verified)':30s} {'':8s} {'':8s}   {dtxt:44s} {dpct}")
        continue
    best = ok[0]
    second = f"{ok[1]['tile']} ({pct(ok[1]):.1f}%)" if len(ok) > 1 else "-"
    print(f"{shape:16s} {best['tile']:30s} {best['record']['kernel_ms']['median']:8.3f} {pct(best):7.1f}%   "
          f"{dtxt:44s} {dpct}  {second}")
failed = sorted({r["tile"] for r in runs if "record" not in r or not r["record"].get("verified")})
if failed:
    print("did not verify or failed:", ", ".join(failed))
EOF
