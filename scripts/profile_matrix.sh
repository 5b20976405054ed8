#!/usr/bin/env bash
# What every step does on every GPU a learner may have: each step of the named folders (all by
# default) runs once at its default size under each device profile (LADDER_DEVICE_PROFILE,
# docs/contract.md "Device profiles") and under none, and the script prints one Markdown table per
# folder: per step, per GPU, "runs" (verified, with what a tunable step chose) or "exit 2" and why.
#
#   scripts/profile_matrix.sh [FOLDER...] [--profiles "t4 a100"] [--out DIR] [-j N] [-- step flags]
#     --profiles LIST  default: every profile the harness knows (v100 t4 a100 rtx3060 l4 rtx4090 rtx5090)
#     --out DIR        keep the records in DIR/<profile>/ (default: a temporary directory, printed);
#                      scripts/report.py --chapters reads such a directory as LABEL=DIR for the
#                      ladder-gpus blocks of the chapters and README.md
#     -j N             steps run N at a time (default 4): nothing is timed here, one repetition each
#     --reference DIR  take the real GPU's column from a scripts/run_all.sh record set instead of
#                      running every step once more without a profile
#     --help           this text
#   Step flags after -- apply to every run (e.g. -- --m 1024 --n 1024 --k 1024).
#
# Each run is `LADDER_DEVICE_PROFILE=P step --json --no-ceiling --reps 1 --warmup 0 [flags]`. A run
# that exits 2 keeps its error line in <step>.err; any other failure (exit 1 or 3, a crash) is a bug
# this script reports, and makes it exit non-zero. CPU steps (00_cpu) are not run: no GPU decides
# anything for them. Environment: BUILD_DIR (default build/); the steps must be built.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}

usage() { sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; }
profiles="v100 t4 a100 rtx3060 l4 rtx4090 rtx5090"
out=""
reference=""
jobs=4
folders=()
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --help|-h) usage; exit 0 ;;
    --profiles) [ $# -ge 2 ] || { echo "error: --profiles needs a list" >&2; exit 2; }; profiles=$2; shift 2 ;;
    --out) [ $# -ge 2 ] || { echo "error: --out needs a directory" >&2; exit 2; }; out=$2; shift 2 ;;
    --reference) [ $# -ge 2 ] && [ -d "$2" ] || { echo "error: --reference needs a record directory" >&2; exit 2; }
                 reference=$2; shift 2 ;;
    -j) [ $# -ge 2 ] && [[ "$2" =~ ^[1-9][0-9]*$ ]] || { echo "error: -j needs a count" >&2; exit 2; }
        jobs=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    -*) echo "error: unknown option '$1'" >&2; usage >&2; exit 2 ;;
    *) folders+=("$1"); shift ;;
  esac
done
steps_file=$build/ladder_steps.txt
[ -f "$steps_file" ] || { echo "error: $steps_file not found: build first (scripts/test.sh or cmake --build)" >&2; exit 2; }
if [ -z "$out" ]; then out=$(mktemp -d); echo "records: $out"; fi

# "id path" lines of the steps to run.
list=$(while IFS='=' read -r id path; do
  folder=${id%%/*}
  [[ $id == */00_cpu ]] && continue
  if [ ${#folders[@]} -gt 0 ] && [[ " ${folders[*]} " != *" $folder "* ]]; then continue; fi
  echo "$id $path"
done <"$steps_file")
[ -n "$list" ] || { echo "error: no steps match" >&2; exit 2; }

# The largest static shared memory of the step's own kernels (those in its folder's namespace: the
# harness's ceiling and check kernels are not the step's; dynamic shared memory is in the record's
# extra.smem_per_block_bytes, for the kernels that ask for it); nothing without cuobjdump. From
# sm_90 on, cuobjdump counts in every kernel that uses shared memory the 1 KB the GPU reserves per
# block (cudaDevAttrReservedSharedMemoryPerBlock): not the step's either, so it is taken off.
static_smem() {  # PATH FOLDER
  command -v cuobjdump >/dev/null || return 0
  cuobjdump -res-usage "$1" 2>/dev/null | awk -v ns="${#2}$2" '
    /arch = sm_/ { split($0, a, "sm_"); arch = a[2] + 0 }
    /Function / { fn = $2; next }
    /SHARED:/ && index(fn, ns) {
      match($0, /SHARED:[0-9]+/); v = substr($0, RSTART + 7, RLENGTH - 7) + 0
      if (arch >= 90 && v >= 1024) v -= 1024
      if (v > best) best = v
    }
    END { print best + 0 }'
}

run_one() {  # PROFILE ID PATH
  local profile=$1 id=$2 path=$3
  local dir=$out/$profile name=${id/\//_}
  mkdir -p "$dir"
  if [ "$profile" = none ]; then
    static_smem "$path" "${id%%/*}" >"$dir/$name.static_smem"
    if [ -n "$reference" ]; then  # the real GPU's column from a run_all.sh record set
      [ -f "$reference/$name.json" ] && cp "$reference/$name.json" "$dir/$name.json"
      return
    fi
  fi
  local env=()
  [ "$profile" != none ] && env=(LADDER_DEVICE_PROFILE="$profile")
  env "${env[@]}" "$path" --json --no-ceiling --reps 1 --warmup 0 "${extra[@]}" >"$dir/$name.log" 2>&1
  local rc=$?
  if [ $rc -eq 0 ]; then
    grep '^{' "$dir/$name.log" | tail -1 >"$dir/$name.json"
  elif [ $rc -eq 2 ]; then  # the step's one line: "error: ..." or "unsupported: FOLDER/STEP needs ..."
    grep -m1 -E '^(error|unsupported): ' "$dir/$name.log" | sed -E 's/^error: //; s/^unsupported: [^ ]+ //' >"$dir/$name.err"
  elif [ $rc -eq 77 ]; then
    touch "$dir/$name.skipped"
  else
    echo "$id under $profile: exit $rc" >"$dir/$name.bug"
  fi
}
export -f run_one static_smem
export out reference
export extra_flags="${extra[*]}"

for profile in none $profiles; do
  echo "== $profile"
  while read -r id path; do echo "$profile $id $path"; done <<<"$list" |
    xargs -P "$jobs" -n 3 bash -c 'extra=($extra_flags); run_one "$0" "$1" "$2"'
done

if ls "$out"/*/*.skipped >/dev/null 2>&1; then
  echo "no CUDA device here: the steps exited 77 (skipped); nothing to show" >&2
  exit 77
fi
status=0
if ls "$out"/*/*.bug >/dev/null 2>&1; then
  status=1
  echo "FAILURES (not verified, not a clean exit 2):"
  cat "$out"/*/*.bug
fi
python3 "$root/scripts/report.py" --gpu-matrix "$out" || status=1
exit $status
