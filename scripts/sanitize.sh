#!/usr/bin/env bash
# compute-sanitizer memcheck, racecheck, synccheck and initcheck over every step (or the folders
# named) at a small awkward size; non-zero on any report.
#   scripts/sanitize.sh [folder...]        TOOLS="memcheck racecheck" to run fewer tools
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
tools=${TOOLS:-memcheck racecheck synccheck initcheck}
command -v compute-sanitizer >/dev/null || { echo "error: compute-sanitizer is not on PATH" >&2; exit 127; }
[ -f "$build/ladder_steps.txt" ] || { echo "error: build first (scripts/test.sh)" >&2; exit 2; }

# Small sizes that are not multiples of 32 (and not of 4, for vectorized tails).
size_args() {
  case "$1" in
    vector_add) echo "--n 100003" ;;
    transpose) echo "--rows 67 --cols 131" ;;
    reduction) echo "--n 1000003" ;;
    sgemm) echo "--m 67 --n 45 --k 33" ;;
    avg_matvec) echo "--l 64 --m 37 --n 5" ;;
    separable_conv) echo "--width 133 --height 67 --taps 17" ;;
  esac
}

failures=0
while IFS='=' read -r id exe; do
  [ -n "$id" ] || continue
  folder=${id%%/*}
  if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "$folder"; then continue; fi
  for tool in $tools; do
    # shellcheck disable=SC2046
    if out=$(compute-sanitizer --tool "$tool" --error-exitcode 99 "$exe" $(size_args "$folder") \
               --no-ceiling --reps 1 --warmup 0 2>&1); then
      printf '%-40s %-10s clean\n' "$id" "$tool"
    else
      failures=$((failures + 1))
      printf '%-40s %-10s REPORTED\n' "$id" "$tool"
      echo "$out" | grep -E "=====|error" | head -n 8 | sed 's/^/    /'
    fi
  done
done < <(sort "$build/ladder_steps.txt")
echo "$failures sanitizer run(s) with reports"
[ $failures -eq 0 ]
