#!/usr/bin/env bash
# The whole test suite as it would run on another GPU: ctest (every test but the "large" ones) with
# LADDER_DEVICE_PROFILE=<profile>, so every step takes its decisions as on that GPU (its architecture,
# shared memory, SMs; docs/contract.md "Device profiles") while the kernels run on this one. Prints one
# summary per profile: "t4: N tests: P passed, S skipped, 0 failed", then the skips by reason with the
# steps ("needs sm_80 (sgemm/09_pipelined, ...)"), then any failure.
#
#   scripts/as_gpu.sh t4                 one profile
#   scripts/as_gpu.sh t4 a100 rtx3060    several, one after another
#   scripts/as_gpu.sh all                every shipped profile
#   scripts/as_gpu.sh t4 -- -R sgemm     ctest arguments after --
#   scripts/as_gpu.sh --help
#
# The build must exist (scripts/test.sh or cmake --build). Environment: BUILD_DIR (default build/),
# CTEST_JOBS (default nproc), AS_GPU_TIMEOUT (seconds per profile; a stopped run is summarized from
# what finished and counts as a failure). Exit status non-zero if any test failed under any profile.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
all="v100 t4 a100 rtx3060 l4 rtx4090 rtx5090"

profiles=()
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --help|-h) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --) shift; extra=("$@"); break ;;
    all) read -ra more <<<"$all"; profiles+=("${more[@]}"); shift ;;
    -*) echo "error: unknown option '$1' (ctest arguments go after --)" >&2; exit 2 ;;
    *) profiles+=("$1"); shift ;;
  esac
done
[ ${#profiles[@]} -gt 0 ] || { echo "error: name a profile (one of: $all) or 'all'" >&2; exit 2; }
for p in "${profiles[@]}"; do
  [[ " $all " == *" $p "* ]] || { echo "error: '$p' is no device profile (known: $all)" >&2; exit 2; }
done
[ -f "$build/CTestTestfile.cmake" ] || { echo "error: no build in $build: run scripts/test.sh first" >&2; exit 2; }

failed=0
for p in "${profiles[@]}"; do
  xml="$build/Testing/as_$p.xml"
  mkdir -p "$build/Testing"
  rm -f "$xml"
  (cd "$build" && LADDER_DEVICE_PROFILE=$p ${AS_GPU_TIMEOUT:+timeout $AS_GPU_TIMEOUT} ctest -LE large \
      -j "${CTEST_JOBS:-$(nproc)}" --output-junit "$xml" "${extra[@]}") >"$build/Testing/as_$p.log" 2>&1
  if [ -s "$xml" ]; then
    python3 "$root/scripts/ctest_summary.py" "$xml" --label "$p" || failed=1
  else  # stopped (AS_GPU_TIMEOUT): what finished, from ctest's running log (LastTest.log.tmp until
        # ctest ends and renames it)
    cp "$(ls -t "$build"/Testing/Temporary/LastTest*.log* | head -n 1)" "$build/Testing/as_$p.partial.log" 2>/dev/null
    python3 "$root/scripts/ctest_summary.py" "$build/Testing/as_$p.partial.log" --label "$p (stopped before the end)" || failed=1
    failed=1
  fi
done
exit $failed
