#!/usr/bin/env bash
# Configure, build every step and test, run ctest. Non-zero on any failure.
#   scripts/test.sh                 all tests (GPU tests skip where there is no CUDA device)
#   scripts/test.sh -L cpu          ctest arguments pass through
# Environment: BUILD_DIR (default build/), JOBS (build parallelism, default nproc),
#              CTEST_JOBS (default 4), CMAKE_ARGS (extra configure flags).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
jobs=${JOBS:-$(nproc)}
# shellcheck disable=SC2086
cmake -S "$root" -B "$build" ${CMAKE_ARGS:-}
cmake --build "$build" -j "$jobs"
cd "$build"
ctest --output-on-failure -j "${CTEST_JOBS:-4}" "$@"
