#!/usr/bin/env bash
# Configure, build every step and test, run ctest, and end with one short summary: tests passed,
# skipped by reason (no GPU; needs sm_80 / sm_90a, with the steps; too little shared memory or
# memory), failed (with the last lines of each). Non-zero on any failure or failed build.
#   scripts/test.sh                 all tests (GPU tests skip where there is no CUDA device)
#   scripts/test.sh -L cpu          ctest arguments pass through
#   scripts/test.sh -L step         each step once at its small size, checked (the quick look)
#   scripts/test.sh --help          this text
# ctest's own per-test lines go to build/Testing/ctest.log, its JUnit record to
# build/Testing/ctest.xml (scripts/ctest_summary.py reads it).
# Environment: BUILD_DIR (default build/), JOBS (build parallelism, default nproc),
#              CTEST_JOBS (default 4; OMP_NUM_THREADS defaults to nproc / CTEST_JOBS), CMAKE_ARGS
#              (extra configure flags), LADDER_DEVICE_PROFILE (run every step as on another GPU:
#              scripts/as_gpu.sh does this per profile).
set -euo pipefail
case "${1:-}" in --help|-h) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
jobs=${JOBS:-$(nproc)}
# shellcheck disable=SC2086
cmake -S "$root" -B "$build" ${CMAKE_ARGS:-}
cmake --build "$build" -j "$jobs"
mkdir -p "$build/Testing"
log="$build/Testing/ctest.log"
xml="$build/Testing/ctest.xml"
# Each test's CPU reference gets a fair share of the cores (nproc / CTEST_JOBS OpenMP threads, at
# least 1) rather than an OpenMP team of nproc threads per test process (scripts/as_gpu.sh says why).
ctest_jobs=${CTEST_JOBS:-4}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(( $(nproc) / ctest_jobs > 0 ? $(nproc) / ctest_jobs : 1 ))}
echo "== ctest -j $ctest_jobs $* (log: $log)"
set +e
(cd "$build" && ctest -j "$ctest_jobs" --output-junit "$xml" "$@") >"$log" 2>&1
rc=$?
set -e
if [ ! -s "$xml" ]; then
  tail -n 20 "$log"
  echo "error: ctest wrote no record (exit $rc)" >&2
  exit 1
fi
python3 "$root/scripts/ctest_summary.py" "$xml" --label "ctest${LADDER_DEVICE_PROFILE:+ (profile $LADDER_DEVICE_PROFILE)}"
