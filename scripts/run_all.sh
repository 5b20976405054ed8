#!/usr/bin/env bash
# Run every step of every folder (or of the folders named) with its defaults, one after another, and
# print one ladder table per folder.
#
#   scripts/run_all.sh                    every folder that is built
#   scripts/run_all.sh vector_add sgemm   just these
#   scripts/run_all.sh -- --reps 10       extra flags for every step after --
#   scripts/run_all.sh --help
#
# Each run writes a fresh record set: results/<device>/<UTC time>/ holds one JSON record per step
# that finished, skipped.tsv (step, reason) for the steps this GPU cannot run (exit 2, "unsupported:
# ... needs sm_80 ..." or more shared memory than it has), failures.tsv (step, exit code, last lines)
# for any other step that did not finish, report.md and, with matplotlib, one chart per ladder;
# results/<device>/latest points at it. Nothing of an earlier run is mixed in. A failed build or a
# failed step makes the script exit non-zero; a skipped one does not. On a machine without a CUDA
# device the script says so in one line and exits 0, writing nothing.
# Environment: BUILD_DIR (default build/), RESULTS_DIR (default results/), NO_BUILD=1 to skip the
# build (the binaries must exist).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
results_root=${RESULTS_DIR:-$root/results}

folders=()
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --) shift; extra=("$@"); break ;;
    --help|-h) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "error: unknown option '$1' (step flags go after --)" >&2; exit 2 ;;
    *) folders+=("$1"); shift ;;
  esac
done

if [ "${NO_BUILD:-0}" != 1 ]; then
  echo "== configure and build ($build)"
  log=$(mktemp)
  if ! { cmake -S "$root" -B "$build" && cmake --build "$build" -j "$(nproc)"; } >"$log" 2>&1; then
    grep -E "error|Error" "$log" | head -n 20
    tail -n 5 "$log"
    echo "error: the build failed (full log: $log); not running stale binaries" >&2
    exit 1
  fi
  grep -E "warning" "$log" | head -n 10
  rm -f "$log"
fi
[ -f "$build/ladder_steps.txt" ] || { echo "error: no $build/ladder_steps.txt: build first" >&2; exit 1; }

# The registered steps in ladder order, filtered to the folders asked for.
mapfile -t entries < <(sort "$build/ladder_steps.txt" | grep -v '^$')
selected=()
for e in "${entries[@]}"; do
  id=${e%%=*}
  folder=${id%%/*}
  if [ ${#folders[@]} -eq 0 ] || printf '%s\n' "${folders[@]}" | grep -qx "$folder"; then
    selected+=("$e")
  fi
done
[ ${#selected[@]} -gt 0 ] || { echo "error: no steps for: ${folders[*]}" >&2; exit 2; }

# No CUDA device: a device index past any is exit 77 there (exit 2 where devices exist), before
# anything else is looked at (docs/contract.md, "Exit codes").
for e in "${selected[@]}"; do
  case "${e%%=*}" in */00_cpu) continue ;; esac
  "${e#*=}" --device 1048576 >/dev/null 2>&1
  if [ $? -eq 77 ]; then
    echo "skipped, no GPU: no CUDA device on this machine; the ladders need one (nothing written)"
    exit 0
  fi
  break
done

run_dir=$(mktemp -d)
failures=0
skips=0
i=0
start=$(date +%s)
for e in "${selected[@]}"; do
  i=$((i + 1))
  id=${e%%=*}
  exe=${e#*=}
  name=$(echo "$id" | tr '/' '_')
  printf '[%2d/%d] %-40s ' "$i" "${#selected[@]}" "$id"
  t0=$(date +%s.%N)
  "$exe" --json "${extra[@]}" >"$run_dir/$name.log" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  json=$(grep '^{' "$run_dir/$name.log" | tail -n 1)
  secs=$(awk "BEGIN { printf \"%.1f\", $t1 - $t0 }")
  unsupported=$(grep -m1 '^unsupported: ' "$run_dir/$name.log" | sed 's/^unsupported: //')
  if [ $rc -eq 2 ] && [ -n "$unsupported" ]; then
    skips=$((skips + 1))
    printf 'skipped: %s\n' "$unsupported"
    printf '%s\t%s\n' "$id" "$unsupported" >>"$run_dir/skipped.tsv"
    continue
  fi
  if [ $rc -ne 0 ] || [ -z "$json" ]; then
    failures=$((failures + 1))
    printf 'FAILED (exit %d, %s s)\n' "$rc" "$secs"
    tail -n 5 "$run_dir/$name.log" | sed 's/^/        /'
    printf '%s\t%d\t%s\n' "$id" "$rc" "$(tail -n 3 "$run_dir/$name.log" | tr '\t\n' '  ')" >>"$run_dir/failures.tsv"
    continue
  fi
  echo "$json" >"$run_dir/$name.json"
  printf '%s  (%s s)\n' "$(python3 "$root/scripts/report.py" --one-line "$run_dir/$name.json")" "$secs"
done
: >>"$run_dir/failures.tsv"
: >>"$run_dir/skipped.tsv"

# Where the records go: results/<device>/<UTC time>/, the device read from the first record.
first_json=$(ls "$run_dir"/*.json 2>/dev/null | head -n 1)
device=unknown
[ -n "$first_json" ] && device=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["device"])' "$first_json")
device_dir="$results_root/$(echo "$device" | tr -c 'A-Za-z0-9._-' '_' | sed 's/_*$//')"
out="$device_dir/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$out"
cp "$run_dir"/*.json "$run_dir/failures.tsv" "$run_dir/skipped.tsv" "$out"/ 2>/dev/null
mkdir -p "$out/logs" && cp "$run_dir"/*.log "$out/logs"/
rm -rf "$run_dir"
ln -sfn "$(basename "$out")" "$device_dir/latest"
python3 "$root/scripts/report.py" "$out" || failures=$((failures + 1))
echo "results: $out (report.md); $(( $(date +%s) - start )) s; $failures failed, $skips skipped (not for this GPU)"
[ $failures -eq 0 ]
