#!/usr/bin/env bash
# Is each tunable step's default the fastest of its candidates on this GPU? Every candidate of every
# tunable step (--tile or --variant) runs at the step's default size, kernel time only (no ceiling,
# no check: the GPU tests verify every candidate), beside the default the step's rule picks here.
# Where another candidate is clearly faster than the default (past the run-to-run spread, a few
# percent), the rule is wrong for this GPU.
#
#   scripts/check_defaults.sh [FOLDER...] [--reps N]   (default: every folder, 10 reps)
#   scripts/check_defaults.sh --help
#
# Prints, per step, the default's choice and time, then each candidate's time and its ratio to the
# default's. Environment: BUILD_DIR (default build/); the steps must be built.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
reps=10
folders=()
while [ $# -gt 0 ]; do
  case "$1" in
    --help|-h) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --reps) [ $# -ge 2 ] && [[ "$2" =~ ^[1-9][0-9]*$ ]] || { echo "error: --reps needs a count" >&2; exit 2; }
            reps=$2; shift 2 ;;
    -*) echo "error: unknown option '$1'" >&2; exit 2 ;;
    *) folders+=("$1"); shift ;;
  esac
done
[ -f "$build/ladder_folders.txt" ] || { echo "error: no build in $build" >&2; exit 2; }

kernel_ms() { python3 -c 'import json,sys; print(json.loads(sys.stdin.read())["kernel_ms"]["median"])' 2>/dev/null; }

grep '\.tunable=' "$build/ladder_folders.txt" | while IFS='=' read -r key name; do
  folder=${key%%.*}
  if [ ${#folders[@]} -gt 0 ] && [[ " ${folders[*]} " != *" $folder "* ]]; then continue; fi
  bin=$build/bin/${folder}_${name}
  flag=--tile
  "$bin" --help | grep -q -- '--variant' && flag=--variant
  # The candidates: the help's "(one of: ...)" list, or (sgemm's free-text --tile) the names its
  # launcher lists when given one it does not know.
  names=$("$bin" --help | grep -A3 -- "$flag" | tr '\n' ' ' | sed -n 's/.*(one of: *\([^;)]*\).*/\1/p')
  [ -z "$names" ] && names=$("$bin" $flag no_such_tile --m 64 --n 64 --k 64 --no-ceiling --reps 1 2>&1 |
                             sed -n 's/.*(known: \([^)]*\)).*/\1/p' | tr ',' ' ')
  record=$("$bin" --no-ceiling --no-verify --reps "$reps" --json 2>/dev/null | grep '^{')
  default_ms=$(kernel_ms <<<"$record")
  choice=$(python3 -c 'import json,sys; print(json.loads(sys.stdin.read()).get("choice") or "")' <<<"$record" 2>/dev/null)
  echo "== $folder/$name: default ${default_ms:-?} ms, $choice"
  for c in $names; do
    [ "$c" = auto ] && continue
    ms=$("$bin" $flag "$c" --no-ceiling --no-verify --reps "$reps" --json 2>/dev/null | grep '^{' | kernel_ms)
    if [ -n "$ms" ] && [ -n "$default_ms" ]; then
      printf '   %-32s %10s ms  %5.2fx the speed of the default\n' "$c" "$ms" "$(python3 -c "print($default_ms / $ms)")"
    else
      printf '   %-32s %10s\n' "$c" "did not run here (exit 2: see the step)"
    fi
  done
done
