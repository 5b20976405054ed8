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
# CTEST_JOBS (default nproc, shared among the devices; OMP_NUM_THREADS defaults to nproc / CTEST_JOBS,
# at least 1, for the tests' CPU references), AS_GPU_TIMEOUT (seconds per profile; a
# stopped run is summarized from what finished and counts as a failure), AS_GPU_DEVICES (e.g.
# "0 1": run that many profiles at once, each on its own GPU via CUDA_VISIBLE_DEVICES and in its own
# copy of the build's test tree, build/as_gpu/<profile>; on a two-H100 machine two profiles at once
# ran about as many tests a second together as one alone: the limit is shared by the GPUs; a single
# device, "0", also runs in a copy, leaving build/ to another ctest meanwhile). Exit
# status non-zero if any test failed under any profile.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
all="v100 t4 a100 rtx3060 l4 rtx4090 rtx5090"

profiles=()
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --help|-h) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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

# One profile's suite in test tree `dir` (the build itself, or a copy of its CTestTestfile tree: every
# test names its programs by absolute path), on CUDA device `dev` ("" = as visible); its summary
# goes to dir/Testing/as_<profile>.summary.
run_profile() {
  local p=$1 dev=$2 dir=$3 jobs=$4
  local xml="$dir/Testing/as_$p.xml" summary="$dir/Testing/as_$p.summary"
  mkdir -p "$dir/Testing"
  rm -f "$xml" "$summary"
  # `env` first: an assignment after an expansion (an empty ${dev:+...}) would be taken for a command.
  (cd "$dir" && env ${dev:+CUDA_VISIBLE_DEVICES=$dev} LADDER_DEVICE_PROFILE=$p ${AS_GPU_TIMEOUT:+timeout $AS_GPU_TIMEOUT} \
      ctest -LE large -j "$jobs" --output-junit "$xml" "${extra[@]}") >"$dir/Testing/as_$p.log" 2>&1
  local rc=$? partial
  partial=$(ls -t "$dir"/Testing/Temporary/LastTest*.log* 2>/dev/null | head -n 1)
  if [ -s "$xml" ]; then
    python3 "$root/scripts/ctest_summary.py" "$xml" --label "$p" >"$summary"
  elif [ "$rc" -eq 124 ] && [ -n "$partial" ]; then  # stopped (AS_GPU_TIMEOUT): what finished, from
    # ctest's running log (LastTest.log.tmp until ctest ends and renames it)
    cp "$partial" "$dir/Testing/as_$p.partial.log"
    python3 "$root/scripts/ctest_summary.py" "$dir/Testing/as_$p.partial.log" --label "$p (stopped before the end)" >"$summary"
    echo "  (stopped by AS_GPU_TIMEOUT=$AS_GPU_TIMEOUT: counts as a failure)" >>"$summary"
  else  # ctest ran no test (bad arguments, no test tree): its own words, a failure
    { echo "$p: ctest ran no test (exit $rc); $dir/Testing/as_$p.log ends:"; tail -n 5 "$dir/Testing/as_$p.log"; } >"$summary"
  fi
}

# A copy of the build's test tree (the CTestTestfile.cmake files and the gtest lists they include,
# times kept so that nothing is rediscovered) where a second ctest can run beside the first, with the
# build's record of each test's last duration (Testing/Temporary/CTestCostData.txt, where a run left
# one), from which ctest -j starts the longest tests first.
test_tree_copy() {
  local dir="$build/as_gpu/$1"
  rm -rf "$dir" && mkdir -p "$dir"
  (cd "$build" && find . -path ./as_gpu -prune -o \( -name CTestTestfile.cmake -o -name '*_include.cmake' \
       -o -name '*_tests.cmake' \) -print0 | xargs -0 cp --parents -p -t "$dir")
  if [ -f "$build/Testing/Temporary/CTestCostData.txt" ]; then
    mkdir -p "$dir/Testing/Temporary" && cp "$build/Testing/Temporary/CTestCostData.txt" "$dir/Testing/Temporary/"
  fi
  echo "$dir"
}

# While the suite runs, one idle process per GPU keeps a CUDA context open, so that the driver's
# per-GPU state stays up between the thousands of short test processes instead of being rebuilt when
# the last one exits (a GPU without persistence mode). Python's ctypes and the driver library only;
# where either is missing the suite runs without it.
holders=()
hold_gpu() {
  ${1:+env CUDA_VISIBLE_DEVICES=$1} python3 -c '
import ctypes, sys, time
cuda = ctypes.CDLL("libcuda.so.1")
dev, ctx = ctypes.c_int(), ctypes.c_void_p()
if cuda.cuInit(0) or cuda.cuDeviceGet(ctypes.byref(dev), 0) or cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev):
    sys.exit(0)
time.sleep(86400)' >/dev/null 2>&1 &
  holders+=($!)
}
trap '[ ${#holders[@]} -eq 0 ] || kill "${holders[@]}" 2>/dev/null' EXIT

read -ra devices <<<"${AS_GPU_DEVICES:-}"
jobs=${CTEST_JOBS:-$(nproc)}
# The CPU references run OpenMP teams of nproc threads by default: with `jobs` test processes at once
# that is jobs x nproc threads on nproc cores, most of them waiting on each other. A fair share each
# instead (an H100 host, 16 cores, -j16: the t4 profile's 1,994 tests in 284 s, against about 400 s
# with the default teams at -j24). OMP_NUM_THREADS set by the caller wins.
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(( $(nproc) / jobs > 0 ? $(nproc) / jobs : 1 ))}
if [ ${#devices[@]} -eq 0 ]; then hold_gpu ""; else for d in "${devices[@]}"; do hold_gpu "$d"; done; fi
summaries=()  # in the order of the profiles
if [ ${#devices[@]} -eq 0 ]; then
  for p in "${profiles[@]}"; do
    run_profile "$p" "" "$build" "$jobs"
    summaries+=("$build/Testing/as_$p.summary")
    cat "${summaries[-1]}"
  done
else
  per=$(( jobs / ${#devices[@]} > 0 ? jobs / ${#devices[@]} : 1 ))
  for ((i = 0; i < ${#profiles[@]}; i += ${#devices[@]})); do
    batch=() runs=()
    for ((d = 0; d < ${#devices[@]} && i + d < ${#profiles[@]}; ++d)); do
      p=${profiles[i + d]}
      dir=$(test_tree_copy "$p")
      batch+=("$dir/Testing/as_$p.summary")
      run_profile "$p" "${devices[d]}" "$dir" "$per" &
      runs+=($!)
    done
    wait "${runs[@]}"  # these runs, not the context holders
    for s in "${batch[@]}"; do cat "$s"; done
    summaries+=("${batch[@]}")
  done
fi
failed=0
for s in "${summaries[@]}"; do
  grep -qE "^[^ ].*: [0-9]+ tests: .* [1-9][0-9]* failed|stopped before the end|ctest ran no test" "$s" && failed=1
done
exit $failed
