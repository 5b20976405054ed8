#!/usr/bin/env bash
# Run every step of every folder (or the folders named) with its defaults, one after another, and
# print one ladder table per folder. Writes results/<device>/<folder>_<step>.json, report.md and,
# with matplotlib, one chart per folder.
#   scripts/run_all.sh                    every folder that exists
#   scripts/run_all.sh vector_add sgemm   just these
#   scripts/run_all.sh -- --reps 10       extra flags for every step after --
# Environment: BUILD_DIR (default build/), RESULTS_DIR (default results/).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
results_root=${RESULTS_DIR:-$root/results}

folders=()
extra=()
while [ $# -gt 0 ]; do
  if [ "$1" = "--" ]; then shift; extra=("$@"); break; fi
  folders+=("$1"); shift
done

if [ ! -f "$build/ladder_steps.txt" ] || [ "${REBUILD:-1}" = 1 ]; then
  echo "== configure and build ($build)"
  cmake -S "$root" -B "$build" >/dev/null || exit 1
  cmake --build "$build" -j "$(nproc)" 2>&1 | grep -E "error|warning" ; true
fi
[ -f "$build/ladder_steps.txt" ] || { echo "no $build/ladder_steps.txt: build failed" >&2; exit 1; }

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
[ ${#selected[@]} -gt 0 ] || { echo "no steps for: ${folders[*]}" >&2; exit 2; }

tmp=$(mktemp -d)
failures=0
i=0
start=$(date +%s)
for e in "${selected[@]}"; do
  i=$((i + 1))
  id=${e%%=*}
  exe=${e#*=}
  printf '[%2d/%d] %-40s ' "$i" "${#selected[@]}" "$id"
  log="$tmp/$(echo "$id" | tr '/' '_').log"
  t0=$(date +%s.%N)
  "$exe" --json "${extra[@]}" >"$log" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  json=$(grep '^{' "$log" | tail -n 1)
  if [ $rc -ne 0 ] || [ -z "$json" ]; then
    failures=$((failures + 1))
    printf 'FAILED (exit %d)\n' "$rc"
    tail -n 5 "$log" | sed 's/^/        /'
    continue
  fi
  echo "$json" >"$tmp/$(echo "$id" | tr '/' '_').json"
  printf '%s  (%s s)\n' "$(python3 "$root/scripts/report.py" --one-line "$tmp/$(echo "$id" | tr '/' '_').json")" \
    "$(awk "BEGIN { printf \"%.1f\", $t1 - $t0 }")"
done

first_json=$(ls "$tmp"/*.json 2>/dev/null | head -n 1)
device=unknown
if [ -n "$first_json" ]; then
  device=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["device"])' "$first_json")
fi
out="$results_root/$(echo "$device" | tr -c 'A-Za-z0-9._-' '_' | sed 's/_*$//')"
mkdir -p "$out"
cp "$tmp"/*.json "$out"/ 2>/dev/null
python3 "$root/scripts/report.py" "$out"
echo "results: $out (report.md); $(( $(date +%s) - start )) s; $failures failed"
rm -rf "$tmp"
[ $failures -eq 0 ]
