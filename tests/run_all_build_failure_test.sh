#!/usr/bin/env bash
# scripts/run_all.sh must stop, non-zero, when the build fails — not run the stale binaries an
# earlier build left. A throwaway project whose one source does not compile, with a build directory
# that still lists a stale "step" (/bin/true, which would "pass").
#   tests/run_all_build_failure_test.sh PROJECT_ROOT
set -uo pipefail
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/project/scripts" "$tmp/build"
cp "$src/scripts/run_all.sh" "$src/scripts/report.py" "$tmp/project/scripts/"
cat >"$tmp/project/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.24)
project(broken LANGUAGES CXX)
add_executable(broken broken.cpp)
CMAKE
echo 'int main() { return this does not compile; }' >"$tmp/project/broken.cpp"
echo "vector_add/04_grid_stride=/bin/true" >"$tmp/build/ladder_steps.txt"
out=$(BUILD_DIR="$tmp/build" RESULTS_DIR="$tmp/results" bash "$tmp/project/scripts/run_all.sh" 2>&1)
rc=$?
echo "$out" | tail -n 5
[ $rc -ne 0 ] || { echo "FAIL: run_all.sh exited 0 after a failed build"; exit 1; }
echo "$out" | grep -q "the build failed" || { echo "FAIL: no build failure message"; exit 1; }
! echo "$out" | grep -q "04_grid_stride" || { echo "FAIL: it ran a stale binary"; exit 1; }
[ ! -d "$tmp/results" ] || { echo "FAIL: it wrote results"; exit 1; }
echo "run_all.sh stopped at the failed build (exit $rc)"
