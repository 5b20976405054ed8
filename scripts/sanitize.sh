#!/usr/bin/env bash
# compute-sanitizer over every step of every folder (or of the folders named), at each size the
# folder declares with SANITIZE in its ladder_folder() line (small, awkward sizes chosen to reach
# every code path: tails, edge tiles, vector and scalar paths).
#
#   scripts/sanitize.sh [folder...] [--steps S1,S2] [--tool T]... [-j N]
#     --steps L  only these steps, by id (sgemm/11_shape_classes) or name (11_shape_classes)
#     --tool T   memcheck, racecheck, synccheck or initcheck; repeatable (default: all four)
#     -j N       runs at once (default 8; the runs are small and the GPU takes several)
#     --help     this text
#
# Prints one line per run and a summary table (step x tool); exits non-zero if any run reported an
# error or the step itself failed (a step that exits 77, no device, counts as skipped).
# Environment: BUILD_DIR (default build/).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}

usage() { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; }
folders=()
steps=""
tools=()
jobs=8
while [ $# -gt 0 ]; do
  case "$1" in
    --help|-h) usage; exit 0 ;;
    --tool) [ $# -ge 2 ] || { echo "error: --tool needs a value" >&2; exit 2; }
            case "$2" in memcheck|racecheck|synccheck|initcheck) tools+=("$2") ;;
              *) echo "error: unknown tool '$2'" >&2; exit 2 ;; esac
            shift 2 ;;
    -j) [ $# -ge 2 ] && [[ "$2" =~ ^[1-9][0-9]*$ ]] || { echo "error: -j needs a count" >&2; exit 2; }
        jobs=$2; shift 2 ;;
    --steps) [ $# -ge 2 ] || { echo "error: --steps needs a list" >&2; exit 2; }; steps=",$2,"; shift 2 ;;
    -*) echo "error: unknown option '$1'" >&2; usage >&2; exit 2 ;;
    *) folders+=("$1"); shift ;;
  esac
done
[ ${#tools[@]} -gt 0 ] || tools=(memcheck racecheck synccheck initcheck)

command -v compute-sanitizer >/dev/null ||
  { echo "error: compute-sanitizer is not on PATH (it ships with the CUDA Toolkit: <cuda>/bin)" >&2; exit 127; }
[ -f "$build/ladder_steps.txt" ] && [ -f "$build/ladder_folders.txt" ] ||
  { echo "error: no build in $build (run scripts/test.sh first)" >&2; exit 2; }

# One job per (step, tool, size): "id<TAB>exe<TAB>tool<TAB>size flags".
jobs_file=$(mktemp)
logs=$(mktemp -d)
trap 'rm -rf "$jobs_file" "$logs"' EXIT
while IFS='=' read -r id exe; do
  [ -n "$id" ] || continue
  folder=${id%%/*}
  if [ ${#folders[@]} -gt 0 ] && ! printf '%s\n' "${folders[@]}" | grep -qx "$folder"; then continue; fi
  if [ -n "$steps" ] && [[ $steps != *",$id,"* && $steps != *",${id#*/},"* ]]; then continue; fi
  # The step's own SANITIZE sizes where it declares them (add_step ... SANITIZE), else its folder's.
  key="^$folder\.sanitize\.${id#*/}="
  grep -q "$key" "$build/ladder_folders.txt" || key="^$folder\.sanitize="
  while IFS= read -r size; do
    for tool in "${tools[@]}"; do printf '%s\t%s\t%s\t%s\n' "$id" "$exe" "$tool" "$size"; done
  done < <(grep "$key" "$build/ladder_folders.txt" | cut -d= -f2-)
done < <(sort "$build/ladder_steps.txt") >"$jobs_file"
[ -s "$jobs_file" ] || { echo "error: no steps for: ${folders[*]:-all}" >&2; exit 2; }

run_one() {
  local id=$1 exe=$2 tool=$3 size=$4 logs=$5
  local log="$logs/$(echo "$id $tool $size" | tr -c 'A-Za-z0-9' '_').log"
  # shellcheck disable=SC2086
  LADDER_NO_CUPTI=1 compute-sanitizer --tool "$tool" --error-exitcode 99 "$exe" $size --no-ceiling --reps 1 --warmup 0 \
    >"$log" 2>&1
  local rc=$? verdict
  case $rc in
    0) verdict=clean ;;
    77) verdict=skipped ;;
    99) verdict=REPORTED ;;
    *) verdict="FAILED(exit $rc)" ;;
  esac
  printf '%-36s %-10s %-28s %s\n' "$id" "$tool" "$size" "$verdict"
  if [ $rc -ne 0 ] && [ $rc -ne 77 ]; then
    grep -E "^=========|error" "$log" | head -n 8 | sed 's/^/    /'
  fi
}
export -f run_one

results=$(tr '\n' '\0' <"$jobs_file" |
  xargs -0 -P "$jobs" -I{} bash -c 'IFS=$'"'"'\t'"'"' read -r a b c d <<<"$1"; run_one "$a" "$b" "$c" "$d" "$2"' _ {} "$logs")
echo "$results"

# Summary: one row per step, one column per tool; a cell is clean only if every size was clean.
echo
printf '%-36s' "step"; for t in "${tools[@]}"; do printf ' %-10s' "$t"; done; echo
failures=0
for id in $(cut -f1 "$jobs_file" | sort -u); do
  printf '%-36s' "$id"
  for t in "${tools[@]}"; do
    cell=$(echo "$results" | awk -v id="$id" -v t="$t" '$1 == id && $2 == t { print $NF }' | sort -u)
    if [ "$cell" = clean ]; then s=clean
    elif [ "$cell" = skipped ]; then s=skipped
    else s=REPORTED; failures=$((failures + 1)); fi
    printf ' %-10s' "$s"
  done
  echo
done
echo "$(wc -l <"$jobs_file") sanitizer runs; $failures step/tool cell(s) with reports or failures"
[ $failures -eq 0 ]
