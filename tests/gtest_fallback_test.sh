#!/usr/bin/env bash
# The GoogleTest fallback path configures: a fresh build directory with the installed package
# ignored (-DLADDER_GTEST_FROM_SOURCE=ON) must find the system source tree and configure without
# error. Skipped (77) where the machine has no source tree, since the fallback would then download.
#   tests/gtest_fallback_test.sh SOURCE_DIR GTEST_SOURCE_DIR
set -uo pipefail
src=$1
gtest_src=${2:-/usr/src/googletest}
[ -f "$gtest_src/CMakeLists.txt" ] || { echo "no GoogleTest source tree at $gtest_src: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=$(cmake -S "$src" -B "$tmp" -DLADDER_GTEST_FROM_SOURCE=ON -DLADDER_GTEST_SOURCE_DIR="$gtest_src" \
        -DLADDER_FOLDERS=vector_add -DCMAKE_CUDA_ARCHITECTURES=90 2>&1)
rc=$?
echo "$out" | grep -E "GoogleTest|Error|error" || true
[ $rc -eq 0 ] || { echo "$out" | tail -n 20; echo "configure failed (exit $rc)"; exit 1; }
echo "$out" | grep -q "GoogleTest: building from $gtest_src" || { echo "the fallback was not taken"; exit 1; }
# The aliases the tests link against exist: generate the build system for the test targets only.
grep -q "gtest_main" "$tmp/build.ninja" "$tmp/Makefile" 2>/dev/null || { echo "no gtest_main target"; exit 1; }
echo "fallback configured"
